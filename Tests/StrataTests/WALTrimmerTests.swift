import Foundation
import GRDB
import Synchronization
import Testing
@testable import Strata

/// A WAL that deferred work let grow is cut back in bounded steps under the write lock, never
/// past its last committed frame, instead of all at once by the client write that restarts it.
@Suite("WAL trimming: a grown WAL is cut back in steps, never past its last committed frame")
struct WALTrimmerTests {
    static let model = WALSizeLimitTests.model

    static func walBytes(_ store: PersistentStore) -> Int { PersistentStore.fileSize(store.path + "-wal") }

    static func header(_ store: PersistentStore) throws -> WALIndexHeader {
        try #require(WALIndexHeader.read(store.path + "-shm"))
    }

    /// About 80 MiB of rows in one transaction (the WAL all in use, nothing checkpointed).
    static func grow(_ store: PersistentStore, from first: Int = 1) throws {
        try store.database.write { db in
            try db.execute(sql: """
                WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ? + 19999)
                INSERT INTO "Blob"("_pk", "bytes") SELECT i, randomblob(4000) FROM n
                """, arguments: [first, first])
        }
    }

    static func step(_ store: PersistentStore, restart: Bool = false) throws -> WALTrimmer.Outcome {
        try store.database.writeWithoutTransaction { db in
            try store.walTrimmer.step(db, budget: .milliseconds(20), restart: restart)
        }
    }

    /// Runs `body` on a fresh store while a run is engaged (its checkpointer stopped after).
    static func withEngagedRun(_ body: (PersistentStore) throws -> Void) throws {
        let temp = TemporaryStore()
        let store = try temp.open(model)
        defer { try? store.close() }
        let checkpointer = try WALCheckpointer(store: store)
        defer {
            checkpointer.stop(store: store)
            // The bodies check their own cutting; the trimming after the run is not waited
            // for (closing the trimmer ends it within its next wait, at most a second), so
            // that a WAL it could not cut never holds this test's thread for its patience.
            store.walTrimmer.close()
            store.checkpointQueue.sync {}
        }
        try body(store)
    }

    static func rows(_ store: PersistentStore) throws -> Int {
        try store.database.read { db in try Int.fetchOne(db, sql: #"SELECT count(*) FROM "Blob""#) ?? -1 }
    }

    @Test("while a run is engaged the write that restarts the WAL leaves it; steps cut it back by at most a step each, and the limit comes back")
    func engagedRestartKeepsTheFileAndStepsCutIt() throws {
        let temp = TemporaryStore()
        let store = try temp.open(Self.model)
        defer { try? store.close() }
        let checkpointer = try WALCheckpointer(store: store)
        #expect(try DeferredBoundedStepsTests.writerSetting(store, "journal_size_limit") == -1)
        // Grown, copied, then one write: SQLite restarts the WAL at it. Without the engagement
        // that write's commit would cut the file to the limit, all at once.
        try WALSizeLimitTests().growThenRestart(store)
        let grown = Self.walBytes(store)
        #expect(grown > 75 << 20, "WAL of \(grown) bytes")
        let restarted = try Self.header(store)
        #expect(restarted.committedEnd < 1 << 20, "the WAL restarted: \(restarted.frames) frames in use")
        #expect(store.walTrimmer.hasTail)

        var sizes = [grown]
        var outcomes: [WALTrimmer.Outcome] = []
        while outcomes.last != .done, outcomes.count < 200 {
            outcomes.append(try Self.step(store))
            sizes.append(Self.walBytes(store))
        }
        #expect(outcomes.last == .done)
        #expect(outcomes.dropLast().allSatisfy { $0 == .more }, "\(outcomes)")
        let cuts = zip(sizes, sizes.dropFirst()).map { $0 - $1 }
        #expect(cuts.first ?? 0 <= WALTrimmer.initialStep, "the first step cut \(cuts.first ?? 0) bytes")
        #expect(cuts.allSatisfy { $0 > 0 && $0 <= WALTrimmer.maximumStep }, "\(cuts)")
        #expect(zip(cuts, cuts.dropFirst()).allSatisfy { $1 <= max($0 * 2, WALTrimmer.minimumStep) }, "a step at most doubles: \(cuts)")
        #expect(sizes.last == PersistentStore.walSizeLimit)
        #expect(store.walTrimmer.trimmedBytes.load(ordering: .relaxed) == grown - PersistentStore.walSizeLimit)
        #expect(try Self.rows(store) == 20_001)
        #expect(try DeferredBoundedStepsTests.integrity(store) == "ok")

        // After the run: nothing left to cut, and the writer cuts at restarts again.
        checkpointer.stop(store: store)
        store.checkpointQueue.sync {}
        #expect(!store.walTrimmer.isEngaged)
        #expect(try DeferredBoundedStepsTests.writerSetting(store, "journal_size_limit") == PersistentStore.walSizeLimit)
    }

    @Test("a file left less than a minimum cut over the limit, its WAL restarted, is cut to the limit in one step")
    func theLastBitOverTheLimitIsCut() throws {
        try Self.withEngagedRun { store in
            try WALSizeLimitTests().growThenRestart(store)
            // What an earlier step's cut can leave: the file a few hundred KiB over the limit,
            // past the WAL in use (cut here under the write lock, as a step does).
            let left = PersistentStore.walSizeLimit + 300 << 10
            try store.database.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    #expect(truncate(store.path + "-wal", off_t(left)) == 0)
                    return .commit
                }
            }
            #expect(Self.walBytes(store) == left)
            #expect(try Self.header(store).committedEnd < 1 << 20)
            #expect(store.walTrimmer.hasTail)
            #expect(try Self.step(store, restart: true) == .done)
            #expect(Self.walBytes(store) == PersistentStore.walSizeLimit)
            #expect(try Self.rows(store) == 20_001)
            #expect(try DeferredBoundedStepsTests.integrity(store) == "ok")
        }
    }

