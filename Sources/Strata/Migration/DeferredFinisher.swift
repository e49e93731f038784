import Foundation
import GRDB
import StrataUnits

/// Runs the tasks of a store's deferred ledger, online.
///
/// - **Table rewrites** create a shadow table with the final definition and the table's final
///   indexes, install triggers that mirror every insert, update and delete of the live table
///   into the shadow (so concurrent writes keep flowing and are captured, by this process or
///   any other), copy rows in key order in small batches whose size adapts to the time
///   budget, then swap in one short transaction (drop the old table, rename the shadow).
///   Unique indexes move to the shadow at the start; the triggers make them enforce
///   uniqueness for the live table meanwhile.
/// - **Table drops** delete rows in batches, then drop the empty table.
/// - **Index builds** run as one sorted `CREATE INDEX` (SQLite has no incremental index build;
///   this is the one step that holds the write lock for longer than a batch: a few hundred
///   milliseconds per index per million rows). A rewrite builds its table's non-unique
///   indexes the same way after the copy, one transaction each; unique indexes are on the
///   shadow from the start.
/// - **Incremental vacuum** frees pages in batches.
///
/// Every batch is one transaction that also records progress in the ledger, so a crash,
/// a cancellation or a pause resumes exactly where it stopped.
struct DeferredFinisher {
    let store: PersistentStore
    let options: FinishOptions
    let progress: (@Sendable (DeferredProgress) -> Void)?

    private final class Counters {
        var rows: Int64 = 0
        var batches = 0
        static let initialBatchSize = 200
        var batchSize = initialBatchSize
        /// How long the last batch (or index build) took: it scales the cost delay after it.
        var lastBatch: Duration = .zero
        /// Cost delay slept so far.
        var paused: Duration = .zero
    }

    func run() async throws -> FinishReport {
        let start = ContinuousClock.now
        // A larger page cache for the writer while finishing: copies and index builds touch
        // many pages. Restored afterwards.
        let previousCacheSize = try setCacheSize(-65_536)
        defer { _ = try? setCacheSize(previousCacheSize) }
        var report = FinishReport(tasksFinished: 0, tasksRemaining: 0, rowsProcessed: 0, batches: 0, seconds: 0, stoppedEarly: false)
        let counters = Counters()
        var index = 0
        while true {
            if let max = options.maxTasks, report.tasksFinished >= max { break }
            // Re-read each time: a rewrite's swap adds the drop of the old rows to the ledger.
            let entries = try readEntries()
            guard let entry = entries.first else { break }
            let total = index + entries.count
            guard await mayContinue() else { report.stoppedEarly = true; break }
            let taskStart = ContinuousClock.now
            let batchesBefore = counters.batches, rowsBefore = counters.rows
            let finished = try await runTask(entry, index: index, of: total, counters: counters)
            let took = ContinuousClock.now - taskStart
            store.logger.log(level: finished ? .notice : .info, "\(finished ? "finished" : "paused") deferred task #\(entry.task.id): \(entry.task.summary)", metadata: [
                "strata.task": "\(entry.task.id)", "strata.kind": "\(entry.task.kind.rawValue)",
                "strata.ms": "\(String(format: "%.1f", took.milliseconds))",
                "strata.batches": "\(counters.batches - batchesBefore)", "strata.rows": "\(counters.rows - rowsBefore)",
            ])
            if !finished { report.stoppedEarly = true; break }
            report.tasksFinished += 1
            index += 1
        }
        report.rowsProcessed = counters.rows
        report.batches = counters.batches
        report.tasksRemaining = try readEntries().count
        report.seconds = (ContinuousClock.now - start).seconds
        report.pauseSeconds = counters.paused.seconds
        if report.tasksRemaining > 0 && options.maxTasks == nil { report.stoppedEarly = true }
        if report.tasksFinished > 0 && report.tasksRemaining == 0 {
            try recordFinished(report)
        }
        return report
    }

    private func setCacheSize(_ size: Int) throws -> Int {
        try store.database.writeWithoutTransaction { db in
            let previous = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2000
            try db.execute(sql: "PRAGMA cache_size = \(size)")
            return previous
        }
    }

    // MARK: - Scheduling

    private func mayContinue() async -> Bool {
        !Task.isCancelled && options.shouldContinue()
    }

