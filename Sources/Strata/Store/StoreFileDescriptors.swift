import Foundation
import Synchronization

/// Read-only descriptors on a store's files (the store, its `-wal`, its `-shm`) for the
/// reads Strata makes beside SQLite (the WAL index's header, the online backup's pages, the
/// store file's header), kept open while this process may hold SQLite locks on them.
///
/// POSIX advisory locks belong to a process and a file, not to a descriptor: closing *any*
/// descriptor of a file releases every lock the process holds on it — SQLite's included
/// ("How To Corrupt An SQLite Database File", section 2.2). Opening the `-shm` to read its
/// header and closing it again released the process's lock on the index's "dead man switch"
/// byte: the next process to open the store (`stratactl`, the sqlite3 CLI, Litestream
/// restarting) then took itself for the first, truncated and rebuilt the WAL index under
/// stratad's mapping of it, and stratad died of `SIGBUS` in SQLite (seen at 4M rows, with a
/// sqlite3 CLI reading the store during a finishing run). Closing a descriptor of the store
/// file likewise released the locks that keep other processes from writing or checkpointing.
///
/// So these descriptors are opened once per file and closed only when no store object of
/// this process has the store open (``retain(_:)`` / ``release(_:)`` by
/// ``PersistentStore``), or never, for files of stores this process did not open through a
/// `PersistentStore`. A file replaced under the same path (another inode) gets a new
/// descriptor; the old one is closed with the rest.
package enum StoreFileDescriptors {
    private struct Entry {
        var fd: Int32
        var device: UInt64
        var inode: UInt64
    }

    private struct State {
        var open: [String: Entry] = [:]
        var replaced: [String: [Int32]] = [:]
        var holders: [String: Int] = [:]
    }

    private static let state = Mutex(State())

    private static func files(of storePath: String) -> [String] {
        [storePath, storePath + "-wal", storePath + "-shm"]
    }

    /// A descriptor open for reading on `path` (never to be closed by the caller); nil when
    /// the file is missing or cannot be opened. `O_NONBLOCK`: a FIFO swapped in after a check
    /// does not block the open.
    package static func descriptor(_ path: String) -> Int32? {
        state.withLock { state in
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            let device = UInt64(info.st_dev), inode = UInt64(info.st_ino)
            if let entry = state.open[path], entry.device == device, entry.inode == inode { return entry.fd }
            let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { return nil }
            if let old = state.open[path] { state.replaced[path, default: []].append(old.fd) }
            state.open[path] = Entry(fd: fd, device: device, inode: inode)
            return fd
        }
    }

    /// Up to `count` bytes of `path` from `offset` (fewer at its end); nil when it cannot be read.
    package static func read(_ path: String, offset: Int, count: Int) -> [UInt8]? {
        guard let fd = descriptor(path) else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
        guard n >= 0 else { return nil }
        bytes.removeLast(count - n)
        return bytes
    }

    /// A store object of this process opened the store at `storePath`.
    package static func retain(_ storePath: String) {
        state.withLock { $0.holders[storePath, default: 0] += 1 }
    }

    /// Closes the descriptors of `storePath` and its companions unless a store object of this
    /// process holds the store (a check of a file before it is opened, or of one that is not).
    package static func releaseIfUnheld(_ storePath: String) {
        let descriptors: [Int32] = state.withLock { state in
            state.holders[storePath] == nil ? closing(storePath, in: &state) : []
        }
        for fd in descriptors { Foundation.close(fd) }
    }

    private static func closing(_ storePath: String, in state: inout State) -> [Int32] {
        state.holders[storePath] = nil
        var descriptors: [Int32] = []
        for file in files(of: storePath) {
            if let entry = state.open.removeValue(forKey: file) { descriptors.append(entry.fd) }
            descriptors += state.replaced.removeValue(forKey: file) ?? []
        }
        return descriptors
    }

    /// A store object closed its connections: once none holds the store, its files'
    /// descriptors close (no SQLite lock of this process is left on them then).
    package static func release(_ storePath: String) {
        let descriptors: [Int32] = state.withLock { state in
            let holders = (state.holders[storePath] ?? 1) - 1
            guard holders <= 0 else {
                state.holders[storePath] = holders
                return []
            }
            return closing(storePath, in: &state)
        }
        for fd in descriptors { Foundation.close(fd) }
    }
}
