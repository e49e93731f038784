import Foundation
import GRDB
import Synchronization
import Testing
@testable import Strata

/// Idle batches: while no client call is in flight (`FinishOptions.clientsActive`), batches
/// may take `idleBatchBudget` and no cost delay is slept; a client's arrival aborts the batch
/// in flight (rolled back), and the work goes on with batches of the normal budget.
@Suite("Deferred work: idle batches, and giving way to a client")
struct DeferredIdleBatchTests {
    static let v1 = ObjectModel(version: "idle 1", entities: [
        Entity("Item", attributes: [Attribute("name", .string), Attribute("rank", .int64), Attribute("note", .string)],
               indexes: [Index("byRank", keyPaths: ["rank"])]),
    ])
    static let v2 = ObjectModel(version: "idle 2", entities: [
        Entity("Item", attributes: [Attribute("name", .string), Attribute("rank", .int64)], indexes: [Index("byRank", keyPaths: ["rank"])]),
    ])

    /// A store of `rows` items at v1, opened at v2 with deferral (a rewrite and its drops pending).
    /// `note` is the SQL of each item's note (the column v2 drops), over the row number `i`.
    static func store(rows: Int, in directory: TemporaryDirectory, note: String = "'note ' || i") throws -> PersistentStore {
        let url = directory.file("store.sqlite")
        let old = try PersistentStore.open(at: url, model: v1)
        try old.database.writeWithoutTransaction { db in
            try db.execute(sql: """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                INSERT INTO Item (_pk, name, rank, note) SELECT i, 'item ' || i, i % 13, \(note) FROM n
                """, arguments: [rows])
        }
        try old.close()
        return try PersistentStore.open(at: url, model: v2, options: StoreOptions(migration: .deferred))
    }

