import Foundation

/// Checks on a store file made before SQLite touches it, so that a foreign, truncated or
/// missing file is refused with a precise error and never modified.
enum StoreFile {
    static let header = Array("SQLite format 3\u{0}".utf8)

    enum State {
        case missing
        case empty
        case database(size: Int)
    }

    /// The files SQLite opens next to a store.
    static let companionSuffixes = ["-wal", "-shm", "-journal"]

    /// Inspects the file at `path`: its header and, when no WAL could be replaying, its length.
    ///
    /// A FIFO, socket or device — as the store or as its `-wal`, `-shm` or `-journal` file — is
    /// refused (``StoreError/Code/notRegularFile``) before anything opens it: opening a FIFO
    /// blocks until a writer comes, which would hang every command on the store.
    static func check(_ path: String) throws(StoreError) -> State {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            try checkCompanions(of: path)
            return .missing
        }
        if isDirectory.boolValue {
            throw StoreError(.notSQLite, path: path, "the path is a directory, not a store file; give the path of the .sqlite file")
        }
        if let kind = InputFile.nonRegularKind(path) {
            throw StoreError(.notRegularFile, path: path, "the path is \(kind), not a store file; give the path of the .sqlite file")
        }
        try checkCompanions(of: path)
        // O_NONBLOCK: should the file be swapped for a FIFO after the check, opening it still returns.
        // A descriptor that stays open (``StoreFileDescriptors``): this process may have the
        // store open already, and closing a descriptor of it would release its SQLite locks.
        defer { StoreFileDescriptors.releaseIfUnheld(path) }
        guard StoreFileDescriptors.descriptor(path) != nil else {
            throw StoreError(.readOnly, path: path, "the file cannot be read (\(String(cString: strerror(errno)))); fix its permissions")
        }
        let size = PersistentStore.fileSize(path)
        if size == 0 { return .empty }
        let bytes = StoreFileDescriptors.read(path, offset: 0, count: 100) ?? []
        let prefix = Array(bytes.prefix(header.count))
        if prefix != Array(header.prefix(prefix.count)) || bytes.count < header.count {
            let at = prefix.indices.first { prefix[$0] != header[$0] } ?? prefix.count
            throw StoreError(.notSQLite, path: path, "the file is not an SQLite database: its header does not start with \"SQLite format 3\"; check the path (is this the right file?)", offset: at)
        }
        guard bytes.count == 100 else {
            throw StoreError(.truncated, path: path, "the file is \(size) bytes, shorter than the 100-byte SQLite header; it was cut off — restore it from a backup", offset: size)
        }
        func u32(_ at: Int) -> UInt32 { bytes[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        let rawPageSize = Int(bytes[16]) << 8 | Int(bytes[17])
        let pageSize = rawPageSize == 1 ? 65536 : rawPageSize
        guard pageSize >= 512, pageSize & (pageSize - 1) == 0 else {
            throw StoreError(.corrupt, path: path, "the header's page size \(rawPageSize) is invalid; the file is damaged — restore it from a backup", offset: 16)
        }
        let pageCount = Int(u32(28))
        let headerValid = pageCount > 0 && u32(92) == u32(24)
        let walPath = path + "-wal"
        let walSize = PersistentStore.fileSize(walPath)
        if headerValid && walSize == 0 && size < pageCount * pageSize {
            throw StoreError(.truncated, path: path, "the file is \(size) bytes but its header describes \(pageCount) pages of \(pageSize) bytes (\(pageCount * pageSize) bytes); it was cut off — restore it from a backup", offset: size)
        }
        return .database(size: size)
    }

    /// Creates an empty file at `path` with `mode` (narrowed by the umask) unless something
    /// already exists there, so that SQLite — which creates files `0644` — opens a file with
    /// the permissions Strata chose (and gives its `-wal` and `-shm` files the same).
    static func createEmptyFile(atPath path: String, mode: mode_t) throws(StoreError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        if fd >= 0 {
            close(fd)
            return
        }
        let code = errno
        guard code == EEXIST else {
            throw StoreError(.readOnly, path: path, "cannot create \(path): \(String(cString: strerror(code))); check the directory's permissions or choose another path")
        }
    }

    /// Refuses a `-wal`, `-shm` or `-journal` file that is not a regular file.
    static func checkCompanions(of path: String) throws(StoreError) {
        for suffix in companionSuffixes {
            if let kind = InputFile.nonRegularKind(path + suffix) {
                throw StoreError(.notRegularFile, path: path, "the store's \(suffix) file \(path + suffix) is \(kind), not a regular file; SQLite would block or fail on it — remove it, or check the path")
            }
        }
    }
}
