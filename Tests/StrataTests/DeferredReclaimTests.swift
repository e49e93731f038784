import Foundation
import GRDB
import Testing
@testable import Strata

/// `FinishOptions.reclaimSpace = false` (what stratad's `FinishDeferred` asks for unless told
/// `reclaim`): the run ends once the change is complete and only the vacuum is left; a later
/// run (the scheduler's idle turn) gives the free pages back.
@Suite("Deferred work: the vacuum left for later, the change complete without it")
struct DeferredReclaimTests {
    static let rows = 20_000

    static func freePages(_ store: PersistentStore) async throws -> Int {
        try await store.database.read { try Int.fetchOne($0, sql: "PRAGMA freelist_count") } ?? -1
    }

    @Test("without reclaim the change finishes and only the vacuum is left; a run with it gives every free page back")
    func vacuumLeftForALaterRun() async throws {
        let directory = TemporaryDirectory("reclaim-later")
        let store = try DeferredIdleBatchTests.store(rows: Self.rows, in: directory)
        var options = FinishOptions(batchBudget: .milliseconds(5))
        options.reclaimSpace = false
        let change = try await store.finishDeferredMigration(options)
        // The rewrite and the old rows' drop: finished, not stopped early, the vacuum left on purpose.
        #expect(change.tasksFinished == 2)
        #expect(change.tasksRemaining == 1)
        #expect(change.spaceReclaimLeft)
        #expect(!change.stoppedEarly)
        #expect(try store.pendingDeferredWork().map(\.kind) == [.incrementalVacuum])
        // The change itself is complete: every row, the new index, the old table gone.
        let (count, index, oldTables) = try await store.database.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM Item"),
             try String.fetchOne(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Item' AND name LIKE '%byRank%'"),
             try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE name LIKE '_strata_old_%'"))
        }
        #expect(count == Self.rows)
        #expect(index != nil)
        #expect(oldTables == 0)
        let columns = try await store.database.read { try $0.columns(in: "Item").map(\.name) }
        #expect(!columns.contains("note") && columns.contains("rank"))
        #expect(try await Self.freePages(store) > 100, "the old rows' pages wait in the file")
        // The change's history entry is written when the change is complete.
        let history = try await store.database.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM \(MetadataSchema.historyTable) WHERE kind = 'deferred-finished'") }
        #expect(history == 1)

        // Asked again without reclaim: nothing to do, and still not "stopped early".
        let nothing = try await store.finishDeferredMigration(options)
        #expect(nothing.tasksFinished == 0 && nothing.spaceReclaimLeft && !nothing.stoppedEarly)

        // The default (reclaimSpace true): the vacuum runs and leaves no free page.
        let reclaim = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(5)))
        #expect(reclaim.tasksFinished == 1)
        #expect(!reclaim.spaceReclaimLeft && !reclaim.stoppedEarly && reclaim.tasksRemaining == 0)
        #expect(try await Self.freePages(store) == 0)
        try DeferredIdleBatchTests.check(store, rows: Self.rows)
        try store.close()
    }

    @Test("a run without reclaim that is stopped before the change is complete says stopped early")
    func stoppedBeforeTheChangeIsComplete() async throws {
        let directory = TemporaryDirectory("reclaim-stopped")
        let store = try DeferredIdleBatchTests.store(rows: Self.rows, in: directory)
        var options = FinishOptions(batchBudget: .milliseconds(5), maxTasks: 1)
        options.reclaimSpace = false
        let first = try await store.finishDeferredMigration(options)
        #expect(first.tasksFinished == 1)
        #expect(!first.spaceReclaimLeft, "the old rows' drop is still pending: the change is not complete")
        let stopped = FinishOptions(batchBudget: .milliseconds(5), shouldContinue: { false })
        var stoppedWithoutReclaim = stopped
        stoppedWithoutReclaim.reclaimSpace = false
        let report = try await store.finishDeferredMigration(stoppedWithoutReclaim)
        #expect(report.stoppedEarly && report.tasksFinished == 0 && report.tasksRemaining == 2)
        try store.close()
    }
}