    static func check(_ store: PersistentStore, rows: Int) throws {
        let (count, integrity) = try store.database.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM Item"), try String.fetchOne(db, sql: "PRAGMA integrity_check"))
        }
        #expect(count == rows)
        #expect(integrity == "ok")
        #expect(try store.pendingDeferredWork().isEmpty)
    }

    @Test("with nobody in flight, batches grow past batch_budget; the cost delay still applies")
    func idleBatchesAreLargerAndUnpaced() async throws {
        let rows = 60_000
        var reports: [Bool: FinishReport] = [:]
        for active in [true, false] {
            let directory = TemporaryDirectory("idle")
            let store = try Self.store(rows: rows, in: directory)
            let options = FinishOptions(batchBudget: .milliseconds(2), pauseBetweenBatches: .milliseconds(2),
                                        clientsActive: { active }, idleBatchBudget: .milliseconds(100))
            reports[active] = try await store.finishDeferredMigration(options)
            try Self.check(store, rows: rows)
            try store.close()
        }
        let busy = try #require(reports[true]), idle = try #require(reports[false])
        // Each task's batches start small and grow, which at 60,000 rows takes most of the idle
        // run's batches: about 22 idle against 61–66 busy. Half as many is the bound that holds
        // under a loaded parallel run (a third came out at 66 vs 66 there).
        #expect(idle.batches * 2 < busy.batches, "idle: \(idle.batches) batches, busy: \(busy.batches)")
        #expect(idle.pauseSeconds > 0 && busy.pauseSeconds > 0)
        #expect(idle.batchesYielded == 0 && busy.batchesYielded == 0)
        #expect(idle.idleBatches > 0 && busy.idleBatches == 0)
    }

    @Test("no batch takes more than maxBatchSize rows, however long its idle budget")
    func idleBatchesAreCapped() async throws {
        let rows = 150_000
        let directory = TemporaryDirectory("idle-cap")
        let store = try Self.store(rows: rows, in: directory)
        // A 5 s idle budget with nobody ever in flight: only the cap bounds the batches.
        var options = FinishOptions(batchBudget: .milliseconds(5), clientsActive: { false }, idleBatchBudget: .seconds(5))
        options.maxTasks = 1
        let steps = Mutex<[Int64]>([])
        let report = try await store.finishDeferredMigration(options) { progress in
            guard progress.task.kind == .rewriteTable else { return }
            steps.withLock { $0.append(progress.task.rowsDone) }
        }
        #expect(report.tasksFinished == 1)
        // The copy's batches, from the rewrite's progress: each the rows it added.
        let done = [0] + steps.withLock { $0 }.filter { $0 <= Int64(rows) }
        let sizes = zip(done.dropFirst(), done).map { $0 - $1 }.filter { $0 > 0 }
        #expect(!sizes.isEmpty)
        #expect(sizes.allSatisfy { $0 <= Int64(DeferredFinisher.Counters.maxBatchSize) }, "copy batches: \(sizes)")
        // The idle budget did let them grow to the cap (with the old limit of 200,000 the first
        // idle batch, scaled by the budgets' ratio, took all 150,000 rows).
        #expect(sizes.contains(Int64(DeferredFinisher.Counters.maxBatchSize)), "copy batches: \(sizes)")
        try store.close()
    }

    @Test("the rest of a dropped table goes in one DROP TABLE only once it fits the normal batch budget, idle batch or not (issue 44)")
    func dropAtOnceFitsTheNormalBudget() async throws {
        let rows = 100_000
        var deleted: [Bool: Int64] = [:]
        for idle in [true, false] {
            let directory = TemporaryDirectory("idle-drop")
            let store = try Self.store(rows: rows, in: directory)
            let options = FinishOptions(batchBudget: .milliseconds(2), pauseBetweenBatches: .zero,
                                        clientsActive: { !idle }, idleBatchBudget: .milliseconds(250))
            let dropped = Mutex<(rows: Int64, done: Bool)>((0, false))
            let report = try await store.finishDeferredMigration(options) { progress in
                guard progress.task.kind == .dropTable, progress.task.table == "_strata_old_Item" else { return }
                dropped.withLock { $0 = (max($0.rows, progress.task.rowsDone), $0.done || progress.task.state == .done) }
            }
            #expect(report.tasksRemaining == 0)
            let (rowsDeleted, done) = dropped.withLock { $0 }
            #expect(done, "idle \(idle): the old table's drop reported done")
            deleted[idle] = rowsDeleted
            try Self.check(store, rows: rows)
            let (oldTables, free) = try await store.database.read { db in
                (try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE name LIKE '_strata_old_%'"),
                 try Int.fetchOne(db, sql: "PRAGMA freelist_count"))
            }
            #expect(oldTables == 0 && free == 0, "idle \(idle): \(oldTables ?? -1) old tables, \(free ?? -1) free pages")
            try store.close()
        }
        // A DROP TABLE cannot be interrupted: a client arriving during it waits for all of it.
        // So only what fits the 2 ms batch budget (a few thousand rows, at a third of
        // the delete's time per row) goes at once — in an idle batch too, whose 250 ms budget
        // once let it take the last two thirds of the table here (a client arriving then waited
        // for all of it). Every other row is deleted one by one, in batches a client's arrival ends.
        let idleDeleted = try #require(deleted[true]), busyDeleted = try #require(deleted[false])
        #expect(idleDeleted >= Int64(rows) * 9 / 10, "idle: \(idleDeleted) of \(rows) rows deleted one by one")
        #expect(busyDeleted >= Int64(rows) * 9 / 10, "busy: \(busyDeleted) of \(rows) rows deleted one by one")
    }

    @Test("a client's arrival aborts the idle batch in flight; the work goes on at the normal budget and completes")
    func clientArrivalAbortsTheIdleBatch() async throws {
        let rows = 60_000
        let directory = TemporaryDirectory("idle")
        let store = try Self.store(rows: rows, in: directory)
        // Nobody is in flight when the first batch begins; a client arrives while it runs and
        // stays (every later question says so).
        let asked = Atomic<Int>(0)
        let options = FinishOptions(batchBudget: .milliseconds(5), clientsActive: { asked.add(1, ordering: .relaxed).newValue > 1 },
                                    idleBatchBudget: .milliseconds(500))
        let report = try await store.finishDeferredMigration(options)
        #expect(report.batchesYielded == 1)
        #expect(report.tasksRemaining == 0)
        try Self.check(store, rows: rows)
        // The rolled-back batch left nothing behind: the rows are the seed's.
        let names = try await store.database.read { db in try String.fetchAll(db, sql: "SELECT name FROM Item WHERE _pk IN (1, 30000, 60000) ORDER BY _pk") }
        #expect(names == ["item 1", "item 30000", "item 60000"])
        try store.close()
    }

    @Test("no idle batch begins before the clients have been quiet for one idle budget")
    func idleBatchesWaitForAQuietSpell() async throws {
        let rows = 20_000
        // Nobody is in flight between calls, but the last call ended 40 ms ago: not quiet for
        // the idle budget of 100 ms.
        let directory = TemporaryDirectory("idle")
        let store = try Self.store(rows: rows, in: directory)
        let options = FinishOptions(batchBudget: .milliseconds(2), clientsActive: { false }, clientsQuiet: { .milliseconds(40) },
                                    idleBatchBudget: .milliseconds(100))
        let report = try await store.finishDeferredMigration(options)
        #expect(report.idleBatches == 0)
        #expect(report.batchesYielded == 0)
        try Self.check(store, rows: rows)
        try store.close()
    }

    @Test("an idle batch that gave way doubles the quiet spell the next one waits for",
          arguments: [(quiet: 150, idleAfterward: false), (quiet: 250, idleAfterward: true)])
    func givingWayLengthensTheQuietSpell(quiet: Int, idleAfterward: Bool) async throws {
        let rows = 60_000
        let directory = TemporaryDirectory("idle")
        let store = try Self.store(rows: rows, in: directory)
        // The clients have been quiet for `quiet` ms whenever asked (the idle budget is 100 ms);
        // one call arrives during the first idle batch (the second question), then none.
        let asked = Atomic<Int>(0)
        let options = FinishOptions(batchBudget: .milliseconds(2), clientsActive: { asked.add(1, ordering: .relaxed).newValue == 2 },
                                    clientsQuiet: { .milliseconds(quiet) }, idleBatchBudget: .milliseconds(100))
        let report = try await store.finishDeferredMigration(options)
        #expect(report.batchesYielded == 1)
        // After the give-way the wait is 200 ms: 150 ms of quiet no longer begins an idle
        // batch; 250 ms still does.
        if idleAfterward {
            #expect(report.idleBatches > 1, "idle batches: \(report.idleBatches)")
        } else {
            #expect(report.idleBatches == 1, "idle batches: \(report.idleBatches)")
        }
        try Self.check(store, rows: rows)
        try store.close()
    }

    @Test("a client's arrival aborts an idle vacuum batch between two of its steps")
    func clientArrivalAbortsAnIdleVacuumBatch() async throws {
        let rows = 100_000
        let directory = TemporaryDirectory("idle")
        let store = try Self.store(rows: rows, in: directory)
        // Once the vacuum has run a batch (its progress reported), the next batch begins idle
        // (the first question) and a client arrives while it runs (the second). Each of the
        // vacuum's `PRAGMA incremental_vacuum(64)` steps is too short for SQLite's progress
        // handler: the arrival is seen between two steps, or not at all.
        let vacuuming = Atomic<Bool>(false)
        let asked = Atomic<Int>(0)
        let options = FinishOptions(batchBudget: .milliseconds(1), clientsActive: {
            vacuuming.load(ordering: .relaxed) && asked.add(1, ordering: .relaxed).newValue == 2
        }, idleBatchBudget: .milliseconds(50))
        let report = try await store.finishDeferredMigration(options) { progress in
            if progress.task.kind == .incrementalVacuum { vacuuming.store(true, ordering: .relaxed) }
        }
        #expect(asked.load(ordering: .relaxed) >= 2, "the vacuum ran one batch only")
        #expect(report.batchesYielded == 1)
        try Self.check(store, rows: rows)
        let free = try await store.database.read { db in try Int.fetchOne(db, sql: "PRAGMA freelist_count") }
        #expect(free == 0)
        try store.close()
    }

    @Test("an idle vacuum batch moves no more pages than its commit can write within the batch budget (issue 44)")
    func idleVacuumBatchesFitTheirCommit() async throws {
        let rows = 100_000
        let directory = TemporaryDirectory("idle-vacuum")
        // Notes of 200 characters, dropped by v2: the old table leaves thousands of free pages.
        let store = try Self.store(rows: rows, in: directory, note: "printf('%200d', i)")
        var change = FinishOptions(batchBudget: .milliseconds(1), clientsActive: { false }, idleBatchBudget: .milliseconds(250))
        change.reclaimSpace = false
        let changed = try await store.finishDeferredMigration(change)
        #expect(changed.spaceReclaimLeft)
        let free = try #require(try await store.database.read { db in try Int.fetchOne(db, sql: "PRAGMA freelist_count") })
        #expect(free > 5_000, "\(free) free pages")
        let report = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1), clientsActive: { false },
                                                                           idleBatchBudget: .milliseconds(250)))
        #expect(report.tasksRemaining == 0)
        // A vacuum's commit writes every page it moved and cannot be cut short: an idle batch
        // moves at most what 60 % of the 1 ms budget writes at the assumed 2 µs a page (300
        // pages), where its 250 ms budget alone would let it move 8,192.
        let perBatch = Int(Duration.microseconds(600) / DeferredFinisher.vacuumCommitPerPageFloor)
        #expect(report.batches >= free / perBatch, "\(report.batches) batches for \(free) pages")
        try Self.check(store, rows: rows)
        let left = try await store.database.read { db in try Int.fetchOne(db, sql: "PRAGMA freelist_count") }
        #expect(left == 0)
        try store.close()
    }

    @Test("another process's commits between batches keep batches from being idle, as a client's calls do",
          arguments: [false, true])
    func otherProcessesWritesCountAsCalls(writing: Bool) async throws {
        let rows = 60_000
        let directory = TemporaryDirectory("idle")
        let store = try Self.store(rows: rows, in: directory)
        // Another connection to the file (another process, as far as the store can tell)
        // renames one item after every batch; no call of the store's own clients is ever in
        // flight, and they have been quiet for ever.
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let other = try DatabaseQueue(path: directory.file("store.sqlite").path, configuration: configuration)
        let writes = Atomic<Int>(0)
        let options = FinishOptions(batchBudget: .milliseconds(2), clientsActive: { false }, clientsQuiet: { .seconds(3600) },
                                    idleBatchBudget: .milliseconds(100))
        let report = try await store.finishDeferredMigration(options) { _ in
            guard writing else { return }
            let n = writes.add(1, ordering: .relaxed).newValue
            try? other.write { db in try db.execute(sql: "UPDATE Item SET name = ? WHERE _pk = 7", arguments: ["renamed \(n)"]) }
        }
        if writing {
            // Before each batch the writer looks for another connection's commits, and there
            // is one after every batch that reports progress: on a quiet machine only the first
            // batch begins idle. On a loaded one a batch that overran (rolled back, no report)
            // can outlast the 100 ms spell, and the next one is rightly idle: a few in a
            // hundred. Without the look, nearly every batch is idle (14 of 18 in a loaded run
            // that only looked inside the batch).
            #expect(writes.load(ordering: .relaxed) > 3)
            #expect(report.idleBatches * 10 <= report.batches, "idle \(report.idleBatches) of \(report.batches)")
        } else {
            #expect(report.idleBatches > 3, "idle \(report.idleBatches) of \(report.batches)")
        }
        try Self.check(store, rows: rows)
        let name = try await store.database.read { db in try String.fetchOne(db, sql: "SELECT name FROM Item WHERE _pk = 7") }
        #expect(name == (writing ? "renamed \(writes.load(ordering: .relaxed))" : "item 7"))
        try other.close()
        try store.close()
    }

    @Test("idleBatchBudget is never below batchBudget")
    func idleBudgetFloor() {
        let options = FinishOptions(batchBudget: .milliseconds(50), idleBatchBudget: .milliseconds(10))
        #expect(options.idleBatchBudget == .milliseconds(50))
        #expect(FinishOptions().idleBatchBudget == .milliseconds(250))
        #expect(FinishOptions().clientsActive == nil)
        #expect(FinishOptions().clientsQuiet == nil)
    }

    @Test("a batch's time is its own work: waiting behind a client's write does not shrink the batches",
          .timeLimit(.minutes(2)))
    func writerWaitDoesNotShrinkBatches() async throws {
        let rows = 5_000
        let directory = TemporaryDirectory("writer-wait")
        let store = try Self.store(rows: rows, in: directory)
        defer { try? store.close() }
        // Two "clients" that take turns holding the writer 8 ms at a time: every batch queues
        // behind one of them. Counted in the batch's time, that wait (over six times the 1.2 ms
        // a 2 ms budget aims at) cut every batch to a quarter, down to the 16-row floor: over 300
        // batches for each of the copy and the drop, each one behind a client. Counted apart,
        // batches size for their own work.
        let stop = Atomic<Bool>(false)
        let hogs = (0..<2).map { _ in
            Thread {
                while !stop.load(ordering: .relaxed) {
                    try? store.database.writeWithoutTransaction { _ in Thread.sleep(forTimeInterval: 0.008) }
                }
            }
        }
        for hog in hogs { hog.start() }
        let report = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(2), pauseBetweenBatches: .zero))
        stop.store(true, ordering: .relaxed)
        #expect(report.tasksRemaining == 0)
        // Under a parallel test run's load 174–240 batches (CPU starvation counts as the
        // batches' own time, and shrinks them); counting the queue made it over 600.
        #expect(report.batches < 450, "\(report.batches) batches for \(rows) rows: the writer's queue was counted as the batches' work")
        try Self.check(store, rows: rows)
    }
}
