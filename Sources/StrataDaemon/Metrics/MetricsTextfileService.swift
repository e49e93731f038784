import Foundation
import Logging
import ServiceLifecycle
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Writes the daemon's metrics to `metrics.textfile` every `metrics.interval`, for
/// node_exporter's textfile collector (the unit has no network, so nothing scrapes the
/// daemon): to a temporary file in the same directory (`.NAME.tmp`, which the collector
/// ignores), synced, then renamed over the file, so that a reader sees the old or the new
/// metrics, never a part. Writes once more when the daemon stops. A failed write is logged
/// (once until it succeeds again) and retried at the next interval.
final class MetricsTextfileService: Service, Sendable {
    enum State: Sendable, Hashable {
        case idle
        case writing(every: Duration)
        case stopped
    }

    let path: String
    let interval: Duration
    let exposition: @Sendable () async -> String
    let logger: Logger
    private let current = Mutex(State.idle)
    private let lastFailure = Mutex<String?>(nil)

    init(path: String, interval: Duration, logger: Logger, exposition: @escaping @Sendable () async -> String) {
        self.path = path
        self.interval = interval
        self.exposition = exposition
        self.logger = logger
    }

    var state: State { current.withLock { $0 } }

    func run() async {
        current.withLock { $0 = .writing(every: interval) }
        logger.info("writing metrics for node_exporter's textfile collector", metadata: [
            "strata.path": "\(path)", "strata.interval": "\(DurationText.format(interval))",
        ])
        await cancelWhenGracefulShutdown { [self] in
            while !Task.isCancelled {
                await writeOnce()
                do { try await Task.sleep(for: interval) } catch { return }
            }
        }
        await writeOnce()
        current.withLock { $0 = .stopped }
    }

    /// Writes the current metrics.
    func writeOnce() async {
        let text = await exposition()
        do {
            try Self.replace(path, with: Data(text.utf8))
            if lastFailure.withLock({ $0 }) != nil {
                logger.notice("metrics textfile written again", metadata: ["strata.path": "\(path)"])
                lastFailure.withLock { $0 = nil }
            }
        } catch {
            let reason = "\(error)"
            let repeated = lastFailure.withLock { last in
                defer { last = reason }
                return last == reason
            }
            if !repeated {
                logger.error("cannot write the metrics textfile; retrying every interval", metadata: ["strata.path": "\(path)", "strata.error": "\(reason)"])
            }
        }
    }

    /// Replaces `path` atomically with `data`: a temporary file next to it, `fsync`, `rename`.
    static func replace(_ path: String, with data: Data) throws {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp").path
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw TextfileError(path: temporary, operation: "create", errno: errno) }
        var failure: TextfileError?
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = TextfileError(path: temporary, operation: "write", errno: errno)
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(fd) != 0 { failure = TextfileError(path: temporary, operation: "fsync", errno: errno) }
        close(fd)
        if failure == nil, rename(temporary, path) != 0 { failure = TextfileError(path: path, operation: "rename onto", errno: errno) }
        if let failure {
            unlink(temporary)
            throw failure
        }
    }
}

/// A failed write of the metrics textfile: the file, the operation and the system's reason.
struct TextfileError: Error, CustomStringConvertible {
    var path: String
    var operation: String
    var errno: Int32

    var description: String { "cannot \(operation) \(path): \(String(cString: strerror(errno)))" }
}
