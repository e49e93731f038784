import Foundation
import GRDB
import GRDBSQLite

/// A private scratch database (a file next to the store, never shared, no journal) where an
/// index's entries are collected and sorted, so that they reach the store in key order.
///
/// Inserting entries into a b-tree in the order of the table's rows scatters them over the
/// whole index: every batch of a few thousand rows rewrites thousands of index pages (1M rows
/// into two such indexes in batches of 2,000: 30x slower than without them). Collected here,
/// sorted in one statement that holds no lock on the store, and appended to the store in key
/// order, each batch writes only the pages it fills.
///
/// The buffer reads the store through an attachment of its own connection (a reader: it
/// never writes the store); the store's writer attaches the buffer to append from it. Every
/// step is one SQL statement: no row passes through Swift.
///
/// The buffer lives as long as the store object (a paused build keeps it); a crash or a close
/// loses it and the build collects again.
final class IndexSortBuffer: Sendable {
    /// One key column: its name in the table, declared type, order.
    struct Key: Sendable {
        var column: String
        var type: String
        var descending: Bool
    }

    let path: String
    let keys: [Key]
    private let queue: DatabaseQueue
    /// The schema name under which the store's writer attaches the buffer.
    static let attachment = "strata_sort"
    /// The buffer's page cache (KiB, negative) while collecting and appending.
    static let cacheSize = -16384
    /// The page cache while sorting: it sets the size of the sorter's runs, each sorted and
    /// written in one step that no interrupt can stop (see ``sort(shouldContinue:interruptRequested:)``).
    static let sortCacheSize = -1024

