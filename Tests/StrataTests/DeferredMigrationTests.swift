import Foundation
import GRDB
import Testing
@testable import Strata

@Suite("Lightweight migration at open, deferred cleanup finished online")
struct DeferredMigrationTests {
    /// A real store at `model`, seeded with plain SQL, closed.
    static func seededStore(_ model: ObjectModel, seed: [String], at url: URL) throws {
        let store = try PersistentStore.open(at: url, model: model)
        try store.database.write { db in for statement in seed { try db.execute(sql: statement) } }
        try store.close()
    }

    static func freshSchema(_ model: ObjectModel) throws -> [String] {
        let directory = TemporaryDirectory("fresh")
        let store = try PersistentStore.open(at: directory.file("fresh.sqlite"), model: model)
        defer { try? store.close() }
        return try Self.snapshot(store)
    }


    // Synchronous helpers (GRDB picks its async overloads inside async tests).
    static func snapshot(_ store: PersistentStore) throws -> [String] { try store.database.read(SchemaSnapshot.of) }
    static func rows(_ store: PersistentStore, _ sql: String) throws -> [String] {
        try store.database.read { db in try MigrationPlanTests.rows(db, sql) }
    }
    static func int(_ store: PersistentStore, _ sql: String) throws -> Int? {
        try store.database.read { db in try Int.fetchOne(db, sql: sql) }
    }
    static func integrity(_ store: PersistentStore) throws -> String? {
        try store.database.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") }
    }
    static func setMaxPageCount(_ store: PersistentStore, _ pages: Int) throws {
        try store.database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = \(pages)") }
    }

