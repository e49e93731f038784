import Foundation
import GRDB
import GRDBSQLite

/// A private scratch database (a file next to the store, never shared) where an index's
/// entries are sorted in **runs**, so that they reach the store in key order.
///
/// Inserting entries into a b-tree in the order of the table's rows scatters them over the
/// whole index: every batch of a few thousand rows rewrites thousands of index pages (1M rows
/// into two such indexes in batches of 2,000: 30x slower than without them). Here the table's
/// rows are read in rowid ranges of ``runSize`` and each range is sorted into a table of its
/// own (`run_<n>`, rowid = position), in one statement that holds no lock on the store; the
/// finisher then merges the runs into the store in key order, a batch at a time
/// (``SortedRunMerge``), each batch writing only the pages it fills.
///
/// **Durable.** The buffer outlives a pause, a close and a crash: its runs are committed with
/// a rollback journal (appends are not journaled; a process crash cannot tear a run), the
/// ledger records how many runs exist and how far each was merged, and a reopened buffer
/// drops any run the ledger does not know (sorted after the ledger's last commit). A crash
/// loses at most the run being sorted (``runSize`` entries, about 0.1 s of work, up to 4.2M
/// rows; a 64th of the table beyond, about 0.4 s at 16M rows).
///
/// The buffer reads the store through an attachment of its own connection (a reader: it
/// never writes the store); the store's writer attaches the buffer to merge from it. Every
/// step is one SQL statement: no value written passes through Swift (the merge reads the runs'
/// keys only to choose each batch's entries).
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
    /// The buffer's page cache (KiB, negative) while collecting.
    static let cacheSize = -16384
    /// The page cache while sorting a run: it sets the size of the sorter's own spills, each
    /// sorted and written in one step that no interrupt can stop (1 MB: at most 57–81 ms at 4M
    /// rows; with 16 MB it was up to 520 ms).
    static let sortCacheSize = -1024
    /// Entries per run, at least: the unit of work of the sort (what a crash or an interrupt
    /// can lose: about 0.1 s of sorting, so that restarts a fraction of a second apart still
    /// progress). A larger table gets longer runs (``runSize(forRows:)``).
    static let runSize = 65_536
    /// The most runs a build sorts into: the merge keeps a read-ahead of every open run in
    /// memory and its append names each one, so their number bounds its memory and a batch's
    /// statement. (When each merge batch still sought its bound in every run, 245 runs of
    /// ``runSize`` at 16M rows stalled the build at about 360 entries a second.) 64 runs: 16 at
    /// 1M rows, 64 from 4.2M rows on (250,000 entries each at 16M).
    static let maxRuns = 64

    /// The run size for a table of about `rows` rows: ``runSize``, or longer so that the table
    /// fits in ``maxRuns`` runs.
    static func runSize(forRows rows: Int64) -> Int {
        max(runSize, Int((max(rows, 0) + Int64(maxRuns) - 1) / Int64(maxRuns)))
    }

    /// Opens the buffer of the build `identity` (its container's name) at `path`: the one
    /// left there by an earlier run of the same build, with its runs from `runs` on dropped
    /// (sorted after the ledger's last record), or a new empty one. ``isNew`` says which.
    init(path: String, storePath: String, keys: [Key], identity: String, runs: Int) throws {
        self.path = path
        self.keys = keys
        var configuration = Configuration()
        configuration.label = "strata.sort"
        // The store's writer reads the buffer (attached) while merging: the buffer's own
        // connection waits for that read to end instead of failing with SQLITE_BUSY.
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // Before the store is attached: journal_mode without a schema name would change
            // every attached database's. A rollback journal keeps a run whole through a
            // process crash; new pages (a run's) are not journaled. `NORMAL`: each run is
            // synced when it commits, before the ledger counts it, so that a power loss cannot
            // take a run the ledger knows (with `OFF` a reopened buffer could lack one, and the
            // merge would fail on it); it also keeps the buffer from piling up as dirty pages
            // (about 500 MB at 16M rows). One sync per run: 16 at 1M rows, 65 at 16M.
            try db.execute(sql: "PRAGMA main.journal_mode = TRUNCATE")
            try db.execute(sql: "PRAGMA main.synchronous = NORMAL")
            try db.execute(sql: "PRAGMA main.cache_size = \(Self.cacheSize)")
            try db.execute(sql: "PRAGMA temp_store = FILE")
        }
        let kept = FileManager.default.fileExists(atPath: path)
        var opened = try? DatabaseQueue(path: path, configuration: configuration)
        var reused = false
        if kept, let queue = opened {
            let owner = try? queue.read { db in try String.fetchOne(db, sql: "SELECT identity FROM main.meta") }
            reused = owner == identity
        }
        if !reused {
            try? opened?.close()
            Self.remove(path)
            opened = try DatabaseQueue(path: path, configuration: configuration)
        }
        queue = opened!
        isNew = !reused
        try queue.writeWithoutTransaction { db in
            if reused {
                for name in try String.fetchAll(db, sql: "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name LIKE 'run\\_%' ESCAPE '\\'")
                where (Int(name.dropFirst(4)) ?? Int.max) >= runs {
                    try db.execute(sql: "DROP TABLE main.\(quoteIdentifier(name))")
                }
            } else {
                try db.execute(sql: "CREATE TABLE main.meta (identity TEXT)")
                try db.execute(sql: "INSERT INTO main.meta VALUES (?)", arguments: [identity])
            }
            try db.execute(sql: "ATTACH DATABASE ? AS store", arguments: [storePath])
        }
    }

    /// Whether the buffer was created afresh (nothing kept from an earlier run of the build).
    let isNew: Bool

    deinit { try? queue.close() }

    private var keyColumns: String { (keys.indices.map { "\"k\($0)\"" } + ["\"rid\""]).joined(separator: ", ") }

    /// The `ORDER BY` of the index's entries over the buffer's columns.
    var order: String { (keys.enumerated().map { i, key in "\"k\(i)\"\(key.descending ? " DESC" : "")" } + ["\"rid\""]).joined(separator: ", ") }

    static func runTable(_ n: Int) -> String { "run_\(n)" }

    /// Sorts the entries of `table`'s next ``runSize`` rows (rowid after `after`) into run `n`,
    /// in one transaction of the buffer (a read of the store: no lock held but its snapshot).
    /// `shouldContinue` and `interruptRequested` can stop it (the run is dropped: nil).
    /// Returns the last rowid read (nil when the table is done) and whether a key is NULL.
    func sortRun(_ n: Int, from table: String, after: Int64?, size: Int = runSize,
                 shouldContinue: @escaping () -> Bool, interruptRequested: @escaping () -> Bool = { false }) throws -> (upper: Int64?, sawNull: Bool)? {
        let t = "store.\(quoteIdentifier(table))"
        let values = (keys.enumerated().map { "\(quoteIdentifier($1.column)) AS \"k\($0)\"" } + ["rowid AS \"rid\""]).joined(separator: ", ")
        let nullKey = keys.indices.map { "\"k\($0)\" IS NULL" }.joined(separator: " OR ")
        let run = "main.\(Self.runTable(n))"
        let box = Unmanaged.passRetained(ContinueBox(shouldContinue, interruptRequested))
        defer { box.release() }
        do {
            return try queue.writeWithoutTransaction { db in
                sqlite3_progress_handler(db.sqliteConnection, 4_000, { context in
                    guard let context else { return 0 }
                    return Unmanaged<ContinueBox>.fromOpaque(context).takeUnretainedValue().check() ? 0 : 1
                }, box.toOpaque())
                try db.execute(sql: "PRAGMA main.cache_size = \(Self.sortCacheSize)")
                defer {
                    sqlite3_progress_handler(db.sqliteConnection, 0, nil, nil)
                    try? db.execute(sql: "PRAGMA main.cache_size = \(Self.cacheSize)")
                }
                var result: (upper: Int64?, sawNull: Bool) = (nil, false)
                // DEFERRED, never IMMEDIATE: `BEGIN IMMEDIATE` takes the write lock of every
                // attached database, the store's included, and would hold it for the whole sort
                // of the run (60–80 ms at 1M rows: every client write waited behind it). A
                // deferred transaction reads the store in a snapshot and writes only the buffer.
                try db.inTransaction(.deferred) {
                    let last = after ?? Int64.min
                    let upper = try Int64.fetchOne(db, sql: "SELECT rowid FROM \(t) WHERE rowid > ? ORDER BY rowid LIMIT 1 OFFSET ?", arguments: [last, max(0, size - 1)])
                    try db.execute(sql: "DROP TABLE IF EXISTS \(run)")
                    try db.execute(sql: """
                        CREATE TABLE \(run) AS SELECT \(keyColumns) FROM (SELECT \(values) FROM \(t) WHERE rowid > ?\(upper == nil ? "" : " AND rowid <= ?")) ORDER BY \(order)
                        """, arguments: upper == nil ? [last] : [last, upper])
                    result = (upper, try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(run) WHERE \(nullKey))") ?? false)
                    return .commit
                }
                return result
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
            return nil
        }
    }

    /// The length of each run, in order.
    func runLengths(_ count: Int) throws -> [Int64] {
        try queue.read { db in
            try (0..<count).map { n in try Int64.fetchOne(db, sql: "SELECT coalesce(max(rowid), 0) FROM main.\(Self.runTable(n))") ?? 0 }
        }
    }

    /// Reads the buffer through its own connection (no lock on the store).
    /// Interrupts what runs on the buffer's connection now (`sqlite3_interrupt`, safe from any
    /// thread): the read-ahead a merge batch would otherwise wait for (``SortedRunMerge/Overlap``).
    func interrupt() { queue.interrupt() }

    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try queue.read(body)
    }

    /// Closes the buffer, keeping its file for the next run of the build.
    func close() {
        try? queue.close()
    }

    /// Closes the buffer and removes its file (the build is done or abandoned).
    func discard() {
        close()
        Self.remove(path)
    }

    static func remove(_ path: String) {
        for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// For the progress handler: `interruptRequested` at most every millisecond,
    /// `shouldContinue` at most every 5 ms.
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
