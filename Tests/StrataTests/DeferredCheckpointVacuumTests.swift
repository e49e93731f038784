import Dispatch
import Foundation
import GRDB
import Synchronization
import Testing
@testable import Strata

/// The end of a run and the incremental vacuum: a pause never waits for a WAL checkpoint, and
/// a vacuum batch is made of small steps.
@Suite("Deferred work: checkpoints off the pause path, vacuum in small steps")
struct DeferredCheckpointVacuumTests {
    // MARK: - Checkpoints

    /// Holds the background checkpoints of one store until opened (at most 20 s, then lets
    /// them go and says so): a run that waited for its checkpoint would return only then.
    final class CheckpointGate: Sendable {
        private let path: String
        private let semaphore = DispatchSemaphore(value: 0)
        private let state = Mutex<(held: Int, opened: Bool, timedOut: Bool)>((0, false, false))

        init(path: String) { self.path = path }

        /// Checkpoints that started (and were held while the gate was closed).
        var held: Int { state.withLock { $0.held } }
        /// Whether a held checkpoint was let go by the time limit instead of by `open()`.
        var timedOut: Bool { state.withLock { $0.timedOut } }

        func observe(_ checkpointPath: String) {
            guard checkpointPath == path else { return }
            let wait = state.withLock { state -> Bool in
                guard !state.opened else { return false }
                state.held += 1
                return true
            }
            guard wait else { return }
            if semaphore.wait(timeout: .now() + 20) == .timedOut {
                state.withLock { $0.timedOut = true }
            }
        }

        func open() {
            let waiting = state.withLock { state -> Int in
                state.opened = true
                return state.held
            }
            for _ in 0..<waiting { semaphore.signal() }
        }
    }

    /// Items with long names (kept by the rewrite): the copy alone writes over 1,000 WAL pages.
    static func seedLongNames(_ count: Int, at url: URL) throws {
        let store = try PersistentStore.open(at: url, model: DeferredMigrationTests.wide)
        try store.database.write { db in
            let statement = try db.makeStatement(sql: "INSERT INTO Item(_pk, name, payload, scratch, rank) VALUES (?, ?, ?, ?, ?)")
            for i in 1...count {
                try statement.execute(arguments: [i, String(repeating: "n", count: 300) + "\(i)", "p", "s", i % 97])
            }
        }
        try store.close()
    }