    /// The cost delay after a batch, in the manner of PostgreSQL's autovacuum:
    /// `pauseBetweenBatches × (the batch's time ÷ batchBudget)`, at most ten times
    /// `pauseBetweenBatches`, so that a batch that overran its budget (a slow disk, a contended
    /// lock) buys a longer pause and the work's share of the machine stays near
    /// `budget / (budget + pause)`. Slept in slices of at most 2 ms with ``mayContinue()``
    /// asked between them: a pause never delays stopping. Returns whether to go on.
    private func pause(_ counters: Counters) async -> Bool {
        guard options.pauseBetweenBatches > .zero else {
            await Task.yield()
            return await mayContinue()
        }
        let clock = ContinuousClock()
        let started = clock.now
        defer { counters.paused += clock.now - started }
        let ratio = min(10, max(0, counters.lastBatch / options.batchBudget))
        let until = started + options.pauseBetweenBatches * ratio
        while clock.now < until {
            guard await mayContinue() else { return false }
            try? await Task.sleep(for: min(.milliseconds(2), until - clock.now))
        }
        return await mayContinue()
    }

    private func adapt(_ counters: Counters, elapsed: Duration) {
        counters.lastBatch = elapsed
        let budget = options.batchBudget.seconds
        let took = max(1e-5, elapsed.seconds)
        let scaled = Double(counters.batchSize) * min(2.0, max(0.25, budget / took))
        counters.batchSize = Int(min(200_000, max(50, scaled)))
    }

    private func report(_ entry: DeferredLedger.Entry, rowsDone: Int64, state: DeferredTask.State, index: Int, of total: Int) {
        var task = entry.task
        task.rowsDone = rowsDone
        task.state = state
        progress?(DeferredProgress(task: task, taskIndex: index, taskCount: total))
    }

    // MARK: - Tasks

    /// Runs one task; returns false when stopped before it was done.
    private func runTask(_ entry: DeferredLedger.Entry, index: Int, of total: Int, counters: Counters) async throws -> Bool {
        // Rows of different tasks cost differently: each task adapts its batch size afresh.
        counters.batchSize = Counters.initialBatchSize
        switch entry.payload.operation.kind {
        case .rewriteTable(let rewrite):
            return try await runRewrite(entry, rewrite, keyColumn: StorageLayout.primaryKeyColumn, conflictKey: [StorageLayout.primaryKeyColumn], index: index, of: total, counters: counters)
        case .rewriteJoinTable(let rewrite):
            return try await runRewrite(entry, rewrite, keyColumn: "rowid", conflictKey: ["source_id", "target_id"], index: index, of: total, counters: counters)
        case .dropTable(let table):
            return try await runDrop(entry, table: table, index: index, of: total, counters: counters)
        case .incrementalVacuum:
            return try await runVacuum(entry, index: index, of: total, counters: counters)
        default:
            try runInOneStep(entry, counters: counters)
            report(entry, rowsDone: entry.payload.rowsTotal, state: .done, index: index, of: total)
            return true
        }
    }

    private func runInOneStep(_ entry: DeferredLedger.Entry, counters: Counters) throws {
        let operation = entry.payload.operation
        try store.database.writeWithoutTransaction { db in
            try db.inTransaction {
                try operation.execute(in: db)
                try DeferredLedger.complete(id: entry.task.id, in: db)
                return .commit
            }
        }
        counters.batches += 1
        counters.rows += entry.payload.rowsTotal
    }

    // MARK: - Online rewrite

    private func runRewrite(_ entry: DeferredLedger.Entry, _ rewrite: TableRewrite, keyColumn: String, conflictKey: [String],
                            index: Int, of total: Int, counters: Counters) async throws -> Bool {
        var state = entry.progress
        let id = entry.task.id
        if !state.started {
            state = try beginRewrite(rewrite, conflictKey: conflictKey, id: id)
        }
        while true {
            guard await mayContinue() else { return false }
            let batchStart = ContinuousClock.now
            let size = counters.batchSize
            let before = state.rowsDone
            let done = try copyBatch(rewrite, keyColumn: keyColumn, size: size, state: &state, id: id)
            counters.batches += 1
            counters.rows += state.rowsDone - before
            adapt(counters, elapsed: ContinuousClock.now - batchStart)
            report(entry, rowsDone: state.rowsDone, state: .running, index: index, of: total)
            if done { break }
            guard await pause(counters) else { return false }
        }
        // Non-unique indexes: one sorted build each, in its own transaction, so that a pause
        // or a cancellation can come between two builds (SQLite cannot interrupt one).
        for index in store.layout.indexes where index.table == rewrite.table && !index.isUnique {
            guard await mayContinue() else { return false }
            let buildStart = ContinuousClock.now
            try buildIndexOnShadow(index, rewrite: rewrite)
            counters.lastBatch = ContinuousClock.now - buildStart
            counters.batches += 1
            guard await pause(counters) else { return false }
        }
        guard await mayContinue() else { return false }
        try swap(rewrite, keyColumn: keyColumn, state: state, id: id)
        counters.batches += 1
        report(entry, rowsDone: max(state.rowsDone, entry.payload.rowsTotal), state: .done, index: index, of: total)
        return true
    }

