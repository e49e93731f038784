import Foundation
import GRDB
import Synchronization
import Testing
@testable import Strata

/// A store replicated by Litestream (docs/Fleet.md): its checkpoints are Litestream's
/// (`WALCheckpointing.external`), and Litestream's own tables in the store are not the model's
/// to drop.
@Suite("Replicated stores: checkpoints handed over, the replicator's tables left alone")
struct ReplicatedStoreTests {
    /// The tables Litestream 0.5 creates in every database it replicates.
    static let litestreamTables = [
        "CREATE TABLE IF NOT EXISTS _litestream_seq (id INTEGER PRIMARY KEY, seq INTEGER)",
        "CREATE TABLE IF NOT EXISTS _litestream_lock (id INTEGER)",
        "INSERT INTO _litestream_seq (id, seq) VALUES (1, 7)",
    ]

    /// What Litestream does to a database when it starts replicating it.
    static func addLitestreamTables(at url: URL) throws {
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in for sql in Self.litestreamTables { try db.execute(sql: sql) } }
        try queue.close()
    }

    /// Frames in the WAL's log (`PRAGMA wal_checkpoint(PASSIVE)`'s second column, read before
    /// the checkpoint it runs).
    static func walLogFrames(_ store: PersistentStore) throws -> Int {
        try store.database.writeWithoutTransaction { db in try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")?[1] ?? -1 }
    }

    static var external: StoreOptions {
        var options = StoreOptions(migration: .deferred)
        options.walCheckpointing = .external
        return options
    }

    @Test("a migration neither drops nor reports Litestream's tables; the finished schema is a fresh store's")
    func litestreamTablesSurviveAMigration() async throws {
        let directory = TemporaryDirectory("replicated-tables")
        let url = directory.file("store.sqlite")
        try DeferredMigrationTests.seedItems(2_000, at: url)
        try Self.addLitestreamTables(at: url)

        let store = try PersistentStore.open(at: url, model: DeferredMigrationTests.narrow, options: Self.external)
        let pending = try store.pendingDeferredWork()
        #expect(!pending.isEmpty)
        #expect(pending.allSatisfy { !$0.summary.contains("_litestream") }, "\(pending.map(\.summary))")
        let check = try store.checkSchema()
        #expect(check.isUsable && check.unexpected.isEmpty, "\(check)")
        let report = try await store.finishDeferredMigration()
        #expect(report.tasksRemaining == 0)
        #expect(try DeferredMigrationTests.int(store, "SELECT seq FROM _litestream_seq WHERE id = 1") == 7)
        #expect(try DeferredMigrationTests.int(store, "SELECT count(*) FROM sqlite_master WHERE name = '_litestream_lock'") == 1)
        #expect(try DeferredMigrationTests.snapshot(store) == DeferredMigrationTests.freshSchema(DeferredMigrationTests.narrow))
        #expect(try store.checkSchema().unexpected.isEmpty)
        try store.close()
    }

    @Test("external checkpointing: no automatic checkpoint, no background checkpoint during deferred work, PASSIVE only")
    func externalCheckpointingLeavesTheWALToTheReplicator() async throws {
        let directory = TemporaryDirectory("replicated-checkpoints")
        let url = directory.file("store.sqlite")
        try DeferredCheckpointVacuumTests.seedLongNames(20_000, at: url)
        let store = try PersistentStore.open(at: url, model: DeferredMigrationTests.narrow, options: Self.external)
        #expect(try DeferredBoundedStepsTests.writerSetting(store, "wal_autocheckpoint") == 0)
        let report = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(20)))
        #expect(report.tasksRemaining == 0)
        let walPages = { ((try? FileManager.default.attributesOfItem(atPath: url.path + "-wal"))?[.size] as? NSNumber)?.intValue ?? 0 }
        #expect(walPages() > 1000 * 4096, "nothing checkpointed the WAL: over 1,000 pages stay for the replicator")
        // No checkpoint ran during the run (neither automatic nor the finisher's background
        // one): the WAL never restarted, so every frame in the file is still in the log.
        // (A WAL that restarted after a checkpoint keeps older frames past its log's end.)
        let frames = try Self.walLogFrames(store)
        #expect(frames == (walPages() - 32) / (4096 + 24), "WAL log \(frames) frames, file \(walPages()) bytes")
        // TRUNCATE asked, PASSIVE run: the WAL file keeps its size (a TRUNCATE would empty it).
        try store.checkpoint(.truncate)
        #expect(walPages() > 0)
        #expect(try DeferredBoundedStepsTests.integrity(store) == "ok")
        #expect(try DeferredMigrationTests.int(store, "SELECT count(*) FROM Item") == 20_000)
        try store.close()

        // The same store with Strata's checkpoints: TRUNCATE empties the WAL.
        var options = StoreOptions(migration: .deferred)
        options.walCheckpointing = .strata
        let strata = try PersistentStore.open(at: url, model: DeferredMigrationTests.narrow, options: options)
        #expect(try DeferredBoundedStepsTests.writerSetting(strata, "wal_autocheckpoint") == 1000)
        try await strata.database.write { db in try db.execute(sql: "UPDATE Item SET rank = rank + 1 WHERE _pk <= 500") }
        #expect(walPages() > 0)
        try strata.checkpoint(.truncate)
        #expect(walPages() == 0)
        try strata.close()
    }
}
