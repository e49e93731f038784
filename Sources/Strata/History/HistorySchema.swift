import Foundation
import GRDB

/// The change-history tables in the store's metadata (docs/History.md), next to
/// `_strata_metadata`, the migration log `_strata_history` and the ledger `_strata_deferred`.
///
/// - `_strata_transactions`: one row per committed save that changed objects (or per gap: a
///   write by another process that recorded nothing). `token` is `AUTOINCREMENT`, so tokens
///   only grow and are never reused, even after a purge.
/// - `_strata_object_changes`: one record per run of like object changes of a transaction
///   (same entity, kind and changed properties: ``HistoryObjectRun``; the run's other objects
///   packed in `more_objects`), keyed by `(token, seq)` (one B-tree, no extra index: reads and
///   purges seek by token). Entity and property
///   names are stored as ids into `_strata_change_names`, so that a migration that renames an
///   entity or property renames its whole history by updating one row per name, whatever the
///   history's size.
/// - `_strata_change_names`: `(entity, property)` per id; `property` is `''` for the entity itself.
enum HistorySchema {
    static let transactionsTable = "_strata_transactions"
    static let changesTable = "_strata_object_changes"
    static let namesTable = "_strata_change_names"
    /// The metadata key holding the highest purged token (`0` when nothing was purged).
    static let purgedThroughKey = "historyPurgedThrough"

    /// Every history table: Strata's own, never reported as foreign or scheduled for a drop.
    static let tables: [String] = [transactionsTable, changesTable, namesTable]

    static let creationSQL = [
        """
        CREATE TABLE IF NOT EXISTS \(transactionsTable) (token INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, \
        kind INTEGER NOT NULL DEFAULT 0, user TEXT, author TEXT)
        """,
        "CREATE INDEX IF NOT EXISTS \(transactionsTable)_at ON \(transactionsTable)(at)",
        """
        CREATE TABLE IF NOT EXISTS \(changesTable) (token INTEGER NOT NULL, seq INTEGER NOT NULL, entity INTEGER NOT NULL, \
        object INTEGER NOT NULL, kind INTEGER NOT NULL, properties TEXT NOT NULL DEFAULT '', tombstone TEXT, \
        more_objects BLOB, PRIMARY KEY (token, seq)) WITHOUT ROWID
        """,
        "CREATE TABLE IF NOT EXISTS \(namesTable) (id INTEGER PRIMARY KEY, entity TEXT NOT NULL, property TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS \(namesTable)_name ON \(namesTable)(entity, property)",
    ]

    /// Creates the tables when they are missing (stores created before history existed), and
    /// adds `more_objects` to a changes table written before runs existed (an O(1) schema edit;
    /// its records read as runs of one).
    static func create(in db: Database) throws {
        for sql in creationSQL { try db.execute(sql: sql) }
        if try !hasRuns(in: db) {
            try db.execute(sql: "ALTER TABLE \(changesTable) ADD COLUMN more_objects BLOB")
        }
    }

    /// Whether the changes table has the `more_objects` column (a store opened read-only may
    /// predate it).
    static func hasRuns(in db: Database) throws -> Bool {
        try db.columns(in: changesTable).contains { $0.name == "more_objects" }
    }

    /// Whether the store has the history tables.
    static func exists(in db: Database) throws -> Bool {
        try db.tableExists(transactionsTable)
    }

    /// The highest token ever given (0 for none), purged or not.
    static func latestToken(in db: Database) throws -> Int64 {
        guard try db.tableExists("sqlite_sequence") else { return 0 }
        return try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", arguments: [transactionsTable]) ?? 0
    }

    /// The highest purged token (0 when nothing was purged).
    static func purgedThrough(in db: Database) throws -> Int64 {
        let text = try String.fetchOne(db, sql: "SELECT value FROM \(MetadataSchema.metadataTable) WHERE key = ?", arguments: [purgedThroughKey])
        return text.flatMap { Int64($0) } ?? 0
    }

    static func setPurgedThrough(_ token: Int64, in db: Database) throws {
        try db.execute(sql: "INSERT INTO \(MetadataSchema.metadataTable)(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                       arguments: [purgedThroughKey, String(token)])
    }

    /// Names by id, for the ids given.
    static func names(_ ids: Set<Int64>, in db: Database) throws -> [Int64: (entity: String, property: String)] {
        var result: [Int64: (entity: String, property: String)] = [:]
        for chunk in Array(ids).chunked(500) {
            let marks = chunk.map { _ in "?" }.joined(separator: ",")
            for row in try Row.fetchAll(db, sql: "SELECT id, entity, property FROM \(namesTable) WHERE id IN (\(marks))", arguments: StatementArguments(chunk)) {
                result[row["id"]] = (row["entity"], row["property"])
            }
        }
        return result
    }

    /// The ids naming `entity` (several when a rename met an older name), for filters.
    static func entityIDs(_ entities: Set<String>, in db: Database) throws -> Set<Int64> {
        guard !entities.isEmpty else { return [] }
        let list = Array(entities)
        let marks = list.map { _ in "?" }.joined(separator: ",")
        return try Int64.fetchSet(db, sql: "SELECT id FROM \(namesTable) WHERE property = '' AND entity IN (\(marks))", arguments: StatementArguments(list))
    }
}

extension Array {
    /// The array cut into runs of at most `size` elements.
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
