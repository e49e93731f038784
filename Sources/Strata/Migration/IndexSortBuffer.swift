import Foundation
import GRDB
import GRDBSQLite

/// A private scratch database (a file next to the store, never shared, no journal) where an
/// index's entries are collected and sorted, so that they reach the store in key order.
///
/// Inserting entries into a b-tree in the order of the table's rows scatters them over the
/// whole index: every batch of a few thousand rows rewrites thousands of index pages (1M rows
/// into two such indexes: 30x slower than without them). Collected here, sorted in one
/// statement that holds no lock on the store, and appended to the store in key order, each
/// batch writes only the pages it fills.
///
/// The buffer lives as long as the store object (a paused build keeps it); a crash or a close
/// loses it and the build collects again.
final class IndexSortBuffer: Sendable {
    /// One key column: declared type, collation, order.
    struct Key: Sendable {
        var type: String
        var collation: String
        var descending: Bool
    }

    let path: String
    let keys: [Key]
    private let queue: DatabaseQueue

    /// Entries collected so far.
    var count: Int { (try? queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM raw") }) ?? 0 }

    init(path: String, keys: [Key]) throws {
        self.path = path
        self.keys = keys
        Self.remove(path)
        var configuration = Configuration()
        configuration.label = "strata.sort"
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = OFF")
            try db.execute(sql: "PRAGMA synchronous = OFF")
            try db.execute(sql: "PRAGMA cache_size = -16384")
            try db.execute(sql: "PRAGMA temp_store = FILE")
        }
        queue = try DatabaseQueue(path: path, configuration: configuration)
        let columns = keys.enumerated().map { i, key in
            "\"k\(i)\" \(key.type)\(key.collation.uppercased() == "BINARY" ? "" : " COLLATE \(key.collation)")"
        }
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TABLE raw (\(columns.joined(separator: ", ")), \"rid\" INTEGER)")
        }
    }

    deinit { close() }

    /// Appends entries: key values then the rowid.
    func append(_ rows: [[DatabaseValue]]) throws {
        guard !rows.isEmpty else { return }
        let placeholders = Array(repeating: "?", count: keys.count + 1).joined(separator: ", ")
        try queue.write { db in
            let statement = try db.cachedStatement(sql: "INSERT INTO raw VALUES (\(placeholders))")
            for row in rows { try statement.execute(arguments: StatementArguments(row)) }
        }
    }

    /// Whether ``sort(shouldContinue:)`` completed.
    var isSorted: Bool { (try? queue.read { db in try db.tableExists("sorted") }) ?? false }

    /// Sorts the entries in index order into `sorted` (rowid = position), in one statement
    /// that `shouldContinue` can stop (checked every few milliseconds; false interrupts the
    /// sort, which then starts over). Returns whether it completed.
    func sort(shouldContinue: @escaping () -> Bool) throws -> Bool {
        let order = (keys.enumerated().map { i, key in "\"k\(i)\"\(key.descending ? " DESC" : "")" } + ["\"rid\""]).joined(separator: ", ")
        let columns = (keys.indices.map { "\"k\($0)\"" } + ["\"rid\""]).joined(separator: ", ")
        let box = Unmanaged.passRetained(ContinueBox(shouldContinue))
        defer { box.release() }
        do {
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "DROP TABLE IF EXISTS sorted")
                sqlite3_progress_handler(db.sqliteConnection, 20_000, { context in
                    guard let context else { return 0 }
                    return Unmanaged<ContinueBox>.fromOpaque(context).takeUnretainedValue().check() ? 0 : 1
                }, box.toOpaque())
                defer { sqlite3_progress_handler(db.sqliteConnection, 0, nil, nil) }
                try db.execute(sql: "CREATE TABLE sorted AS SELECT \(columns) FROM raw ORDER BY \(order)")
            }
            return true
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
            try? queue.writeWithoutTransaction { db in try db.execute(sql: "DROP TABLE IF EXISTS sorted") }
            return false
        }
    }

    /// Up to `n` sorted entries after position `after` (0: the first), with their positions.
    func next(_ n: Int, after: Int64) throws -> [(position: Int64, values: [DatabaseValue])] {
        let columns = (keys.indices.map { "\"k\($0)\"" } + ["\"rid\""]).joined(separator: ", ")
        return try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT rowid, \(columns) FROM sorted WHERE rowid > ? ORDER BY rowid LIMIT ?", arguments: [after, n]).map { row in
                (row[0] as Int64, (1...keys.count + 1).map { row[$0] as DatabaseValue })
            }
        }
    }

    func close() {
        try? queue.close()
        Self.remove(path)
    }

    private static func remove(_ path: String) {
        for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// `shouldContinue` for the progress handler, called at most every 5 ms.
    private final class ContinueBox {
        let shouldContinue: () -> Bool
        var last = ContinuousClock.now
        init(_ shouldContinue: @escaping () -> Bool) { self.shouldContinue = shouldContinue }
        func check() -> Bool {
            let now = ContinuousClock.now
            guard now - last >= .milliseconds(5) else { return true }
            last = now
            return shouldContinue()
        }
    }
}
