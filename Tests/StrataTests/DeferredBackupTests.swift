import Foundation
import GRDB
import Testing
@testable import Strata

/// `MigrationOptions.backup`: a copy before the migration when its synchronous part destroys
/// data, otherwise an online copy as the first deferred task.
@Suite("Backups of migrations at open: before the migration or online before the cleanup")
struct DeferredBackupTests {
    static func options(backup: URL, deferred: Bool = true) -> StoreOptions {
        var migration = deferred ? MigrationOptions.deferred : MigrationOptions.immediate
        migration.backup = backup
        return StoreOptions(migration: migration)
    }

    static func schema(_ url: URL) throws -> [String] {
        let queue = try DatabaseQueue(path: url.path)
        defer { try? queue.close() }
        return try queue.read(SchemaSnapshot.of)
    }

    static func text(_ url: URL, _ sql: String) throws -> String? {
        let queue = try DatabaseQueue(path: url.path)
        defer { try? queue.close() }
        return try queue.read { db in try String.fetchOne(db, sql: sql) }
    }

    static func count(_ url: URL, _ sql: String) throws -> Int? {
        let queue = try DatabaseQueue(path: url.path)
        defer { try? queue.close() }
        return try queue.read { db in try Int.fetchOne(db, sql: sql) }
    }

    @Test("nothing destroyed at open: the backup is the first deferred task, taken online before any cleanup")
    func deferredBackup() async throws {
        let directory = TemporaryDirectory("backup")
        let url = directory.file("store.sqlite")
        let backup = directory.file("store.sqlite.pre-migration")
        try DeferredMigrationTests.seedItems(3000, at: url)
        let store = try PersistentStore.open(at: url, model: DeferredMigrationTests.narrow, options: Self.options(backup: backup))
        // Open did not copy anything.
        #expect(!FileManager.default.fileExists(atPath: backup.path))
        let pending = try store.pendingDeferredWork()
        #expect(pending.first?.kind == .backup)
        #expect(pending.first?.summary.contains(backup.path) == true)
        #expect(pending.first.map { $0.rowsTotal > 0 } == true)
        #expect(pending.dropFirst().map(\.kind) == [.rewriteTable, .incrementalVacuum])
        #expect(try PersistentStore.pendingDeferredWork(at: url).first?.kind == .backup)
        // The backup runs first: after one task the file exists and nothing else ran.
        let first = try await store.finishDeferredMigrationTask(FinishOptions(batchBudget: .milliseconds(1)))
        #expect(first.tasksFinished == 1)
        #expect(FileManager.default.fileExists(atPath: backup.path))
        #expect(!FileManager.default.fileExists(atPath: backup.path + ".partial"))
        #expect(try store.pendingDeferredWork().map(\.kind) == [.rewriteTable, .incrementalVacuum])
        // The copy: every row and the old columns, its own ledger without the backup task.
        #expect(try Self.count(backup, "SELECT count(*) FROM Item WHERE payload IS NOT NULL AND scratch = 's'") == 3000)
        let copied = try PersistentStore.metadata(at: backup)
        #expect(copied.storeIdentifier == store.identifier)
        #expect(copied.deferred.map(\.kind) == [.rewriteTable, .incrementalVacuum])
        #expect(try Self.text(backup, "PRAGMA integrity_check") == "ok")
        #expect(try store.currentMetadata().history.last?.kind == "backup")
        try await store.finishDeferredMigration()
        #expect(try DeferredMigrationTests.snapshot(store) == DeferredMigrationTests.freshSchema(DeferredMigrationTests.narrow))
        try store.close()
    }

    @Test("a synchronous part that deletes rows backs up before migrating")
    func backupBeforeDestructiveMigration() async throws {
        let change = try #require(MigrationTestModels.cases.first { $0.name == "remove sub-entity" })
        let plan = try MigrationPlan.infer(from: change.source, to: change.destination)
        let destroys = plan.synchronous.contains { $0.destroysData }
        #expect(destroys)
        let directory = TemporaryDirectory("backup")
        let url = directory.file("store.sqlite")
        let backup = directory.file("before.sqlite")
        try DeferredMigrationTests.seededStore(change.source, seed: change.seed, at: url)
        let store = try PersistentStore.open(at: url, model: change.destination, options: Self.options(backup: backup))
        #expect(FileManager.default.fileExists(atPath: backup.path))
        #expect(try store.pendingDeferredWork().allSatisfy { $0.kind != .backup })
        // The copy is the store before the migration: the glider row is there.
        #expect(try PersistentStore.metadata(at: backup).modelChecksum == change.source.checksum)
        #expect(try Self.count(backup, #"SELECT count(*) FROM "Aircraft" WHERE "_entity" = 'Glider'"#) == 1)
        #expect(try store.currentMetadata().history.contains { $0.kind == "backup" && $0.detail.contains("destroys data") })
        try store.close()
    }

