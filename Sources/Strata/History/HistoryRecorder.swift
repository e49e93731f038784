import Foundation
import GRDB

/// One object change as a save hands it to the history, before names become ids.
struct PendingHistoryChange {
    var entity: String
    var primaryKey: Int64
    var kind: HistoryChange.Kind
    var properties: [String] = []
    /// Keypath -> value, for attributes marked `preserveAfterDeletion` (deletes only).
    var tombstone: [String: Value] = [:]
}

/// Writes history records inside the transaction of the save they describe, so that a change
/// and its record commit together or not at all.
enum HistoryRecorder {
    /// Records written per `INSERT` statement (8 values each, well under SQLite's parameter limit).
    static let rowsPerStatement = 64

    /// Records `changes` as one transaction (and a gap before it when another process wrote the
    /// store without history since the last recorded commit). Runs on the writer, inside the
    /// caller's transaction; observers are woken once it commits.
    static func record(_ changes: [PendingHistoryChange], user: String?, author: String?, store: PersistentStore, in db: Database) throws {
        let state = store.historyState
        let tracking = state.tracking.withLock { $0 }
        guard !changes.isEmpty, tracking.tablesExist else { return }
        let dataVersion = try Int64.fetchOne(db.cachedStatement(sql: "PRAGMA data_version")) ?? 0
        try recordGapIfNeeded(tracking: tracking, dataVersion: dataVersion, in: db)
        try db.cachedStatement(sql: "INSERT INTO \(HistorySchema.transactionsTable)(at, kind, user, author) VALUES (?, 0, ?, ?)")
            .execute(arguments: [Date().timeIntervalSince1970, user, author])
        let token = db.lastInsertedRowID
        var newNames: [HistoryState.NameKey: Int64] = [:]
        func nameID(_ entity: String, _ property: String) throws -> Int64 {
            let key = HistoryState.NameKey(entity: entity, property: property)
            if let id = tracking.names[key] ?? newNames[key] { return id }
            let id: Int64
            if let existing = try Int64.fetchOne(db, sql: "SELECT min(id) FROM \(HistorySchema.namesTable) WHERE entity = ? AND property = ?", arguments: [entity, property]) {
                id = existing
            } else {
                try db.execute(sql: "INSERT INTO \(HistorySchema.namesTable)(entity, property) VALUES (?, ?)", arguments: [entity, property])
                id = db.lastInsertedRowID
            }
            newNames[key] = id
            return id
        }
        // Multi-row INSERTs: one statement per `rowsPerStatement` records; consecutive like
        // changes share one record (HistoryObjectRun).
        var arguments: [DatabaseValue] = []
        let runs = HistoryObjectRun.runs(of: changes)
        arguments.reserveCapacity(min(runs.count, rowsPerStatement) * 8)
        var pending = 0
        func flush() throws {
            guard pending > 0 else { return }
            let sql = "INSERT INTO \(HistorySchema.changesTable)(token, seq, entity, object, kind, properties, tombstone, more_objects) VALUES "
                + Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?)", count: pending).joined(separator: ", ")
            try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(arguments))
            arguments.removeAll(keepingCapacity: true)
            pending = 0
        }
        for run in runs {
            let entity = try nameID(run.entity, "")
            var properties = ""
            for property in run.properties {
                if !properties.isEmpty { properties += "," }
                properties += String(try nameID(run.entity, property))
            }
            var tombstone: [Int64: Value] = [:]
            for (keyPath, value) in run.tombstone { tombstone[try nameID(run.entity, keyPath)] = value }
            arguments += [token.databaseValue, Int64(run.seq).databaseValue, entity.databaseValue, run.primaryKeys[0].databaseValue,
                          run.kind.rawValue.databaseValue, properties.databaseValue, TombstoneCoding.encode(tombstone).databaseValue,
                          HistoryObjectRun.pack(run.primaryKeys).databaseValue]
            pending += 1
            if pending == rowsPerStatement { try flush() }
        }
        try flush()
        let committedNames = newNames
        db.afterNextTransaction(onCommit: { _ in
            state.tracking.withLock { tracking in
                tracking.dataVersion = dataVersion
                tracking.latestToken = max(tracking.latestToken, token)
                tracking.names.merge(committedNames) { a, _ in a }
            }
            state.publish(token)
        })
    }

    /// Inserts a gap transaction when the store moved under the writer (`data_version`
    /// changed) and no Strata writer recorded it (the latest token did not move).
    @discardableResult
    static func recordGapIfNeeded(tracking: HistoryState.Tracking, dataVersion: Int64, in db: Database) throws -> Int64? {
        guard let known = tracking.dataVersion, known != dataVersion else { return nil }
        guard try HistorySchema.latestToken(in: db) == tracking.latestToken else { return nil }
        // A purge by another Strata process (`stratactl history purge`) moves the horizon and
        // writes no objects: not a gap.
        guard try HistorySchema.purgedThrough(in: db) == tracking.purgedThrough else { return nil }
        try db.execute(sql: "INSERT INTO \(HistorySchema.transactionsTable)(at, kind) VALUES (?, 1)", arguments: [Date().timeIntervalSince1970])
        return db.lastInsertedRowID
    }

    /// Reads the writer's baseline (`data_version`, latest token) and creates the tables when
    /// the store predates history. Runs once when a writable store opens.
    static func start(_ store: PersistentStore) throws {
        let (dataVersion, latest, horizon) = try store.database.write { db -> (Int64, Int64, Int64) in
            try HistorySchema.create(in: db)
            return (try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0, try HistorySchema.latestToken(in: db),
                    try HistorySchema.purgedThrough(in: db))
        }
        store.historyState.tracking.withLock { tracking in
            tracking.tablesExist = true
            tracking.dataVersion = dataVersion
            tracking.latestToken = latest
            tracking.purgedThrough = horizon
        }
    }
}