    @Test("a WAL all in use is not cut; once a checkpoint copied it, one write of the unchanged user_version restarts it and the steps cut")
    func aWALInUseWaitsForACheckpointAndARestart() throws {
        try Self.withEngagedRun { store in
            try store.database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA user_version = 7") }
            try Self.grow(store)
            let grown = Self.walBytes(store)
            #expect(grown > PersistentStore.walSizeLimit)
            #expect(!store.walTrimmer.hasTail)
            #expect(try Self.step(store) == .waiting)
            #expect(try Self.step(store, restart: true) == .waiting, "nothing is copied yet: no restart write")
            #expect(Self.walBytes(store) == grown)

            _ = try store.database.writeWithoutTransaction { db in try db.checkpoint(.passive) }
            #expect(try Self.step(store) == .waiting, "without restart, a copied WAL still waits for a write")
            #expect(try Self.step(store, restart: true) == .more)
            #expect(try Self.header(store).frames <= 2, "the restart write began the WAL over")
            var outcome = WALTrimmer.Outcome.more
            for _ in 0..<200 where outcome == .more { outcome = try Self.step(store) }
            #expect(outcome == .done)
            #expect(Self.walBytes(store) == PersistentStore.walSizeLimit)
            #expect(try store.database.read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") } == 7)
            #expect(try Self.rows(store) == 20_000)
            #expect(try DeferredBoundedStepsTests.integrity(store) == "ok")
        }
    }

