import Foundation
import GRDB

/// The deferred ledger: pending cleanup tasks kept in the store's `_strata_deferred` table.
///
/// Each row holds one task: its kind, a summary, a JSON payload (the ``MigrationOperation``
/// to run) and a JSON progress record, updated in the same transaction as each batch of work.
enum DeferredLedger {
    /// The ledger's table: one row per pending task.
    static let table = "_strata_deferred"

    /// The ledger's table, created with the store's metadata tables.
    static let creationSQL = """
        CREATE TABLE \(table) (id INTEGER PRIMARY KEY, createdAt REAL NOT NULL, kind TEXT NOT NULL, \
        summary TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'pending', payload TEXT NOT NULL, progress TEXT)
        """

    struct Payload: Codable {
        var operation: MigrationOperation
        var rowsTotal: Int64
    }

    struct Progress: Codable {
        /// Last primary key (or rowid) copied or deleted.
        var lastKey: Int64?
        var rowsDone: Int64
        /// Whether the shadow table and triggers exist (rewrites).
        var started: Bool
    }

    static func pendingTasks(in db: Database) throws -> [DeferredTask] {
        try entries(in: db).map(\.task)
    }

    struct Entry {
        var task: DeferredTask
        var payload: Payload
        var progress: Progress
    }

    static func entries(in db: Database) throws -> [Entry] {
        guard try db.tableExists(table) else { return [] }
        // Reclaiming pages comes last, after every drop (including those added by swaps).
        return try Row.fetchAll(db, sql: "SELECT * FROM \(table) WHERE state != 'done' ORDER BY kind = 'incrementalVacuum', id").map { row in
            let payload = try JSONDecoder().decode(Payload.self, from: Data((row["payload"] as String).utf8))
            let progress = (row["progress"] as String?).flatMap { try? JSONDecoder().decode(Progress.self, from: Data($0.utf8)) }
                ?? Progress(lastKey: nil, rowsDone: 0, started: false)
            let task = DeferredTask(
                id: row["id"], kind: DeferredTask.Kind(rawValue: row["kind"]) ?? .rewriteTable, table: payload.operation.table,
                summary: row["summary"], state: DeferredTask.State(rawValue: row["state"]) ?? .pending,
                rowsDone: progress.rowsDone, rowsTotal: payload.rowsTotal,
                createdAt: Date(timeIntervalSince1970: row["createdAt"]))
            return Entry(task: task, payload: payload, progress: progress)
        }
    }

    static func append(_ operation: MigrationOperation, kind: DeferredTask.Kind, summary: String, rowsTotal: Int64, in db: Database) throws {
        let payload = String(decoding: try JSONEncoder().encode(Payload(operation: operation, rowsTotal: rowsTotal)), as: UTF8.self)
        try db.execute(sql: "INSERT INTO \(table)(createdAt, kind, summary, state, payload, progress) VALUES (?, ?, ?, 'pending', ?, NULL)",
                       arguments: [Date().timeIntervalSince1970, kind.rawValue, summary, payload])
    }

    static func saveProgress(_ progress: Progress, id: Int64, state: DeferredTask.State = .running, in db: Database) throws {
        let json = String(decoding: try JSONEncoder().encode(progress), as: UTF8.self)
        try db.execute(sql: "UPDATE \(table) SET progress = ?, state = ? WHERE id = ?", arguments: [json, state.rawValue, id])
    }

    static func complete(id: Int64, in db: Database) throws {
        try db.execute(sql: "DELETE FROM \(table) WHERE id = ?", arguments: [id])
    }

    static func removeAll(in db: Database) throws {
        try db.execute(sql: "DELETE FROM \(table)")
    }
}
