import Foundation
import GRDB

extension DeferredFinisher {
    // MARK: - Table drop

    /// Drops a table in bounded steps:
    ///
    /// 1. its indexes are retired (``IndexRelocation/retire(_:in:)``): each becomes a
    ///    `WITHOUT ROWID` table of its own, deleted later in key order (a drop task each) —
    ///    deleting the rows of an indexed table in rowid order would rewrite index pages all
    ///    over the index in every batch. Rows with a NULL key go first, found in one pass in
    ///    rowid order (skipped when no index has a NULL key);
    /// 2. its rows are deleted from the end, in descending rowid (or primary-key) order, a
    ///    batch at a time (see ``dropBatch(_:size:state:step:)`` for why from the end);
    /// 3. the empty table is dropped — an O(1) statement by then; or, as soon as the rest of
    ///    the table is predicted to go in one `DROP TABLE` within the batch's budget and lies
    ///    below the file's final size (``restFitsOneDrop(_:deleted:step:)``), the rest is
    ///    dropped in one statement: SQLite then frees its pages without deleting its rows one
    ///    by one.
    func runDrop(_ step: TaskStep, table: String) async throws -> Bool {
        var state = step.entry.progress
        if !state.started {
            let plan = try retirementPlan(table)
            if !plan.nullPredicates.isEmpty {
                guard try await deleteRowsWithNullKeys(step, table: table, predicate: plan.nullPredicates.joined(separator: " OR "), state: &state) else { return false }
            }
            guard await mayContinue() else { return false }
            state = try retireIndexes(step, table: table, plan: plan, state: state)
            step.counters.batchSize = Counters.initialBatchSize
            step.counters.secondsPerRow = nil   // the NULL-key pass's rate is not the drop's
        }
        return try await runBatches(step) { size in
            if let rest = restFitsOneDrop(table, deleted: state.rowsDone, step: step) {
                try dropRest(table, rows: rest, step: step)
                return BatchOutcome(rows: 0, rowsDone: state.rowsDone, done: true, reportsDone: true)
            }
            let before = state.rowsDone
            let remaining = try dropBatch(table, size: size, state: &state, step: step)
            return BatchOutcome(rows: state.rowsDone - before, rowsDone: state.rowsDone, done: !remaining, reportsDone: !remaining)
        }
    }

    /// The table's indexes: those to retire, those dropped in one step, and the NULL-key
    /// predicates of the retirable ones that have NULL keys (read on a reader connection: no lock).
    struct RetirementPlan {
        var retirable: [IndexRelocation.Retirement] = []
        var oneStep: [String] = []
        var nullPredicates: [String] = []
    }