    @Test("a pause returns while the background WAL checkpoint still runs; close() waits for it; nothing is lost")
    func pauseDoesNotAwaitTheCheckpoint() async throws {
        let directory = TemporaryDirectory("checkpoint-pause")
        let url = directory.file("store.sqlite")
        try Self.seedLongNames(20_000, at: url)
        let gate = CheckpointGate(path: url.path)
        let observer = WALCheckpointer.Observer { gate.observe($0) }
        WALCheckpointer.observer.withLock { $0 = observer }
        defer {
            gate.open()
            WALCheckpointer.observer.withLock { $0 = nil }
        }
        let store = try PersistentStore.open(at: url, model: DeferredMigrationTests.narrow, options: StoreOptions(migration: .deferred))
        // The scheduler's pause: shouldContinue turns false — here once a checkpoint is under way.
        let report = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(5), shouldContinue: { gate.held == 0 }))
        #expect(gate.held > 0, "the run wrote more than 1,000 WAL pages: a background checkpoint started")
        #expect(report.stoppedEarly)
        #expect(!gate.timedOut, "the run returned while its checkpoint was still held")
        // The automatic checkpoint comes back only after the run's last checkpoint (held here):
        // until then a client's commit cannot find the run's frames to copy (issue 44).
        #expect(try DeferredBoundedStepsTests.writerSetting(store, "wal_autocheckpoint") == 0)
        // A run that begins meanwhile keeps the hook; the setting the first run saved comes
        // back after the last run's last checkpoint, not the hook's 0.
        try await store.finishDeferredMigration()
        #expect(try store.pendingDeferredWork().isEmpty)
        #expect(try DeferredBoundedStepsTests.writerSetting(store, "wal_autocheckpoint") == 0)
        gate.open()
        store.checkpointQueue.sync {}
        #expect(try DeferredBoundedStepsTests.writerSetting(store, "wal_autocheckpoint") == 1000)
        try store.close()

        let reopened = try PersistentStore.open(at: url, model: DeferredMigrationTests.narrow, options: StoreOptions(migration: .deferred))
        #expect(try DeferredBoundedStepsTests.integrity(reopened) == "ok")
        #expect(try DeferredMigrationTests.int(reopened, "SELECT count(*) FROM Item") == 20_000)
        #expect(try DeferredMigrationTests.snapshot(reopened) == DeferredMigrationTests.freshSchema(DeferredMigrationTests.narrow))
        try reopened.close()
    }

    @Test("a WAL over the size limit when the work is done is given back once nobody is in the way")
    func theRunsWALIsTruncated() async throws {
        let directory = TemporaryDirectory("checkpoint-truncate")
        let url = directory.file("store.sqlite")
        try Self.seedLongNames(20_000, at: url)
        let store = try PersistentStore.open(at: url, model: DeferredMigrationTests.narrow, options: StoreOptions(migration: .deferred))
        // A WAL of about 80 MiB, as a rewrite's large batches leave it.
        try await store.database.write { db in try db.execute(sql: "UPDATE Item SET name = hex(randomblob(2000))") }
        let before = (try FileManager.default.attributesOfItem(atPath: url.path + "-wal")[.size] as? Int) ?? -1
        #expect(before > PersistentStore.walSizeLimit)
        let report = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(50)))
        #expect(report.tasksRemaining == 0)
        store.checkpointQueue.sync {}   // the run's last checkpoint and the truncation, in the background
        // Cut back during the run (a write after a complete checkpoint, journal_size_limit) or
        // truncated at its end: never left at its largest size.
        let wal = (try FileManager.default.attributesOfItem(atPath: url.path + "-wal")[.size] as? Int) ?? -1
        #expect(wal >= 0 && wal <= PersistentStore.walSizeLimit, "WAL of \(wal) bytes after the run")
        #expect(try DeferredMigrationTests.int(store, "SELECT count(*) FROM Item") == 20_000)
        #expect(try DeferredBoundedStepsTests.integrity(store) == "ok")
        try store.close()
    }

    @Test("a WAL within the size limit is truncated by one attempt that waits for nobody; a writer in the way keeps it; a larger one is the trimmer's")
    func truncationWaitsForNobody() async throws {
        let directory = TemporaryDirectory("checkpoint-truncate-now")
        let url = directory.file("store.sqlite")
        try Self.seedLongNames(20_000, at: url)
        let store = try PersistentStore.open(at: url, model: DeferredMigrationTests.wide)
        defer { try? store.close() }
        func walSize() -> Int { ((try? FileManager.default.attributesOfItem(atPath: url.path + "-wal"))?[.size] as? Int) ?? -1 }
        let checkpointer = try WALCheckpointer(store: store)
        defer {
            checkpointer.stop(store: store)
            store.checkpointQueue.sync {}
        }
        // Over the limit: a truncation would hold the write lock for the whole file; left alone.
        try await store.database.write { db in try db.execute(sql: "UPDATE Item SET name = hex(randomblob(2000))") }
        #expect(walSize() > PersistentStore.walSizeLimit)
        checkpointer.truncateIfFree(store: store)
        #expect(walSize() > PersistentStore.walSizeLimit)
        // Within the limit (a fresh WAL of some MiB).
        _ = try await store.database.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        try await store.database.write { db in try db.execute(sql: "UPDATE Item SET name = hex(randomblob(100)) WHERE _pk <= 500") }
        #expect(walSize() > 0 && walSize() <= PersistentStore.walSizeLimit)
        // Another connection in a write transaction: busy at once, nothing waits, the WAL stays.
        let other = try DatabaseQueue(path: url.path)
        try await other.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN IMMEDIATE")
            let started = ContinuousClock.now
            checkpointer.truncateIfFree(store: store)
            #expect(ContinuousClock.now - started < .seconds(1))
            try db.execute(sql: "ROLLBACK")
        }
        #expect(walSize() > 0)
        checkpointer.truncateIfFree(store: store)
        #expect(walSize() == 0)
        #expect(try DeferredMigrationTests.int(store, "SELECT count(*) FROM Item") == 20_000)
    }

    // MARK: - Vacuum

    @Test("the incremental vacuum moves at most 64 pages per statement and empties the freelist")
    func vacuumInSmallSteps() async throws {
        let directory = TemporaryDirectory("vacuum-steps")
        let url = directory.file("store.sqlite")
        try DeferredMigrationTests.seedItems(20_000, at: url)
        let store = try PersistentStore.open(at: url, model: DeferredMigrationTests.narrow, options: StoreOptions(migration: .deferred))
        let statements = Mutex<[String]>([])
        try await store.database.writeWithoutTransaction { db in
            db.trace(options: .statement) { event in
                if case .statement(let statement) = event, statement.sql.contains("incremental_vacuum") {
                    statements.withLock { $0.append(statement.sql) }
                }
            }
        }
        // A generous budget: a page count adapted from fast batches would grow past one step.
        let report = try await store.finishDeferredMigration(FinishOptions(batchBudget: .seconds(2)))
        #expect(report.tasksRemaining == 0)
        let sizes = statements.withLock { $0 }.compactMap { sql -> Int? in
            guard let open = sql.firstIndex(of: "("), let close = sql.firstIndex(of: ")") else { return nil }
            return Int(sql[sql.index(after: open)..<close])
        }
        #expect(sizes.count > 1, "the freelist of a dropped 20,000-row table takes several steps")
        #expect(sizes.allSatisfy { $0 <= DeferredFinisher.vacuumStep })
        #expect(try DeferredMigrationTests.int(store, "PRAGMA freelist_count") == 0)
        #expect(try DeferredBoundedStepsTests.integrity(store) == "ok")
        #expect(try DeferredMigrationTests.int(store, "SELECT count(*) FROM Item") == 20_000)
        try store.close()
    }

    @Test("a vacuum step that takes over half the batch's target halves the next; a quick one doubles it, up to 64 pages")
    func vacuumStepAdapts() {
        let target = Duration.milliseconds(3)
        #expect(DeferredFinisher.vacuumStepPages(after: .milliseconds(25), pages: 64, target: target) == 32)
        #expect(DeferredFinisher.vacuumStepPages(after: .milliseconds(2), pages: 32, target: target) == 16)
        #expect(DeferredFinisher.vacuumStepPages(after: .milliseconds(9), pages: 1, target: target) == 1)
        #expect(DeferredFinisher.vacuumStepPages(after: .milliseconds(1), pages: 16, target: target) == 16)
        #expect(DeferredFinisher.vacuumStepPages(after: .microseconds(100), pages: 16, target: target) == 32)
        #expect(DeferredFinisher.vacuumStepPages(after: .microseconds(100), pages: 64, target: target) == 64)
        // Steps slowed down by a slow disk come down to what fits; then, quick again, back up.
        var pages = DeferredFinisher.vacuumStep
        for _ in 0..<10 { pages = DeferredFinisher.vacuumStepPages(after: .milliseconds(Int64(pages) / 8 + 1), pages: pages, target: target) }
        #expect(pages <= 8)
        for _ in 0..<10 { pages = DeferredFinisher.vacuumStepPages(after: .microseconds(50), pages: pages, target: target) }
        #expect(pages == DeferredFinisher.vacuumStep)
    }
}
