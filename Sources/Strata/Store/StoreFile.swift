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

    /// Inspects the file at `path`: its header and, when no WAL could be replaying, its length.
    static func check(_ path: String) throws(StoreError) -> State {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return .missing }
        if isDirectory.boolValue {
            throw StoreError(.notSQLite, path: path, "the path is a directory, not a store file; give the path of the .sqlite file")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw StoreError(.readOnly, path: path, "the file cannot be read (permission denied); fix its permissions")
        }
        defer { try? handle.close() }
        let size = Int((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0)
        if size == 0 { return .empty }
        let bytes = [UInt8](handle.readData(ofLength: 100))
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
        let walSize = (try? FileManager.default.attributesOfItem(atPath: walPath)[.size] as? NSNumber)?.intValue ?? 0
        if headerValid && walSize == 0 && size < pageCount * pageSize {
            throw StoreError(.truncated, path: path, "the file is \(size) bytes but its header describes \(pageCount) pages of \(pageSize) bytes (\(pageCount * pageSize) bytes); it was cut off — restore it from a backup", offset: size)
        }
        return .database(size: size)
    }
}
