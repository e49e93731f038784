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

    /// The backup task's recorded position (pages of the first pass on disk).
    static func backupPosition(_ url: URL) throws -> Int64 {
        try PersistentStore.pendingDeferredWork(at: url).first { $0.kind == .backup }?.rowsDone ?? -1
    }

    @Test("a paused or closed backup resumes at the recorded page, redoing at most one step")
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
        // Writes between runs change pages already copied: the last pass brings them up to date.
        let context = ObjectContext(store: store)
        _ = try context.insert("Item", values: ["name": "between runs", "rank": 1])
        try context.save()
        // The next run's first step starts after the recorded page (nothing recorded is redone).
        let resumedAt = LockedValue<Int64?>(nil)
        let stopAgain = Counter()
        _ = try await store.finishDeferredMigrationTask(FinishOptions(batchBudget: .milliseconds(1), shouldContinue: { stopAgain.increment() < 3 })) { progress in
            if resumedAt.get() == nil { resumedAt.set(progress.task.rowsDone) }
        }
        let firstStep = try #require(resumedAt.get())
        #expect(firstStep > task.rowsDone && firstStep <= task.rowsDone + 65_536)
        // Closing keeps the copy in progress and its position.
        let position = try Self.backupPosition(url)
        #expect(position >= firstStep)
        try store.close()
        #expect(FileManager.default.fileExists(atPath: backup.path + ".partial"))
        #expect(try Self.backupPosition(url) == position)
        // A page of the copy damaged between runs is found by the last pass and written again.
        let partial = try FileHandle(forUpdating: URL(fileURLWithPath: backup.path + ".partial"))
        try partial.seek(toOffset: 4096 * 3)
        try partial.write(contentsOf: Data(repeating: 0xA5, count: 4096))
        try partial.close()
        let reopened = try PersistentStore.open(at: url, model: DeferredMigrationTests.narrow)
        try await reopened.finishDeferredMigrationTask(FinishOptions(batchBudget: .milliseconds(1)))
        #expect(!FileManager.default.fileExists(atPath: backup.path + ".partial"))
        #expect(try Self.count(backup, "SELECT count(*) FROM Item") == 12_001)
        #expect(try Self.count(backup, "SELECT count(*) FROM Item WHERE name = 'between runs'") == 1)
        #expect(try Self.text(backup, "PRAGMA integrity_check") == "ok")
        let detail = try #require(try reopened.currentMetadata().history.last?.detail)
        #expect(detail.contains("resumed at page \(position)") && detail.contains("quick_check ok"), "\(detail)")
        // The last pass rewrote only the pages changed since the first pass read them.
        let rewritten = try #require(Int(detail.components(separatedBy: "rewrote ")[1].prefix { $0.isNumber }))
        let total = try #require(Int(detail.components(separatedBy: " of ")[1].prefix { $0.isNumber }))
        #expect(rewritten > 0 && rewritten * 4 < total, "\(detail)")
        let copied = try PersistentStore.metadata(at: backup)
        #expect(copied.storeIdentifier == reopened.identifier && copied.deferred.allSatisfy { $0.kind != .backup })
        try await reopened.finishDeferredMigration()
        #expect(try DeferredMigrationTests.snapshot(reopened) == DeferredMigrationTests.freshSchema(DeferredMigrationTests.narrow))
        try reopened.close()
    }

    @Test("another connection writing before every step neither restarts the copy nor tears it")
    func backupUnderForeignWrites() async throws {
        let directory = TemporaryDirectory("backup")
        let url = directory.file("store.sqlite")
        let backup = directory.file("copy.sqlite")
        try Self.bigStore(at: url)
        let store = try PersistentStore.open(at: url, model: DeferredMigrationTests.narrow, options: Self.options(backup: backup))
        let foreign = try DatabaseQueue(path: url.path)
        let writes = Counter()
        // Before every step, another connection (as another process would) inserts a row and
        // rewrites rows spread over the table.
        let report = try await store.finishDeferredMigrationTask(FinishOptions(batchBudget: .milliseconds(1), shouldContinue: {
            let n = writes.increment()
            try? foreign.write { db in
                try db.execute(sql: "INSERT INTO Item(name, rank) VALUES (?, 0)", arguments: ["foreign-\(n)"])
                try db.execute(sql: "UPDATE Item SET rank = rank + 1 WHERE _pk % 500 = ?", arguments: [n % 500])
            }
            return true
        }))
        try foreign.close()
        #expect(report.tasksFinished == 1)
        #expect(writes.value > 10)
        let detail = try #require(try store.currentMetadata().history.last?.detail)
        #expect(detail.contains("quick_check ok") && !detail.contains("restart"), "\(detail)")
        // A snapshot: every row committed when the last pass began, with one consistent rank sum.
        let copied = try #require(try Self.count(backup, "SELECT count(*) FROM Item"))
        #expect(copied > 12_000 && copied <= 12_000 + writes.value)
        #expect(try Self.text(backup, "PRAGMA integrity_check") == "ok")
        #expect(try Self.count(backup, "SELECT count(*) FROM Item WHERE name LIKE 'foreign-%'") == copied - 12_000)
        try store.close()
    }

    @Test("a thread committing every half millisecond through another connection: the backup completes in one run")
    func backupUnderSustainedWriter() async throws {
        let directory = TemporaryDirectory("backup")
        let url = directory.file("store.sqlite")
        let backup = directory.file("copy.sqlite")
        try Self.bigStore(at: url)
        let store = try PersistentStore.open(at: url, model: DeferredMigrationTests.narrow, options: Self.options(backup: backup))
        let stop = LockedValue(false)
        let written = Counter()
        let writer = Thread {
            guard let foreign = try? DatabaseQueue(path: url.path) else { return }
            while !stop.get() {
                let n = written.increment()
                try? foreign.write { db in try db.execute(sql: "INSERT INTO Item(name, rank) VALUES (?, 0)", arguments: ["thread-\(n)"]) }
                // A breath between commits: SQLite's lock is not fair, and the finisher records
                // its progress through the store's own writer.
                usleep(500)
            }
            try? foreign.close()
        }
        writer.start()
        defer { stop.set(true) }
        while written.value < 20 { try await Task.sleep(for: .milliseconds(5)) }
        let report = try await store.finishDeferredMigrationTask(FinishOptions(batchBudget: .milliseconds(1)))
        let during = written.value
        stop.set(true)
        #expect(report.tasksFinished == 1)
        #expect(during > 20)
        let copied = try #require(try Self.count(backup, "SELECT count(*) FROM Item"))
        #expect(copied > 12_000 && copied <= 12_000 + during + 1)
        #expect(try Self.text(backup, "PRAGMA integrity_check") == "ok")
        #expect(try store.pendingDeferredWork().first?.kind == .rewriteTable)
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
