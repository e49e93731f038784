import Foundation
import Strata
import Testing

/// Pacing has one owner: the library's cost delay (`FinishOptions.pauseBetweenBatches`);
/// `shouldContinue` is a pure check the library asks before each batch and during a pause.
@Suite("Deferred work: the library paces")
struct DeferredPacingTests {
    @Test("a stop during a long cost delay ends the run at once, progress kept", .timeLimit(.minutes(1)))
    func stopDuringPause() async throws {
        let directory = TemporaryDirectory("pacing-stop")
        let url = directory.file("store.sqlite")
        try DeferredMigrationTests.seedItems(2000, at: url)
        let store = try PersistentStore.open(at: url, model: DeferredMigrationTests.narrow, options: StoreOptions(migration: .deferred))
        defer { try? store.close() }
        // A 60 s cost delay after every batch: without the checks during the pause, the run
        // would sleep a minute (and the time limit would fail the test).
        let asked = Counter()
        let report = try await store.finishDeferredMigration(FinishOptions(
            batchBudget: .milliseconds(1), pauseBetweenBatches: .seconds(60), shouldContinue: { asked.increment() < 5 }))
        #expect(report.stoppedEarly)
        #expect(report.batches >= 1)
        #expect(report.pauseSeconds > 0, "the run paused after its first batch")
        #expect(report.pauseSeconds < 30, "the pause ended when shouldContinue said no: \(report.pauseSeconds) s")
        let task = try #require(try store.pendingDeferredWork().first)
        #expect(task.rowsDone > 0 && task.rowsDone < 2000)
    }

    @Test("without a cost delay nothing is slept; with one, the report counts it")
    func pauseIsReported() async throws {
        let directory = TemporaryDirectory("pacing-report")
        for pause in [Duration.zero, .milliseconds(1)] {
            let url = directory.file("store-\(pause.components.attoseconds).sqlite")
            try DeferredMigrationTests.seedItems(2000, at: url)
            let store = try PersistentStore.open(at: url, model: DeferredMigrationTests.narrow, options: StoreOptions(migration: .deferred))
            let report = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1), pauseBetweenBatches: pause))
            #expect(report.tasksRemaining == 0)
            #expect(report.batches > 2)
            if pause == .zero { #expect(report.pauseSeconds == 0) } else { #expect(report.pauseSeconds > 0) }
            #expect(try DeferredMigrationTests.int(store, "SELECT count(*) FROM Item") == 2000)
            try store.close()
        }
    }
}
