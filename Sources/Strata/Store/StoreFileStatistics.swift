import Foundation

/// The file-level figures of a store: sizes of the main file and the WAL, SQLite's page
/// geometry and its journal and auto-vacuum modes (``PersistentStore/fileStatistics()``).
public struct StoreFileStatistics: Sendable, Hashable, Codable {
    /// Bytes of the main database file.
    public var bytes: Int
    /// Bytes of the write-ahead log (0 when there is none).
    public var walBytes: Int
    /// `PRAGMA page_size`.
    public var pageSize: Int
    /// `PRAGMA page_count`.
    public var pageCount: Int
    /// `PRAGMA freelist_count`: pages a `VACUUM` would give back.
    public var freelistCount: Int
    /// `PRAGMA journal_mode` (`wal` for a store opened read-write).
    public var journalMode: String
    /// `PRAGMA auto_vacuum` by name: `none`, `full` or `incremental`.
    public var autoVacuum: String

    /// Creates the statistics from their parts.
    public init(bytes: Int, walBytes: Int, pageSize: Int, pageCount: Int, freelistCount: Int, journalMode: String, autoVacuum: String) {
        (self.bytes, self.walBytes, self.pageSize, self.pageCount) = (bytes, walBytes, pageSize, pageCount)
        (self.freelistCount, self.journalMode, self.autoVacuum) = (freelistCount, journalMode, autoVacuum)
    }
}