    private func beginRewrite(_ rewrite: TableRewrite, conflictKey: [String], id: Int64) throws -> DeferredLedger.Progress {
        let state = DeferredLedger.Progress(lastKey: nil, rowsDone: 0, started: true)
        try store.database.writeWithoutTransaction { db in
            try db.inTransaction {
                try startRewrite(rewrite, conflictKey: conflictKey, in: db)
                FaultInjection.point("rewrite.start")
                try DeferredLedger.saveProgress(state, id: id, in: db)
                return .commit
            }
        }
        return state
    }

    /// Copies the next batch of rows (by key) into the shadow and records progress; returns
    /// true when no rows were left to copy.
    private func copyBatch(_ rewrite: TableRewrite, keyColumn: String, size: Int, state: inout DeferredLedger.Progress, id: Int64) throws -> Bool {
        let t = quoteIdentifier(rewrite.table), s = quoteIdentifier(rewrite.shadowTable)
        let key = keyColumn == "rowid" ? "rowid" : quoteIdentifier(keyColumn)
        let columns = rewrite.columns.map(quoteIdentifier).joined(separator: ", ")
        var next = state
        let finished: Bool = try store.database.writeWithoutTransaction { db in
            var finished = false
            try db.inTransaction {
                let last = next.lastKey ?? Int64.min
                if let upper = try Int64.fetchOne(db, sql: "SELECT \(key) FROM \(t) WHERE \(key) > ? ORDER BY \(key) LIMIT 1 OFFSET ?", arguments: [last, size - 1]) {
                    try db.execute(sql: "INSERT OR IGNORE INTO \(s) (\(columns)) SELECT \(columns) FROM \(t) WHERE \(key) > ? AND \(key) <= ? ORDER BY \(key)", arguments: [last, upper])
                    next.lastKey = upper
                    next.rowsDone += Int64(size)
                } else {
                    let remaining = try Int64.fetchOne(db, sql: "SELECT count(*) FROM \(t) WHERE \(key) > ?", arguments: [last]) ?? 0
                    try db.execute(sql: "INSERT OR IGNORE INTO \(s) (\(columns)) SELECT \(columns) FROM \(t) WHERE \(key) > ? ORDER BY \(key)", arguments: [last])
                    next.rowsDone += remaining
                    next.lastKey = try Int64.fetchOne(db, sql: "SELECT max(\(key)) FROM \(t)") ?? next.lastKey
                    finished = true
                }
                FaultInjection.point("rewrite.mid-batch")
                try DeferredLedger.saveProgress(next, id: id, in: db)
                return .commit
            }
            return finished
        }
        state = next
        FaultInjection.point("rewrite.between-batches")
        return finished
    }