    @Test("a reader's snapshot keeps the WAL from restarting: the frames it reads stay, and the cut waits for it")
    func aReadersSnapshotIsNeverCut() throws {
        try Self.withEngagedRun { store in
            try Self.grow(store)
            let reader = try DatabaseQueue(path: store.path)
            defer { try? reader.close() }
            let sum = "SELECT count(*), sum(length(bytes)) FROM Blob"
            try reader.inDatabase { db in
                try db.execute(sql: "BEGIN")
                let before = try Row.fetchOne(db, sql: sum)
                #expect(before?[0] == 20_000)
                // Rows the reader does not see, written and copied: a complete checkpoint is
                // impossible while the reader's snapshot uses the WAL, so no restart either.
                try Self.grow(store, from: 20_001)
                _ = try store.database.writeWithoutTransaction { db in try db.checkpoint(.passive) }
                let size = Self.walBytes(store)
                var outcomes: [WALTrimmer.Outcome] = []
                for _ in 0..<5 { outcomes.append(try Self.step(store, restart: true)) }
                #expect(outcomes.allSatisfy { $0 == .waiting }, "\(outcomes)")
                #expect(Self.walBytes(store) >= size)
                #expect(try Row.fetchOne(db, sql: sum) == before, "the reader still reads its snapshot from the WAL")
                try db.execute(sql: "COMMIT")
            }
            // The reader gone: copied, restarted, cut. As after a run, a step that waits is
            // followed by a passive checkpoint (the restart write is appended instead when
            // another connection reads at that moment, and must be copied in turn).
            var outcome = WALTrimmer.Outcome.waiting
            for _ in 0..<300 where outcome != .done {
                if outcome == .waiting { _ = try store.database.writeWithoutTransaction { db in try db.checkpoint(.passive) } }
                outcome = try Self.step(store, restart: true)
            }
            #expect(outcome == .done)
            #expect(Self.walBytes(store) <= PersistentStore.walSizeLimit)
            #expect(try Self.rows(store) == 40_000)
            #expect(try DeferredBoundedStepsTests.integrity(store) == "ok")
        }
    }

    @Test("after a run the store cuts the WAL back in the background; a run that begins meanwhile keeps the limit off")
    func afterTheRunTheBackgroundCutsAndANewRunKeepsTheLimitOff() throws {
        let temp = TemporaryStore()
        let store = try temp.open(Self.model)
        defer { try? store.close() }
        let first = try WALCheckpointer(store: store)
        try WALSizeLimitTests().growThenRestart(store)
        // A second run is under way when the first stops: the background leaves the cutting to it.
        let second = try WALCheckpointer(store: store)
        first.stop(store: store)
        store.checkpointQueue.sync {}
        #expect(Self.walBytes(store) > PersistentStore.walSizeLimit)
        #expect(try DeferredBoundedStepsTests.writerSetting(store, "journal_size_limit") == -1)
        // The second run ends (its work done, nobody there): cut back, then truncated.
        second.stop(store: store, truncating: true, clientsActive: { false })
        store.checkpointQueue.sync {}
        #expect(Self.walBytes(store) == 0)
        #expect(try DeferredBoundedStepsTests.writerSetting(store, "journal_size_limit") == PersistentStore.walSizeLimit)
        #expect(try Self.rows(store) == 20_001)
    }

    @Test("after a run, nothing is cut while clients call; once they have been quiet a while, the WAL is cut back in large steps (issue 44)")
    func cutsWaitForAQuietMoment() throws {
        let temp = TemporaryStore()
        let store = try temp.open(Self.model)
        defer { try? store.close() }
        let checkpointer = try WALCheckpointer(store: store)
        try WALSizeLimitTests().growThenRestart(store)
        let over = Self.walBytes(store) - PersistentStore.walSizeLimit
        #expect(over > 3 * WALTrimmer.minimumStep, "the WAL is \(over) bytes over the limit")
        let stepsBefore = store.walTrimmer.steps.load(ordering: .relaxed)
        // Clients call for the first 600 ms after the run: no cut meanwhile.
        let clientsLeave = ContinuousClock.now + .milliseconds(600)
        let cutWhileBusy = Atomic<Int>(0)
        let trimmer = store.walTrimmer
        checkpointer.stop(store: store, clientsActive: {
            let busy = ContinuousClock.now < clientsLeave
            if busy { cutWhileBusy.max(trimmer.steps.load(ordering: .relaxed) - stepsBefore, ordering: .relaxed) }
            return busy
        })
        store.checkpointQueue.sync {}
        let steps = store.walTrimmer.steps.load(ordering: .relaxed) - stepsBefore
        #expect(cutWhileBusy.load(ordering: .relaxed) == 0, "cut while a client call was in flight")
        #expect(ContinuousClock.now - clientsLeave >= WALTrimmer.quietBeforeCut)
        #expect(Self.walBytes(store) <= PersistentStore.walSizeLimit)
        #expect(steps >= 1 && steps <= 2, "\(steps) cuts for \(over) bytes")
        #expect(try Self.rows(store) == 20_001)
    }
}