    @Test("without deferral the backup is taken before open migrates")
    func backupWithoutDeferral() throws {
        let directory = TemporaryDirectory("backup")
        let url = directory.file("store.sqlite")
        let backup = directory.file("before.sqlite")
        try DeferredMigrationTests.seedItems(500, at: url)
        let store = try PersistentStore.open(at: url, model: DeferredMigrationTests.narrow, options: Self.options(backup: backup, deferred: false))
        #expect(try store.pendingDeferredWork().isEmpty)
        #expect(try PersistentStore.metadata(at: backup).modelChecksum == DeferredMigrationTests.wide.checksum)
        #expect(try Self.count(backup, "SELECT count(*) FROM Item WHERE scratch = 's'") == 500)
        try store.close()
    }

    @Test("an existing backup destination refuses the migration and changes nothing")
    func existingDestination() throws {
        let directory = TemporaryDirectory("backup")
        let url = directory.file("store.sqlite")
        let backup = directory.file("taken")
        try DeferredMigrationTests.seedItems(100, at: url)
        try Data("keep me".utf8).write(to: backup)
        let error = try #require(throws: StoreError.self) {
            try PersistentStore.open(at: url, model: DeferredMigrationTests.narrow, options: Self.options(backup: backup))
        }
        #expect(error.code == .migrationRefused)
        #expect(error.description.contains(backup.path) && error.description.contains("already exists"))
        #expect(try PersistentStore.metadata(at: url).modelChecksum == DeferredMigrationTests.wide.checksum)
        #expect(try Data(contentsOf: backup) == Data("keep me".utf8))
    }

    /// A store big enough for a backup of many steps.
    static func bigStore(at url: URL) throws {
        let store = try PersistentStore.open(at: url, model: DeferredMigrationTests.wide)
        try store.database.write { db in
            let statement = try db.makeStatement(sql: "INSERT INTO Item(_pk, name, payload, scratch, rank) VALUES (?, ?, ?, ?, ?)")
            for i in 1...12_000 { try statement.execute(arguments: [i, "item-\(i)", String(repeating: "b", count: 300), "s", i % 97]) }
        }
        try store.close()
    }

    @Test("a paused backup resumes where it stopped; closing the store starts it over")
    func backupPauseAndResume() async throws {
        let directory = TemporaryDirectory("backup")
        let url = directory.file("store.sqlite")
        let backup = directory.file("copy.sqlite")
        try Self.bigStore(at: url)
        let store = try PersistentStore.open(at: url, model: DeferredMigrationTests.narrow, options: Self.options(backup: backup))
        let allowed = Counter()
        let first = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1), shouldContinue: { allowed.increment() < 4 }))
        #expect(first.stoppedEarly)
        let task = try #require(try store.pendingDeferredWork().first)
        #expect(task.kind == .backup && task.rowsDone > 0 && task.rowsDone < task.rowsTotal)
        #expect(FileManager.default.fileExists(atPath: backup.path + ".partial"))
        // Writes through the store's own connection between two runs do not restart the copy.
        let context = ObjectContext(store: store)
        _ = try context.insert("Item", values: ["name": "between runs", "rank": 1])
        try context.save()
        let resumedAt = LockedValue<Int64?>(nil)
        try await store.finishDeferredMigrationTask(FinishOptions(batchBudget: .milliseconds(1))) { progress in
            if resumedAt.get() == nil { resumedAt.set(progress.task.rowsDone) }
        }
        #expect((resumedAt.get() ?? 0) > task.rowsDone)
        #expect(try Self.count(backup, "SELECT count(*) FROM Item") == 12_001)
        #expect(try store.currentMetadata().history.last?.detail.contains("restart") == false)
        try store.close()

        // Closing the store abandons the copy in progress (the task stays); the next run starts over.
        let otherURL = directory.file("other.sqlite")
        let second = directory.file("second.sqlite")
        try Self.bigStore(at: otherURL)
        let other = try PersistentStore.open(at: otherURL, model: DeferredMigrationTests.narrow, options: Self.options(backup: second))
        let stopped = Counter()
        _ = try await other.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1), shouldContinue: { stopped.increment() < 3 }))
        #expect(FileManager.default.fileExists(atPath: second.path + ".partial"))
        try other.close()
        #expect(!FileManager.default.fileExists(atPath: second.path + ".partial"))
        #expect(try PersistentStore.pendingDeferredWork(at: otherURL).first?.kind == .backup)
        let reopened = try PersistentStore.open(at: otherURL, model: DeferredMigrationTests.narrow)
        try await reopened.finishDeferredMigration()
        #expect(!FileManager.default.fileExists(atPath: second.path + ".partial"))
        #expect(try Self.count(second, "SELECT count(*) FROM Item") == 12_000)
        #expect(try DeferredMigrationTests.snapshot(reopened) == DeferredMigrationTests.freshSchema(DeferredMigrationTests.narrow))
        try reopened.close()
    }

    @Test("writes by another connection restart the copy; after three restarts it copies a snapshot")
    func backupRestartsThenSnapshot() async throws {
        let directory = TemporaryDirectory("backup")
        let url = directory.file("store.sqlite")
        let backup = directory.file("copy.sqlite")
        try Self.bigStore(at: url)
        let store = try PersistentStore.open(at: url, model: DeferredMigrationTests.narrow, options: Self.options(backup: backup))
        let foreign = try DatabaseQueue(path: url.path)
        let writes = Counter()
        // Before every batch, another connection (as another process would) inserts a row.
        let report = try await store.finishDeferredMigrationTask(FinishOptions(batchBudget: .milliseconds(1), shouldContinue: {
            let n = writes.increment()
            try? foreign.write { db in try db.execute(sql: "INSERT INTO Item(name, rank) VALUES (?, 0)", arguments: ["foreign-\(n)"]) }
            return true
        }))
        try foreign.close()
        #expect(report.tasksFinished == 1)
        let detail = try #require(try store.currentMetadata().history.last?.detail)
        #expect(detail.contains("3 restart(s)") && detail.contains("snapshot"), "\(detail)")
        // The snapshot holds every row committed when it was taken: at least the original ones.
        let copied = try #require(try Self.count(backup, "SELECT count(*) FROM Item"))
        #expect(copied > 12_000 && copied <= 12_000 + writes.value)
        #expect(try Self.text(backup, "PRAGMA quick_check") == "ok")
        try store.close()
    }

    @Test("with a backup, every change kind either copies before open or records the copy first", arguments: MigrationTestModels.cases)
    func everyChangeKindIsBackedUp(_ change: MigrationCase) async throws {
        let directory = TemporaryDirectory("backup")
        let url = directory.file("store.sqlite")
        let backup = directory.file("copy.sqlite")
        try DeferredMigrationTests.seededStore(change.source, seed: change.seed, at: url)
        let plan = try MigrationPlan.infer(from: change.source, to: change.destination)
        let store = try PersistentStore.open(at: url, model: change.destination, options: Self.options(backup: backup))
        if plan.synchronous.contains(where: { $0.destroysData }) {
            #expect(try PersistentStore.metadata(at: backup).modelChecksum == change.source.checksum, "\(change.name)")
        } else {
            #expect(!FileManager.default.fileExists(atPath: backup.path), "\(change.name)")
            let schemaAtOpen = try DeferredMigrationTests.snapshot(store)
            #expect(try store.pendingDeferredWork().first?.kind == .backup, "\(change.name)")
            try await store.finishDeferredMigrationTask()
            #expect(try Self.schema(backup) == schemaAtOpen, "\(change.name)")
        }
        try await store.finishDeferredMigration()
        #expect(try DeferredMigrationTests.snapshot(store) == DeferredMigrationTests.freshSchema(change.destination), "\(change.name)")
        try store.close()
    }
}