    /// Swaps the shadow in, in one short transaction of O(1) schema changes: the live table
    /// is renamed aside (`_strata_old_<table>`) and the shadow takes its name; the old table
    /// becomes a batched drop task of its own, so writers never wait for its pages to be freed.
    /// `legacy_alter_table` keeps the join tables' `REFERENCES` on the name, and foreign keys
    /// are off so that nothing cascades.
    private func swap(_ rewrite: TableRewrite, keyColumn: String, state: DeferredLedger.Progress, id: Int64) throws {
        let t = quoteIdentifier(rewrite.table), s = quoteIdentifier(rewrite.shadowTable)
        let key = keyColumn == "rowid" ? "rowid" : quoteIdentifier(keyColumn)
        let columns = rewrite.columns.map(quoteIdentifier).joined(separator: ", ")
        try store.database.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            try db.execute(sql: "PRAGMA legacy_alter_table = ON")
            defer {
                try? db.execute(sql: "PRAGMA legacy_alter_table = OFF")
                try? db.execute(sql: "PRAGMA foreign_keys = ON")
            }
            try db.inTransaction {
                try db.execute(sql: "INSERT OR IGNORE INTO \(s) (\(columns)) SELECT \(columns) FROM \(t) WHERE \(key) > ?", arguments: [state.lastKey ?? Int64.min])
                try dropTriggers(for: rewrite.table, in: db)
                var old = "_strata_old_\(rewrite.table)"
                var n = 1
                while try db.tableExists(old) { n += 1; old = "_strata_old_\(rewrite.table)_\(n)" }
                try db.execute(sql: "ALTER TABLE \(t) RENAME TO \(quoteIdentifier(old))")
                FaultInjection.point("rewrite.swap")
                try db.execute(sql: "ALTER TABLE \(s) RENAME TO \(t)")
                try DeferredLedger.complete(id: id, in: db)
                try DeferredLedger.append(MigrationOperation(.dropTable(old), deferrable: true, summary: "drop table \(old) (the rows of \(rewrite.table) before its rewrite)"),
                                          kind: .dropTable, summary: "drop table \(old) (the rows of \(rewrite.table) before its rewrite)",
                                          rowsTotal: state.rowsDone, in: db)
                return .commit
            }
        }
    }

    /// Builds one non-unique index on the shadow (moving the same-named index off the live
    /// table; the triggers keep it current from then on). Skipped when already built.
    private func buildIndexOnShadow(_ index: IndexLayout, rewrite: TableRewrite) throws {
        try store.database.writeWithoutTransaction { db in
            try db.inTransaction {
                let built = try Bool.fetchOne(db, sql: "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'index' AND name = ? AND tbl_name = ?",
                                              arguments: [index.name, rewrite.shadowTable]) ?? false
                if !built {
                    try db.execute(sql: "DROP INDEX IF EXISTS \(quoteIdentifier(index.name))")
                    var onShadow = index
                    onShadow.table = rewrite.shadowTable
                    try db.execute(sql: store.layout.createIndexSQL(onShadow))
                    FaultInjection.point("rewrite.index")
                }
                return .commit
            }
        }
    }

    /// Creates the shadow table with the final indexes, moves same-named indexes off the live
    /// table, and installs the capture triggers.
    private func startRewrite(_ rewrite: TableRewrite, conflictKey: [String], in db: Database) throws {
        let t = quoteIdentifier(rewrite.table), s = quoteIdentifier(rewrite.shadowTable)
        try dropTriggers(for: rewrite.table, in: db)
        try db.execute(sql: "DROP TABLE IF EXISTS \(s)")
        try db.execute(sql: rewrite.createShadowSQL)
        // Unique indexes live on the shadow from the start: with the triggers they keep
        // enforcing uniqueness for the live table. Other indexes are built after the copy,
        // sorted in one pass each, which costs far less than maintaining them row by row.
        for index in store.layout.indexes where index.table == rewrite.table && index.isUnique {
            try db.execute(sql: "DROP INDEX IF EXISTS \(quoteIdentifier(index.name))")
            var onShadow = index
            onShadow.table = rewrite.shadowTable
            try db.execute(sql: store.layout.createIndexSQL(onShadow))
        }
        let columns = rewrite.columns
        let names = columns.map(quoteIdentifier).joined(separator: ", ")
        let newValues = columns.map { "NEW.\(quoteIdentifier($0))" }.joined(separator: ", ")
        let updates = columns.filter { !conflictKey.contains($0) }.map { "\(quoteIdentifier($0)) = excluded.\(quoteIdentifier($0))" }
        let conflict = "ON CONFLICT(\(conflictKey.map(quoteIdentifier).joined(separator: ", "))) " + (updates.isEmpty ? "DO NOTHING" : "DO UPDATE SET \(updates.joined(separator: ", "))")
        let upsert = "INSERT INTO \(s) (\(names)) VALUES (\(newValues)) \(conflict);"
        let matchOld = conflictKey.map { "\(quoteIdentifier($0)) = OLD.\(quoteIdentifier($0))" }.joined(separator: " AND ")
        let prefix = triggerPrefix(rewrite.table)
        try db.execute(sql: "CREATE TRIGGER \(quoteIdentifier(prefix + "ins")) AFTER INSERT ON \(t) BEGIN \(upsert) END")
        try db.execute(sql: "CREATE TRIGGER \(quoteIdentifier(prefix + "upd")) AFTER UPDATE ON \(t) BEGIN DELETE FROM \(s) WHERE \(matchOld); \(upsert) END")
        try db.execute(sql: "CREATE TRIGGER \(quoteIdentifier(prefix + "del")) AFTER DELETE ON \(t) BEGIN DELETE FROM \(s) WHERE \(matchOld); END")
    }

    private func triggerPrefix(_ table: String) -> String { "_strata_rw_\(table)_" }

    private func dropTriggers(for table: String, in db: Database) throws {
        for suffix in ["ins", "upd", "del"] {
            try db.execute(sql: "DROP TRIGGER IF EXISTS \(quoteIdentifier(triggerPrefix(table) + suffix))")
        }
    }

    // MARK: - Drop and vacuum

    private func runDrop(_ entry: DeferredLedger.Entry, table: String, index: Int, of total: Int, counters: Counters) async throws -> Bool {
        var state = entry.progress
        while true {
            guard await mayContinue() else { return false }
            let batchStart = ContinuousClock.now
            let before = state.rowsDone
            let remaining = try dropBatch(table, size: counters.batchSize, state: &state, id: entry.task.id)
            counters.batches += 1
            counters.rows += state.rowsDone - before
            adapt(counters, elapsed: ContinuousClock.now - batchStart)
            report(entry, rowsDone: state.rowsDone, state: remaining ? .running : .done, index: index, of: total)
            if !remaining { return true }
            guard await pause(counters) else { return false }
        }
    }

    /// Deletes one batch of rows (foreign keys off: the table is going away); drops the table
    /// once empty. Returns whether rows remain.
    private func dropBatch(_ table: String, size: Int, state: inout DeferredLedger.Progress, id: Int64) throws -> Bool {
        let t = quoteIdentifier(table)
        var next = state
        let more: Bool = try store.database.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            defer { try? db.execute(sql: "PRAGMA foreign_keys = ON") }
            var more = false
            try db.inTransaction {
                guard try db.tableExists(table) else {
                    try DeferredLedger.complete(id: id, in: db)
                    return .commit
                }
                // A rowid range from the start of the table: leaf pages empty in order and are freed.
                let upper = try Int64.fetchOne(db, sql: "SELECT rowid FROM \(t) ORDER BY rowid LIMIT 1 OFFSET ?", arguments: [size - 1])
                if let upper {
                    try db.execute(sql: "DELETE FROM \(t) WHERE rowid <= ?", arguments: [upper])
                } else {
                    try db.execute(sql: "DELETE FROM \(t)")
                }
                let deleted = Int64(db.changesCount)
                next.rowsDone += deleted
                FaultInjection.point("drop.mid-batch")
                if deleted < size {
                    try db.execute(sql: "DROP TABLE \(t)")
                    try DeferredLedger.complete(id: id, in: db)
                } else {
                    more = true
                    try DeferredLedger.saveProgress(next, id: id, in: db)
                }
                return .commit
            }
            return more
        }
        state = next
        return more
    }

    private func runVacuum(_ entry: DeferredLedger.Entry, index: Int, of total: Int, counters: Counters) async throws -> Bool {
        counters.batchSize = 1024   // pages
        while true {
            guard await mayContinue() else { return false }
            let batchStart = ContinuousClock.now
            let more = try vacuumBatch(pages: counters.batchSize, id: entry.task.id)
            adapt(counters, elapsed: ContinuousClock.now - batchStart)
            counters.batches += 1
            if !more {
                report(entry, rowsDone: 0, state: .done, index: index, of: total)
                return true
            }
            guard await pause(counters) else { return false }
        }
    }

    private func vacuumBatch(pages: Int, id: Int64) throws -> Bool {
        try store.database.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA incremental_vacuum(\(pages))")
            let free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
            if free == 0 { try DeferredLedger.complete(id: id, in: db) }
            return free > 0
        }
    }

    // MARK: - Ledger

    private func readEntries() throws -> [DeferredLedger.Entry] {
        try store.database.read { db in try DeferredLedger.entries(in: db) }
    }

    private func recordFinished(_ report: FinishReport) throws {
        let model = store.model
        try store.database.write { db in
            try MetadataSchema.appendHistory(.init(
                at: Date(), kind: "deferred-finished", fromVersion: model.version, fromChecksum: model.checksum,
                toVersion: model.version, toChecksum: model.checksum,
                detail: "\(report.tasksFinished) deferred task(s) finished, \(report.rowsProcessed) rows, \(report.batches) batches"), in: db)
        }
    }

    /// Runs every ledger task at once, each in one transaction (migration without deferral).
    /// `db` must be outside a transaction.
    static func runAllOffline(in db: Database, layout: StorageLayout) throws {
        for entry in try DeferredLedger.entries(in: db) {
            let operation = entry.payload.operation
            let needsForeignKeysOff = operation.requiresForeignKeysOff || { if case .dropTable = operation.kind { return true } else { return false } }()
            if needsForeignKeysOff { try db.execute(sql: "PRAGMA foreign_keys = OFF") }
            defer { if needsForeignKeysOff { try? db.execute(sql: "PRAGMA foreign_keys = ON") } }
            if case .incrementalVacuum = operation.kind {
                try db.execute(sql: "PRAGMA incremental_vacuum")
                try DeferredLedger.complete(id: entry.task.id, in: db)
                continue
            }
            try db.inTransaction {
                try operation.execute(in: db)
                try DeferredLedger.complete(id: entry.task.id, in: db)
                return .commit
            }
        }
    }
}
