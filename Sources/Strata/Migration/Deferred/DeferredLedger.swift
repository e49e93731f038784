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
        /// Rows copied or deleted so far (pages for a backup).
        var rowsDone: Int64
        /// Whether the shadow or side table and its triggers exist (rewrites, index builds
        /// and drops).
        var started: Bool
        /// Rewrites: every row is in the shadow (the triggers keep it current from then on).
        var copied: Bool? = nil
        /// Rewrites: the temporary name of each final index built on the shadow (final → temporary).
        var shadowIndexes: [String: String]? = nil
        /// Index builds and drops: the side table holding the indexed columns by rowid.
        var sideTable: String? = nil
        /// Index builds: the temporary name of the index on the side table.
        var sideIndex: String? = nil
        /// The index build in progress (a standalone build, or one of a rewrite's shadow indexes).
        var build: IndexBuildProgress? = nil
        /// Rewrites: the last live key whose row was verified in the shadow before the swap.
        var verifiedKey: Int64? = nil
        /// Rewrites: the shadow holds exactly the table's rows (DeferredFinisher+Verify).
        var verified: Bool? = nil
    }

    /// The state of one index build (see ``DeferredFinisher`` — sorted builds).
    struct IndexBuildProgress: Codable {
        enum Phase: String, Codable {
            /// Entries are collected into the sort buffer, then sorted, then appended in key
            /// order to `container` (a `WITHOUT ROWID` table that becomes the index).
            case sorted
            /// Some key is NULL: the index is built on a side table, maintained row by row.
            case fallback
        }
        /// The layout's index (its final name).
        var index: String
        /// The name the index takes when built (the final name, or a temporary one on a shadow).
        var name: String
        /// The table it is built on.
        var table: String
        var phase: Phase
        /// Sorted builds: the table the sorted entries go into, the rowids changed since the
        /// build started, the rowids whose key is NULL.
        var container: String
        var changes: String
        var nulls: String
        /// Sorted builds: the last rowid sorted into the sort buffer's runs (`Int64.max` once
        /// the table is done), the runs there, and each run's position merged into the
        /// container (see ``IndexSortBuffer``, ``SortedRunMerge``).
        var collected: Int64? = nil
        var runs: Int? = nil
        var merged: [Int64]? = nil
        /// Fallback builds: the side table, its index, the last rowid copied.
        var side: String? = nil
        var sideIndex: String? = nil
        var sideLastKey: Int64? = nil
        /// Sorted builds on a rewrite's shadow: an index of the live table with the same key
        /// columns, read in key order instead of sorting, and the last entry read (key values,
        /// then the rowid).
        var sourceTable: String? = nil
        var sourceIndex: String? = nil
        var sourceCursor: [StoredValue]? = nil
    }

    /// A database value in the ledger's JSON.
    enum StoredValue: Codable, Equatable {
        case null
        case integer(Int64)
        case real(Double)
        case text(String)
        case blob(Data)

        init(_ value: DatabaseValue) {
            switch value.storage {
            case .null: self = .null
            case .int64(let i): self = .integer(i)
            case .double(let d): self = .real(d)
            case .string(let s): self = .text(s)
            case .blob(let b): self = .blob(b)
            }
        }

        var databaseValue: DatabaseValue {
            switch self {
            case .null: return .null
            case .integer(let i): return i.databaseValue
            case .real(let d): return d.databaseValue
            case .text(let s): return s.databaseValue
            case .blob(let b): return b.databaseValue
            }
        }
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
        // A backup comes first, before anything is destroyed; reclaiming pages comes last,
        // after every drop (including those added by swaps).
        return try Row.fetchAll(db, sql: "SELECT * FROM \(table) WHERE state != 'done' ORDER BY kind != 'backup', kind = 'incrementalVacuum', id").map { row in
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
        // A cached statement: every batch saves its progress.
        try db.cachedStatement(sql: "UPDATE \(table) SET progress = ?, state = ? WHERE id = ?").execute(arguments: [json, state.rawValue, id])
    }

    static func complete(id: Int64, in db: Database) throws {
        try db.execute(sql: "DELETE FROM \(table) WHERE id = ?", arguments: [id])
    }

    /// Removes every task except pending backups: the ledger is recomputed after each
    /// migration, and a backup not taken yet still precedes any cleanup.
    static func removeAll(in db: Database) throws {
        try db.execute(sql: "DELETE FROM \(table) WHERE kind != 'backup'")
    }

    /// Records an online backup of the store to `destination`, to run before any other task.
    static func appendBackup(to destination: URL, reason: String, in db: Database) throws {
        let pages = try Int64.fetchOne(db, sql: "PRAGMA page_count") ?? 0
        let summary = "back up the store to \(destination.path) (online, before cleanup destroys anything; \(reason))"
        try append(MigrationOperation(.backup(destination: destination.path), deferrable: true, summary: summary),
                   kind: .backup, summary: summary, rowsTotal: pages, in: db)
    }
}
