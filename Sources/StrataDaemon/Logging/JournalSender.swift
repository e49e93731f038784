import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// Sends structured entries to journald's native socket with `sd_journal_sendv(3)`.
enum JournalSender {
    /// Sends one entry; returns 0, or a negative errno when the journal cannot take it (no
    /// journald socket, a full socket buffer…): the caller then falls back to text.
    static func send(_ fields: JournalFields) -> Int32 {
        let assignments = fields.assignments
        // One buffer holds every `NAME=value`; the iovecs point into it while it is pinned.
        var storage: [UInt8] = []
        storage.reserveCapacity(assignments.reduce(0) { $0 + $1.utf8.count })
        var spans: [(offset: Int, count: Int)] = []
        spans.reserveCapacity(assignments.count)
        for assignment in assignments {
            let offset = storage.count
            storage.append(contentsOf: assignment.utf8)
            spans.append((offset, storage.count - offset))
        }
        return storage.withUnsafeMutableBytes { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -EINVAL }
            var vectors = spans.map { iovec(iov_base: base + $0.offset, iov_len: $0.count) }
            return sd_journal_sendv(&vectors, Int32(vectors.count))
        }
    }
}