    private func retirementPlan(_ table: String) throws -> RetirementPlan {
        try store.database.read { db in
            var plan = RetirementPlan()
            guard try db.tableExists(table) else { return plan }
            for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY name", arguments: [table]) {
                guard let retirement = try IndexRelocation.retirement(of: name, in: db) else {
                    plan.oneStep.append(name)
                    continue
                }
                plan.retirable.append(retirement)
                let hasNulls = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(quoteIdentifier(table)) INDEXED BY \(quoteIdentifier(name)) WHERE \(retirement.nullPredicate))") ?? false
                if hasNulls { plan.nullPredicates.append(retirement.nullPredicate) }
            }
            return plan
        }
    }

    /// Deletes the rows with a NULL index key, scanning the table in rowid order a batch at a
    /// time (progress in `lastKey`); returns false when stopped before the end.
    private func deleteRowsWithNullKeys(_ step: TaskStep, table: String, predicate: String, state: inout DeferredLedger.Progress) async throws -> Bool {
        try await runBatches(step) { size in
            let before = state.rowsDone
            let done = try nullKeyBatch(table, predicate: predicate, size: size, state: &state, step: step)
            return BatchOutcome(rows: state.rowsDone - before, rowsDone: state.rowsDone, done: done)
        }
    }

    private func nullKeyBatch(_ table: String, predicate: String, size: Int, state: inout DeferredLedger.Progress, step: TaskStep) throws -> Bool {
        let t = quoteIdentifier(table)
        var next = state
        let done: Bool = try writer { db in
            try db.withForeignKeysOff { try Self.leavingFreedPagesToTheVacuum(db) { try inBatchTransaction(step.session, db, interruptible: true) {
                let last = next.lastKey ?? Int64.min
                let upper = try Int64.fetchOne(db, sql: "SELECT rowid FROM \(t) WHERE rowid > ? ORDER BY rowid LIMIT 1 OFFSET ?", arguments: [last, size - 1])
                try db.execute(sql: "DELETE FROM \(t) WHERE rowid > ?\(upper == nil ? "" : " AND rowid <= ?") AND (\(predicate))",
                               arguments: upper == nil ? [last] : [last, upper])
                next.rowsDone += Int64(db.changesCount)
                next.lastKey = upper ?? Int64.max
                FaultInjection.point("drop.mid-batch")
                try DeferredLedger.saveProgress(next, id: step.id, in: db)
                return upper == nil
            } } }
        }
        state = next
        return done
    }

    /// Retires every retirable index (one short transaction of O(1) schema edits, a drop task
    /// per retired index) and drops the others in one step each.
    private func retireIndexes(_ step: TaskStep, table: String, plan: RetirementPlan, state: DeferredLedger.Progress) throws -> DeferredLedger.Progress {
        var next = state
        try batch(step.session) { db in
            var retired: [(String, String)] = []
            for retirement in plan.retirable where try IndexRelocation.indexTable(retirement.index, in: db) == table {
                retired.append((retirement.index, try IndexRelocation.retire(retirement, in: db)))
            }
            if !retired.isEmpty { try IndexRelocation.commitSchemaChange(in: db) }
            for name in plan.oneStep {
                // An index on expressions cannot be retired: freed in one statement (never made by Strata).
                try db.execute(sql: "DROP INDEX IF EXISTS \(quoteIdentifier(name))")
            }
            FaultInjection.point("drop.retire")
            for (index, holder) in retired {
                let summary = "drop table \(holder) (index \(index) of \(table), retired to be freed in key order)"
                try DeferredLedger.append(MigrationOperation(.dropTable(holder), deferrable: true, summary: summary),
                                          kind: .dropTable, summary: summary, rowsTotal: step.entry.payload.rowsTotal, in: db)
            }
            next.started = true
            next.lastKey = nil
            try DeferredLedger.saveProgress(next, id: step.id, in: db)
        }
        step.counters.batches += 1
        return next
    }

    /// Deletes one batch of rows (foreign keys off: the table is going away); drops the table
    /// once empty. Returns whether rows remain. A `WITHOUT ROWID` table (a retired index) is
    /// deleted in primary-key order.
    private func dropBatch(_ table: String, size: Int, state: inout DeferredLedger.Progress, step: TaskStep) throws -> Bool {
        let t = quoteIdentifier(table)
        var next = state
        let more: Bool = try writer { db in
            try db.withForeignKeysOff { try Self.leavingFreedPagesToTheVacuum(db) { try inBatchTransaction(step.session, db, interruptible: true) {
                guard try db.tableExists(table) else {
                    try DeferredLedger.complete(id: step.id, in: db)
                    return false
                }
                let withoutRowid = try TableStatistics.isWithoutRowid(table, db)
                // From the end of the table backwards: leaf pages empty in order and are freed,
                // the table's last pages (the file's highest) first. SQLite's freelist is last
                // in, first out, and the vacuum after the drop takes each page it moves into
                // from the first free page it finds below the file's final size: freed in
                // rowid order, the old table's pages beyond that size came first in the list,
                // and every page moved searched past them (at 4M rows, most of the vacuum's
                // time: 9.0 s, against 1.8 s at 1M).
                if withoutRowid {
                    let key = try db.primaryKey(table).columns.map(quoteIdentifier)
                    let keys = key.joined(separator: ", "), descending = key.map { "\($0) DESC" }.joined(separator: ", ")
                    try db.execute(sql: "DELETE FROM \(t) WHERE (\(keys)) IN (SELECT \(keys) FROM \(t) ORDER BY \(descending) LIMIT ?)", arguments: [size])
                } else if let lower = try Int64.fetchOne(db, sql: "SELECT rowid FROM \(t) ORDER BY rowid DESC LIMIT 1 OFFSET ?", arguments: [size - 1]) {
                    try db.execute(sql: "DELETE FROM \(t) WHERE rowid >= ?", arguments: [lower])
                } else {
                    try db.execute(sql: "DELETE FROM \(t)")
                }
                let deleted = Int64(db.changesCount)
                next.rowsDone += deleted
                FaultInjection.point("drop.mid-batch")
                if deleted < size {
                    try db.execute(sql: "DROP TABLE \(t)")
                    try DeferredLedger.complete(id: step.id, in: db)
                    return false
                }
                try DeferredLedger.saveProgress(next, id: step.id, in: db)
                return true
            } } }
        }
        state = next
        return more
    }

    /// How many times faster SQLite frees a table's pages in one `DROP TABLE` than it deletes
    /// the same rows from the end a batch at a time: `DROP TABLE` reads each page and puts it
    /// on the freelist, where a `DELETE` removes each row from its page and rebalances the
    /// pages it leaves under-full. Measured with Python's `sqlite3` on the benchmark's old table
    /// (docs/Benchmarks.md, "The old rows' rest in one DROP TABLE"): 0.10–0.11 µs a row against
    /// 0.58–0.61 µs at 1M rows and 0.77 µs at 4M. Against the finisher's own idle batches, whose
    /// measured rate is the divisor, less: through stratad at 4M rows, with 4 a drop predicted
    /// at 150 ms held the write lock 159.2 ms (1.53M rows); with 3, 112.6 ms (1.07M rows).
    static let dropSpeedup = 3.0

    /// The rows left in `table` when a `DROP TABLE` of all of them is predicted to fit what no
    /// check can cut short (``StepAside/fitsUninterruptibly(_:)``: one `batch_budget`, idle
    /// batch or not; the prediction errs long, see ``dropSpeedup``) and its pages (all but a
    /// few) lie below the file's final size. Nil before the task has
    /// deleted a batch (no rate yet), for a `WITHOUT ROWID` table (a retired index: no cheap
    /// bound on its rows), while either does not hold, or when a read fails (the rows are
    /// then deleted a batch at a time, as without this step).
    ///
    /// - **Time**: the task's own measured time per deleted row (``Counters/secondsPerRow``)
    ///   over ``dropSpeedup``, times a bound on the rows left, `max(rowid) − min(rowid) + 1`
    ///   (two O(log n) seeks on a reader; never fewer than the rows). The statement cannot be
    ///   interrupted — SQLite frees the pages in one instruction — so a client that arrives
    ///   during it waits for all of it: with the shipped 5 ms budget it takes the last few
    ///   batches' worth of rows, in an idle batch as in a normal one. (Until issue 44 an idle
    ///   batch took up to 60 % of its own 250 ms budget here, about the last million rows of
    ///   the benchmark's table: a client arriving then waited up to 120 ms.)
    /// - **Place**: `DROP TABLE` frees pages in rowid order, so the rest's last pages head
    ///   SQLite's last-in-first-out freelist, and any above the file's final size make the
    ///   vacuum after it search past them for every page it moves (see
    ///   ``dropBatch(_:size:state:step:)``; at 4M rows, the whole old table in one `DROP TABLE`:
    ///   the vacuum 10.5 s against 5.7 s). So at most 1% of the rest's leaf and overflow pages
    ///   (and at least one: a table's first leaf is often one of its last pages, made when the
    ///   root first split) may lie above the final size — the live pages
    ///   (`page_count − freelist_count`) less the rest's own. Interior pages (about one in a
    ///   hundred) are not counted. The page numbers are read from `dbstat` on a reader (no
    ///   lock; O(the rest's pages): 0.4–0.9 s for 250,000 pages, so only once the time fits).
    ///   Deleting from the end takes the highest pages first: when the check fails, the next
    ///   one waits until about as many more rows are deleted as there were pages above
    ///   (``Counters/dropCheckAfter``). A SQLite without `dbstat` never drops at once.
    func restFitsOneDrop(_ table: String, deleted: Int64, step: TaskStep) -> Int64? {
        guard let perRow = step.counters.secondsPerRow, deleted >= step.counters.dropCheckAfter else { return nil }
        let bound: Int64? = try? store.database.read { db in try TableStatistics.rowidSpan(table, db) }
        guard let bound, stepAside.fitsUninterruptibly(.seconds(Double(bound) * perRow / Self.dropSpeedup)) else { return nil }
        let pages: (above: Int64, count: Int64, finalSize: Int64)? = try? store.database.read { db in
            // One pass: each page's number, 0 for an interior page.
            let numbers = try Int64.fetchAll(db, sql: "SELECT CASE WHEN pagetype = 'internal' THEN 0 ELSE pageno END FROM dbstat WHERE name = ? AND schema = 'main'",
                                             arguments: [table])
            let live = (try Int64.fetchOne(db, sql: "PRAGMA page_count") ?? 0) - (try Int64.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0)
            let finalSize = live - Int64(numbers.count)
            return (Int64(numbers.count { $0 > finalSize }), Int64(numbers.count), finalSize)
        }
        guard let pages else {
            step.counters.dropCheckAfter = .max   // no dbstat (or no table): delete to the end
            return nil
        }
        guard pages.above <= max(1, pages.count / 100) else {
            let rowsPerPage = Double(bound) / Double(max(1, pages.count))
            step.counters.dropCheckAfter = deleted + Int64((Double(pages.above) * rowsPerPage).rounded(.up))
            return nil
        }
        return bound
    }

    /// Drops the rest of `table` (at most `rows` rows) in one `DROP TABLE`, with the task's
    /// completion, in one transaction that a client's arrival does not interrupt: an
    /// interrupt after SQLite had freed the pages would roll all of it back. A client that
    /// arrives meanwhile waits for it (predicted within ``StepAside/uninterruptibleBudget``).
    private func dropRest(_ table: String, rows: Int64, step: TaskStep) throws {
        let started = ContinuousClock.now
        try writer("drop rest at once") { db in
            try db.withForeignKeysOff { try Self.leavingFreedPagesToTheVacuum(db) { try inBatchTransaction(step.session, db, interruptible: false) {
                if try db.tableExists(table) { try db.execute(sql: "DROP TABLE \(quoteIdentifier(table))") }
                FaultInjection.point("drop.at-once")
                try DeferredLedger.complete(id: step.id, in: db)
            } } }
        }
        store.logger.debug("dropped the rest of the table in one statement", metadata: [
            "strata.task": "\(step.id)", "strata.table": "\(table)", "strata.rows": "\(rows)",
            "strata.predicted_ms": "\(Int((Double(rows) * (step.counters.secondsPerRow ?? 0) / Self.dropSpeedup * 1000).rounded()))",
            "strata.elapsed_ms": "\(Int((ContinuousClock.now - started).milliseconds.rounded()))"])
    }

    /// Runs a drop batch (set outside its transaction and put back after its commit or
    /// rollback) with `PRAGMA secure_delete = FAST` when the connection zeroes every
    /// freed page (`ON`: the default of Debian's SQLite, compiled with `SQLITE_SECURE_DELETE`)
    /// and the store vacuums (`auto_vacuum` on: a drop is always followed by the vacuum task).
    ///
    /// With `ON`, each leaf page the drop empties is first overwritten with zeros and written
    /// to the WAL and then, by the checkpoint, to the file: a second write of the whole old
    /// table, which the vacuum then overwrites or cuts off anyway. `FAST` still zeroes deleted
    /// cells in every page that is written, but leaves a freed page as it was (SQLite's
    /// documented trade-off). Once the vacuum has run, no freed page is left in the file:
    /// each one below the file's final size has received a moved page, each one above it is
    /// cut off. The old rows' disposal at 1M rows: 1.0–1.3 s → 0.71–0.74 s, 180 MB fewer
    /// bytes written (docs/Benchmarks.md). A store without `auto_vacuum` keeps freed pages in
    /// its file: its drop keeps the connection's setting.
    static func leavingFreedPagesToTheVacuum<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        guard try Int.fetchOne(db, sql: "PRAGMA secure_delete") == 1,
              try (Int.fetchOne(db, sql: "PRAGMA auto_vacuum") ?? 0) != 0 else { return try body() }
        try db.execute(sql: "PRAGMA secure_delete = FAST")
        defer { try? db.execute(sql: "PRAGMA secure_delete = ON") }
        return try body()
    }

    // MARK: - Incremental vacuum

    /// Pages one `PRAGMA incremental_vacuum(N)` statement of a vacuum batch moves at most: the
    /// batch checks its time between two such steps.
    static let vacuumStep = 64
    /// Pages the first step of a run moves: the steps double from there while they are fast
    /// (``vacuumStepPages(after:pages:target:)``). A step that moves pages into free slots
    /// below the file's final size searches the freelist for each, and where a dropped table's
    /// pages lie in it that search is long: a first step of 64 pages held the write lock 14.5 ms
    /// at 1M rows (issue 44).
    static let firstVacuumStep = 8

    /// The pages of the next vacuum step, after one of `pages` pages that took `took`: halved
    /// while a step takes more than half of the batch's `target` (a step cannot be interrupted:
    /// at 16M rows, with the store's pages less often in memory, steps of 64 pages held the
    /// write lock 25 ms and more against a 5 ms budget), doubled again, up to ``vacuumStep``,
    /// while one takes under an eighth of it.
    static func vacuumStepPages(after took: Duration, pages: Int, target: Duration) -> Int {
        if took > target / 2 { return max(1, pages / 2) }
        if took < target / 8 { return min(vacuumStep, pages * 2) }
        return pages
    }

    /// Frees pages in batches. A batch is one transaction of `PRAGMA incremental_vacuum(N)`
    /// steps (each moves up to N ≤ 64 pages from the end of the file into free slots, N adapted
    /// by ``vacuumStepPages(after:pages:target:)``; the file is
    /// truncated at the commit), as many as fit in the budget: **sized by measured time**, not
    /// by a page count. A page count adapted from earlier batches cannot bound a batch: the
    /// first batches only cut free pages off the end of the file (microseconds per page) and
    /// grow the count, and the next ones move live pages (a read, a write and pointer-map
    /// updates each, a disk read when not cached). One statement of thousands of page moves
    /// also outruns the 1.5x-budget interrupt, which SQLite checks every few thousand
    /// instructions: one such batch held the write lock 422.7 ms at 4M rows.
    func runVacuum(_ step: TaskStep) async throws -> Bool {
        step.counters.batchSize = 128   // pages, at most, in the first batch (then adapted)
        return try await runBatches(step, limit: 8192, between: "vacuum.between-batches") { pages in
            let more = try vacuumBatch(pages: min(pages, vacuumPagesFittingACommit), step: step)
            return BatchOutcome(rows: 0, rowsDone: 0, done: !more, reportsDone: !more)
        }
    }

    /// The most pages one vacuum batch may move so that its commit fits what no check can cut
    /// short (``StepAside/uninterruptibleTarget``), at the commit time per moved page the
    /// batches measured, and never less than ``vacuumCommitPerPageFloor``. A vacuum's commit
    /// writes every page it moved (they are not spilled to the WAL before it, as a copy's are):
    /// about 2.5 µs a page here, so 3,840 pages took 9–10 ms and an idle batch of several
    /// thousand 12–22 ms (issue 44).
    var vacuumPagesFittingACommit: Int {
        let perPage = max(pacing.vacuumCommitPerPage ?? .zero, Self.vacuumCommitPerPageFloor)
        return max(64, Int(stepAside.uninterruptibleTarget / perPage))
    }

    /// The least a moved page is assumed to cost at the vacuum's commit. The first batches only
    /// cut free pages off the end of the file and commit almost nothing; the first batch that
    /// moves live pages would otherwise be sized by their rate (2.5 µs a page measured here).
    static let vacuumCommitPerPageFloor = Duration.microseconds(2)

    /// Frees up to `pages` pages, in steps of ``vacuumStep`` until 60% of the budget is spent;
    /// returns whether free pages remain.
    private func vacuumBatch(pages: Int, step: TaskStep) throws -> Bool {
        let id = step.id
        let target = currentBudget * 0.6
        // A step cannot be interrupted: its size is what no check can cut short, idle or not.
        let stepTarget = stepAside.uninterruptibleTarget
        pacing.vacuumPagesMoved = 0
        let more = try writer { db in
            try inBatchTransaction(step.session, db, interruptible: true) {
                // Without auto_vacuum, `PRAGMA incremental_vacuum` does nothing (a store made
                // elsewhere): its free pages stay in the file for reuse, as SQLite keeps them.
                guard try (Int.fetchOne(db, sql: "PRAGMA auto_vacuum") ?? 0) != 0 else {
                    let free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
                    store.logger.notice("no pages to give back: the store was made without auto_vacuum, and its free pages stay in the file for reuse; VACUUM it while it is closed to shrink it", metadata: [
                        "strata.free_pages": "\(free)",
                    ])
                    try DeferredLedger.complete(id: id, in: db)
                    return false
                }
                let start = ContinuousClock.now
                var moved = 0
                var free = 0
                repeat {
                    // A step is a few VM instructions, too few for SQLite's progress handler:
                    // a client's arrival, a stop or an overrun is checked between steps.
                    if moved > 0 { try stepAside.checkBetweenStatements() }
                    let n = min(pacing.vacuumStep, pages - moved)
                    let stepStart = ContinuousClock.now
                    try db.execute(sql: "PRAGMA incremental_vacuum(\(n))")
                    pacing.vacuumStep = Self.vacuumStepPages(after: ContinuousClock.now - stepStart, pages: n, target: stepTarget)
                    moved += n
                    free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
                } while free > 0 && moved < pages && ContinuousClock.now - start < target
                if free == 0 { try DeferredLedger.complete(id: id, in: db) }
                pacing.vacuumPagesMoved = moved
                return free > 0
            }
        }
        // The commit's time per moved page: taken at once when it grows (the first batches only
        // cut free pages off the file's end and commit almost nothing; moving live pages costs
        // far more), let down slowly when it shrinks (one stalled commit does not shrink the
        // batches for long either way).
        if pacing.vacuumPagesMoved >= 16, let commit = lastCommit.value {
            let measured = commit / pacing.vacuumPagesMoved
            pacing.vacuumCommitPerPage = pacing.vacuumCommitPerPage.map { measured > $0 ? measured : $0 * 0.7 + measured * 0.3 } ?? measured
        }
        return more
    }
}