    init(path: String, storePath: String, keys: [Key]) throws {
        self.path = path
        self.keys = keys
        Self.remove(path)
        var configuration = Configuration()
        configuration.label = "strata.sort"
        configuration.prepareDatabase { db in
            // Before the store is attached: journal_mode without a schema name would change
            // every attached database's.
            try db.execute(sql: "PRAGMA main.journal_mode = OFF")
            try db.execute(sql: "PRAGMA main.synchronous = OFF")
            try db.execute(sql: "PRAGMA main.cache_size = \(Self.cacheSize)")
            try db.execute(sql: "PRAGMA temp_store = FILE")
        }
        queue = try DatabaseQueue(path: path, configuration: configuration)
        let columns = keys.indices.map { "\"k\($0)\" \(keys[$0].type)" }
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TABLE main.raw (\(columns.joined(separator: ", ")), \"rid\" INTEGER)")
            try db.execute(sql: "ATTACH DATABASE ? AS store", arguments: [storePath])
        }
    }

    deinit { close() }

    private var keyColumns: String { (keys.indices.map { "\"k\($0)\"" } + ["\"rid\""]).joined(separator: ", ") }

    /// Collects the entries of `table`'s rows with rowid after `after`, up to `size` rows (a
    /// read of the store, no lock held but its snapshot). Returns the last rowid read (nil when
    /// the table is done) and whether one of the entries has a NULL key.
    func collect(from table: String, after: Int64?, size: Int) throws -> (upper: Int64?, sawNull: Bool) {
        let t = "store.\(quoteIdentifier(table))"
        let values = (keys.map { quoteIdentifier($0.column) } + ["rowid"]).joined(separator: ", ")
        let nullKey = keys.indices.map { "\"k\($0)\" IS NULL" }.joined(separator: " OR ")
        return try queue.writeWithoutTransaction { db in
            let last = after ?? Int64.min
            let upper = try Int64.fetchOne(db, sql: "SELECT rowid FROM \(t) WHERE rowid > ? ORDER BY rowid LIMIT 1 OFFSET ?", arguments: [last, max(0, size - 1)])
            let end = try Int64.fetchOne(db, sql: "SELECT coalesce(max(rowid), 0) FROM main.raw") ?? 0
            try db.execute(sql: "INSERT INTO main.raw (\(keyColumns)) SELECT \(values) FROM \(t) WHERE rowid > ?\(upper == nil ? "" : " AND rowid <= ?")",
                           arguments: upper == nil ? [last] : [last, upper])
            let sawNull = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM main.raw WHERE rowid > ? AND (\(nullKey)))", arguments: [end]) ?? false
            return (upper, sawNull)
        }
    }

    /// Whether ``sort(shouldContinue:)`` completed.
    var isSorted: Bool { (try? queue.read { db in try Bool.fetchOne(db, sql: "SELECT count(*) > 0 FROM main.sqlite_master WHERE name = 'sorted'") ?? false }) ?? false }

    /// Sorts the entries in index order into `sorted` (rowid = position), in one statement
    /// that `shouldContinue` can stop (checked every few milliseconds; false interrupts the
    /// sort, which then starts over). Returns whether it completed.
    func sort(shouldContinue: @escaping () -> Bool, interruptRequested: @escaping () -> Bool = { false }) throws -> Bool {
        let order = (keys.enumerated().map { i, key in "\"k\(i)\"\(key.descending ? " DESC" : "")" } + ["\"rid\""]).joined(separator: ", ")
        let box = Unmanaged.passRetained(ContinueBox(shouldContinue, interruptRequested))
        defer { box.release() }
        do {
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "DROP TABLE IF EXISTS main.sorted")
                sqlite3_progress_handler(db.sqliteConnection, 4_000, { context in
                    guard let context else { return 0 }
                    return Unmanaged<ContinueBox>.fromOpaque(context).takeUnretainedValue().check() ? 0 : 1
                }, box.toOpaque())
                // SQLite's sorter sorts and writes a run of `cache_size` worth of records inside one
                // instruction, which the progress handler cannot stop: with the 16 MB cache that
                // was up to 520 ms (a pause of 500 ms at 4M rows); with 1 MB, at most 57–81 ms,
                // and the whole sort of 4M entries no slower (2.5–3.8 s against 4.3–5.2 s).
                try db.execute(sql: "PRAGMA main.cache_size = \(Self.sortCacheSize)")
                defer {
                    sqlite3_progress_handler(db.sqliteConnection, 0, nil, nil)
                    try? db.execute(sql: "PRAGMA main.cache_size = \(Self.cacheSize)")
                }
                try db.execute(sql: "CREATE TABLE main.sorted AS SELECT \(keyColumns) FROM main.raw ORDER BY \(order)")
            }
            return true
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
            try? queue.writeWithoutTransaction { db in try db.execute(sql: "DROP TABLE IF EXISTS main.sorted") }
            return false
        }
    }

    /// The last sorted position (0 when empty).
    func sortedCount() throws -> Int64 {
        try queue.read { db in try Int64.fetchOne(db, sql: "SELECT coalesce(max(rowid), 0) FROM main.sorted") ?? 0 }
    }

    /// `INSERT` appending the sorted entries at positions in (?, ?] to `container` on the
    /// store's writer (which has attached the buffer as ``attachment``), skipping the rowids
    /// in `changes`.
    func appendSQL(container: String, changes: String) -> String {
        let names = (keys.indices.map { "\"k\($0)\"" } + ["\"rowid_\""]).joined(separator: ", ")
        return """
            INSERT INTO main.\(quoteIdentifier(container)) (\(names)) SELECT \(keyColumns) FROM \(Self.attachment).sorted
            WHERE rowid > ? AND rowid <= ? AND "rid" NOT IN (SELECT "rid" FROM main.\(quoteIdentifier(changes))) ORDER BY rowid ON CONFLICT DO NOTHING
            """
    }

    func close() {
        try? queue.close()
        Self.remove(path)
    }

    private static func remove(_ path: String) {
        for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// For the progress handler: `interruptRequested` at most every millisecond,
    /// `shouldContinue` (which may sleep a cost delay) at most every 5 ms.
    private final class ContinueBox {
        let shouldContinue: () -> Bool
        let interruptRequested: () -> Bool
        var last = ContinuousClock.now
        var lastQuick = ContinuousClock.now
        init(_ shouldContinue: @escaping () -> Bool, _ interruptRequested: @escaping () -> Bool) {
            self.shouldContinue = shouldContinue
            self.interruptRequested = interruptRequested
        }
        func check() -> Bool {
            let now = ContinuousClock.now
            if now - lastQuick >= .milliseconds(1) {
                lastQuick = now
                if interruptRequested() { return false }
            }
            guard now - last >= .milliseconds(5) else { return true }
            last = now
            return shouldContinue()
        }
    }
}