    static func expectDestinationColumns(_ store: PersistentStore, _ change: MigrationCase) throws {
        try store.database.read { db in
            for table in store.layout.tables.values {
                let columns = try db.columns(in: table.name).map(\.name)
                for column in table.columns { #expect(columns.contains(column.name), "\(change.name): \(table.name).\(column.name)") }
            }
        }
    }

    static func check(_ store: PersistentStore, _ change: MigrationCase) throws {
        for (sql, expected) in change.checks {
            let got = try rows(store, sql)
            #expect(got == expected, "\(change.name): \(sql)")
        }
        let violations = try rows(store, "PRAGMA foreign_key_check")
        #expect(violations.isEmpty)
    }

    @Test("deferred: open is usable at once, finishing online gives the fresh schema", arguments: MigrationTestModels.cases)
    func deferredThenFinished(_ change: MigrationCase) async throws {
        let directory = TemporaryDirectory("deferred")
        let url = directory.file("store.sqlite")
        try Self.seededStore(change.source, seed: change.seed, at: url)
        let store = try PersistentStore.open(at: url, model: change.destination, options: StoreOptions(migration: .deferred))
        let metadata = try store.currentMetadata()
        #expect(metadata.modelChecksum == change.destination.checksum)
        #expect(metadata.history.last?.kind == "lightweight")
        // The application sees the destination model at once: every column is there.
        try Self.expectDestinationColumns(store, change)
        let pending = try store.pendingDeferredWork()
        #expect(try PersistentStore.pendingDeferredWork(at: url) == pending)
        let fresh = try Self.freshSchema(change.destination)
        if try Self.snapshot(store) != fresh {
            #expect(!pending.isEmpty, "\(change.name): schema differs from fresh but nothing is pending")
        }
        let report = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(2)))
        #expect(report.tasksRemaining == 0)
        #expect(!report.stoppedEarly)
        #expect(try store.pendingDeferredWork().isEmpty)
        let migrated = try Self.snapshot(store)
        #expect(migrated == fresh, "\(change.name)\nmigrated only: \(migrated.filter { !fresh.contains($0) })\nfresh only: \(fresh.filter { !migrated.contains($0) })")
        // Indexes moved into place (not built by CREATE INDEX) match their tables row for row.
        #expect(try Self.integrity(store) == "ok", "\(change.name)")
        try Self.check(store, change)
        try store.close()
    }

    @Test("without deferral the cleanup runs before open returns", arguments: MigrationTestModels.cases)
    func immediate(_ change: MigrationCase) throws {
        let directory = TemporaryDirectory("immediate")
        let url = directory.file("store.sqlite")
        try Self.seededStore(change.source, seed: change.seed, at: url)
        let store = try PersistentStore.open(at: url, model: change.destination, options: StoreOptions(migration: .immediate))
        #expect(try store.pendingDeferredWork().isEmpty)
        let migrated = try Self.snapshot(store)
        let fresh = try Self.freshSchema(change.destination)
        #expect(migrated == fresh, "\(change.name)\nmigrated only: \(migrated.filter { !fresh.contains($0) })\nfresh only: \(fresh.filter { !migrated.contains($0) })")
        try Self.check(store, change)
    }

    @Test("a change that cannot be inferred is refused before anything is written")
    func refusedMigrationWritesNothing() throws {
        let directory = TemporaryDirectory("refused")
        let url = directory.file("store.sqlite")
        try Self.seededStore(MigrationTestModels.base, seed: MigrationTestModels.baseSeed, at: url)
        let before = try Data(contentsOf: url)
        let refusal = try #require(MigrationTestModels.refusals.first)
        let error = try #require(throws: StoreError.self) {
            try PersistentStore.open(at: url, model: refusal.destination, options: StoreOptions(migration: .deferred))
        }
        #expect(error.code == .migrationRefused)
        #expect(error.description.contains("staged"))
        #expect(try Data(contentsOf: url) == before)
        #expect(try PersistentStore.metadata(at: url).modelChecksum == MigrationTestModels.base.checksum)
    }

    // MARK: - Ledger merges

    static func aircraft(_ version: String, attributes: [Attribute], indexes: [Index] = [], extraEntities: [Entity] = []) -> ObjectModel {
        ObjectModel(version: version, entities: [
            Entity("Aircraft", attributes: attributes, indexes: indexes),
        ] + extraEntities)
    }

    @Test("v1→v2 deferred, then v2→v3 before finishing: a dropped column re-added under the same name")
    func droppedThenReadded() async throws {
        let v1 = Self.aircraft("v1", attributes: [Attribute("tail", .string), Attribute("note", .string)])
        let v2 = Self.aircraft("v2", attributes: [Attribute("tail", .string)])
        let v3 = Self.aircraft("v3", attributes: [Attribute("tail", .string), Attribute("note", .int64)])
        let directory = TemporaryDirectory("merge")
        let url = directory.file("store.sqlite")
        try Self.seededStore(v1, seed: [#"INSERT INTO Aircraft(_pk, tail, note) VALUES (1, 'A', 'old text'), (2, 'B', NULL)"#], at: url)
        try PersistentStore.open(at: url, model: v2, options: StoreOptions(migration: .deferred)).close()
        let store = try PersistentStore.open(at: url, model: v3, options: StoreOptions(migration: .deferred))
        let context = ObjectContext(store: store)
        let a = try context.object(with: ObjectID(entityName: "Aircraft", primaryKey: 1))
        #expect(a["note"] == .null)   // the re-added attribute does not see the dropped column's data
        a["note"] = 42
        try context.save()
        try await store.finishDeferredMigration()
        #expect(try Self.snapshot(store) == Self.freshSchema(v3))
        let rows = try Self.rows(store, "SELECT _pk, tail, note FROM Aircraft ORDER BY _pk")
        #expect(rows == ["1|A|42", "2|B|NULL"])
    }

    @Test("v1→v2 deferred, then v2→v3: a property renamed onto a name whose old column awaits its drop")
    func renameOntoPendingDrop() async throws {
        let v1 = Self.aircraft("v1", attributes: [Attribute("tail", .string), Attribute("code", .string)])
        let v2 = Self.aircraft("v2", attributes: [Attribute("tail", .string)])
        let v3 = Self.aircraft("v3", attributes: [Attribute("code", .string, renamingIdentifier: "tail")])
        let directory = TemporaryDirectory("merge")
        let url = directory.file("store.sqlite")
        try Self.seededStore(v1, seed: [#"INSERT INTO Aircraft(_pk, tail, code) VALUES (1, 'A', 'x'), (2, 'B', 'y')"#], at: url)
        try PersistentStore.open(at: url, model: v2, options: StoreOptions(migration: .deferred)).close()
        let store = try PersistentStore.open(at: url, model: v3, options: StoreOptions(migration: .deferred))
        let rowsBefore = try Self.rows(store, "SELECT _pk, code FROM Aircraft ORDER BY _pk")
        #expect(rowsBefore == ["1|A", "2|B"])
        try await store.finishDeferredMigration()
        #expect(try Self.snapshot(store) == Self.freshSchema(v3))
        let rows = try Self.rows(store, "SELECT _pk, code FROM Aircraft ORDER BY _pk")
        #expect(rows == ["1|A", "2|B"])
    }

    @Test("v1→v2 deferred, then v2→v3: an entity removed while its index awaits its build")
    func entityRemovedWhileIndexPending() async throws {
        let hangar = Entity("Hangar", attributes: [Attribute("name", .string)])
        let hangarIndexed = Entity("Hangar", attributes: [Attribute("name", .string)], indexes: [Index("byName", keyPaths: ["name"])])
        let v1 = Self.aircraft("v1", attributes: [Attribute("tail", .string)], extraEntities: [hangar])
        let v2 = Self.aircraft("v2", attributes: [Attribute("tail", .string)], extraEntities: [hangarIndexed])
        let v3 = Self.aircraft("v3", attributes: [Attribute("tail", .string)])
        let directory = TemporaryDirectory("merge")
        let url = directory.file("store.sqlite")
        try Self.seededStore(v1, seed: [#"INSERT INTO Hangar(_pk, name) VALUES (1, 'H1')"#, #"INSERT INTO Aircraft(_pk, tail) VALUES (1, 'A')"#], at: url)
        let second = try PersistentStore.open(at: url, model: v2, options: StoreOptions(migration: .deferred))
        #expect(try second.pendingDeferredWork().map(\.kind) == [.createIndex])
        try second.close()
        let store = try PersistentStore.open(at: url, model: v3, options: StoreOptions(migration: .deferred))
        let pending = try store.pendingDeferredWork()
        #expect(pending.map(\.kind) == [.dropTable, .incrementalVacuum])
        #expect(pending.first?.summary.contains("Hangar") == true)
        try await store.finishDeferredMigration()
        #expect(try Self.snapshot(store) == Self.freshSchema(v3))
        #expect(try store.currentMetadata().history.map(\.kind) == ["created", "lightweight", "lightweight", "deferred-finished"])
    }

    // MARK: - Online behaviour

    static let wide = ObjectModel(version: "wide 1", entities: [
        Entity("Item", attributes: [
            Attribute("name", .string), Attribute("payload", .string), Attribute("scratch", .string), Attribute("rank", .int64),
        ], uniquenessConstraints: [UniquenessConstraint(["name"])]),
    ])
    static let narrow = ObjectModel(version: "wide 2", entities: [
        Entity("Item", attributes: [Attribute("name", .string), Attribute("rank", .int64)],
               indexes: [Index("byRank", keyPaths: ["rank"])], uniquenessConstraints: [UniquenessConstraint(["name"])]),
    ])

    static func seedItems(_ count: Int, at url: URL) throws {
        let store = try PersistentStore.open(at: url, model: wide)
        try store.database.write { db in
            let statement = try db.makeStatement(sql: "INSERT INTO Item(_pk, name, payload, scratch, rank) VALUES (?, ?, ?, ?, ?)")
            for i in 1...count {
                try statement.execute(arguments: [i, "item-\(i)", String(repeating: "x", count: 100), "s", i % 97])
            }
        }
        try store.close()
    }

    @Test("concurrent writes during finishing are captured; uniqueness holds meanwhile")
    func concurrentWritesAreCaptured() async throws {
        let directory = TemporaryDirectory("online")
        let url = directory.file("store.sqlite")
        try Self.seedItems(3000, at: url)
        let store = try PersistentStore.open(at: url, model: Self.narrow, options: StoreOptions(migration: .deferred))
        let writer = try PersistentStore.open(at: url, model: Self.narrow)
        let batches = Counter()
        let finishing = Task {
            try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1), pauseBetweenBatches: .milliseconds(2))) { _ in batches.increment() }
        }
        // Meanwhile another connection inserts, updates and deletes through the object layer.
        let context = ObjectContext(store: writer)
        for i in 0..<60 {
            _ = try context.insert("Item", values: ["name": "new-\(i)", "rank": i])
            let old = try context.object(with: ObjectID(entityName: "Item", primaryKey: Int64(1 + i * 40)))
            old["rank"] = .int(10_000 + Int64(i))
            if i % 3 == 0 { try context.delete(try context.object(with: ObjectID(entityName: "Item", primaryKey: Int64(2 + i * 40)))) }
            try context.save()
            if i == 30 {
                // A duplicate name is still refused while the unique index lives on the shadow.
                _ = try context.insert("Item", values: ["name": "item-3000", "rank": 1])
                let duplicate = try #require(throws: ObjectContextError.self) { try context.save() }
                #expect(duplicate.code == .uniquenessViolation)
                context.rollback()
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        let report = try await finishing.value
        #expect(report.tasksRemaining == 0)
        #expect(batches.value > 3)
        #expect(try Self.snapshot(store) == Self.freshSchema(Self.narrow))
        #expect(try Self.int(store, "SELECT count(*) FROM Item") == 3000 + 60 - 20)
        #expect(try Self.int(store, "SELECT count(*) FROM Item WHERE name LIKE 'new-%'") == 60)
        #expect(try Self.int(store, "SELECT count(*) FROM Item WHERE rank >= 10000") == 60)
        #expect(try Self.int(store, "SELECT rank FROM Item WHERE _pk = 1201") == 10_030)
        #expect(try Self.int(store, "SELECT count(*) FROM Item WHERE _pk = 2") == 0)
    }

    @Test("shouldContinue pauses between batches; the next run resumes from the ledger")
    func pauseAndResume() async throws {
        let directory = TemporaryDirectory("pause")
        let url = directory.file("store.sqlite")
        try Self.seedItems(2000, at: url)
        let store = try PersistentStore.open(at: url, model: Self.narrow, options: StoreOptions(migration: .deferred))
        let allowed = Counter()
        let first = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1), shouldContinue: { allowed.increment() < 4 }))
        #expect(first.stoppedEarly)
        #expect(first.tasksRemaining > 0)
        let task = try #require(try store.pendingDeferredWork().first)
        #expect(task.kind == .rewriteTable)
        #expect(task.rowsDone > 0 && task.rowsDone < 2000)
        // A new store instance (as after a restart) resumes where the ledger says.
        try store.close()
        let reopened = try PersistentStore.open(at: url, model: Self.narrow)
        let firstResumed = Counter()
        let resumedFrom = LockedValue<Int64?>(nil)
        let second = try await reopened.finishDeferredMigration { progress in
            if progress.task.id == task.id, firstResumed.increment() == 0 { resumedFrom.set(progress.task.rowsDone) }
        }
        #expect(second.tasksRemaining == 0)
        // The rewrite continued from the ledger's progress, not from the first row.
        #expect((resumedFrom.get() ?? 0) > task.rowsDone)
        #expect((resumedFrom.get() ?? 0) <= task.rowsDone + 400)
        #expect(try Self.snapshot(reopened) == Self.freshSchema(Self.narrow))
        #expect(try Self.int(reopened, "SELECT count(*) FROM Item") == 2000)
    }

    @Test("cancellation stops between batches and keeps progress")
    func cancellation() async throws {
        let directory = TemporaryDirectory("cancel")
        let url = directory.file("store.sqlite")
        try Self.seedItems(3000, at: url)
        let store = try PersistentStore.open(at: url, model: Self.narrow, options: StoreOptions(migration: .deferred))
        let task = Task { try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1), pauseBetweenBatches: .milliseconds(5))) }
        try await Task.sleep(for: .milliseconds(30))
        task.cancel()
        let report = try await task.value
        #expect(report.stoppedEarly)
        #expect(try store.pendingDeferredWork().isEmpty == false)
        try await store.finishDeferredMigration()
        #expect(try Self.int(store, "SELECT count(*) FROM Item") == 3000)
    }

    @Test("disk full during finishing rolls back the batch, keeps the ledger and says so")
    func diskFull() async throws {
        let directory = TemporaryDirectory("full")
        let url = directory.file("store.sqlite")
        try Self.seedItems(3000, at: url)
        let store = try PersistentStore.open(at: url, model: Self.narrow, options: StoreOptions(migration: .deferred))
        let pages = try Self.int(store, "PRAGMA page_count") ?? 0
        try Self.setMaxPageCount(store, pages + 8)
        do {
            try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(5)))
            Issue.record("expected a disk-full error")
        } catch let error as StoreError {
            #expect(error.code == .full)
            #expect(error.description.contains("full"))
        }
        #expect(try store.pendingDeferredWork().first?.kind == .rewriteTable)
        #expect(try Self.int(store, "SELECT count(*) FROM Item") == 3000)
        try Self.setMaxPageCount(store, 1_073_741_823)
        try await store.finishDeferredMigration()
        #expect(try Self.snapshot(store) == Self.freshSchema(Self.narrow))
    }
}

/// A thread-safe box for values written by callbacks.
final class LockedValue<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T
    init(_ value: T) { self.value = value }
    func set(_ new: T) { lock.lock(); value = new; lock.unlock() }
    func get() -> T { lock.lock(); defer { lock.unlock() }; return value }
}

/// A thread-safe counter for callbacks.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    /// Increments and returns the previous value.
    @discardableResult func increment() -> Int { lock.lock(); defer { lock.unlock() }; count += 1; return count - 1 }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
