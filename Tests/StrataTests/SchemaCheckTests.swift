import Foundation
import GRDB
import Synchronization
import Testing
@testable import Strata

/// `PersistentStore.schemaVersion()` and `checkSchema()`: what another process's schema change
/// does to the model's use of a store.
struct SchemaCheckTests {
    @Test func aFreshStoreMatchesItsModel() throws {
        let temporary = TemporaryStore()
        let store = try temporary.open(TestModels.fleet)
        let check = try store.checkSchema()
        #expect(check.isUsable && check.problems.isEmpty && check.unexpected.isEmpty, "\(check)")
        #expect(check.storedVersion == "Fleet 1")
        #expect(check.schemaVersion == (try store.schemaVersion()))
    }

    @Test(arguments: [
        ("ALTER TABLE Vehicle DROP COLUMN seats", "column Vehicle.seats (attribute Aircraft.seats) is missing"),
        ("ALTER TABLE Vehicle RENAME COLUMN colorScheme_primary TO primaryColor",
         "column Vehicle.colorScheme_primary (attribute Aircraft.colorScheme.primary) is missing"),
        ("ALTER TABLE Pilot RENAME TO Pilots", "table Pilot (entity Pilot) is missing"),
        ("DROP INDEX Vehicle_unique_tailNumber",
         "unique index Vehicle_unique_tailNumber on Vehicle(tailNumber) (uniqueness constraint of Aircraft on tailNumber) is missing"),
        ("DROP TABLE Aircraft_tags", "join table Aircraft_tags (relationship Aircraft.tags) is missing"),
        ("DROP TABLE _strata_deferred", "Strata's metadata table _strata_deferred is missing"),
    ])
    func aChangeTheModelCannotLiveWithIsAProblem(sql: String, problem: String) throws {
        let temporary = TemporaryStore()
        let store = try temporary.open(TestModels.fleet)
        let before = try store.schemaVersion()
        try temporary.rawQueue().write { db in try db.execute(sql: sql) }
        #expect(try store.schemaVersion() > before, "another connection's change moves schema_version")
        let check = try store.checkSchema()
        #expect(!check.isUsable)
        #expect(check.problems.contains(problem), "\(check.problems)")
    }

    @Test func changesTheModelDoesNotNeedAreUnexpectedOnly() throws {
        let temporary = TemporaryStore()
        let store = try temporary.open(TestModels.fleet)
        try temporary.rawQueue().write { db in
            try db.execute(sql: "CREATE INDEX byName ON Pilot(name)")
            try db.execute(sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
            try db.execute(sql: "ALTER TABLE Tag ADD COLUMN color TEXT")
            try db.execute(sql: "DROP INDEX Vehicle_byPrimaryColor")
        }
        let check = try store.checkSchema()
        #expect(check.isUsable, "\(check.problems)")
        #expect(check.unexpected.contains("index byName on Pilot is not in model 'Fleet 1'"), "\(check.unexpected)")
        #expect(check.unexpected.contains("table notes is not in model 'Fleet 1'"), "\(check.unexpected)")
        #expect(check.unexpected.contains { $0.hasPrefix("table Tag differs from its definition in model 'Fleet 1'") }, "\(check.unexpected)")
        #expect(check.unexpected.contains { $0.hasPrefix("index Vehicle_byPrimaryColor on Vehicle(colorScheme_primary) of model 'Fleet 1' is missing") }, "\(check.unexpected)")
        #expect(check.unexpected.count == 4, "\(check.unexpected)")
    }

    @Test func pendingDeferredWorkIsNeitherAProblemNorUnexpected() async throws {
        let temporary = TemporaryStore()
        let v1 = ObjectModel(version: "Note 1", entities: [Entity("Note", attributes: [Attribute("title", .string), Attribute("body", .string)],
                                                                  indexes: [Index("byBody", keyPaths: ["body"])])])
        let v2 = ObjectModel(version: "Note 2", entities: [Entity("Note", attributes: [Attribute("title", .string)],
                                                                  indexes: [Index("byTitle", keyPaths: ["title"])])])
        do {
            let store = try temporary.open(v1)
            let context = ObjectContext(store: store)
            for n in 0..<500 { _ = try context.insert("Note", values: ["title": "t\(n)", "body": "b\(n)"]) }
            try context.save()
            try store.close()
        }
        let store = try temporary.open(v2, options: StoreOptions(migration: .deferred))
        #expect(!(try store.pendingDeferredWork()).isEmpty)
        let pending = try store.checkSchema()
        #expect(pending.isUsable && pending.unexpected.isEmpty, "\(pending)")
        // Stopped after the first batch: a shadow table and capture triggers exist.
        let batches = Mutex(0)
        _ = try await store.finishDeferredMigration(FinishOptions(batchBudget: .microseconds(50), shouldContinue: {
            batches.withLock { $0 += 1; return $0 <= 2 }
        }))
        let workObjects = try await temporary.rawQueue().read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE name LIKE '\\_strata\\_%' ESCAPE '\\' AND name NOT IN ('_strata_metadata', '_strata_history', '_strata_deferred')")
        }
        #expect(!workObjects.isEmpty, "the run stopped midway, with its shadow table and triggers in place")
        let midway = try store.checkSchema()
        #expect(midway.isUsable && midway.unexpected.isEmpty, "\(midway)")
        _ = try await store.finishDeferredMigration()
        let done = try store.checkSchema()
        #expect(done.isUsable && done.unexpected.isEmpty, "\(done)")
        #expect(try store.pendingDeferredWork().isEmpty)
    }

    @Test func anotherProcessMigratingTheStoreIsAProblem() throws {
        let temporary = TemporaryStore()
        let v1 = ObjectModel(version: "Note 1", entities: [Entity("Note", attributes: [Attribute("title", .string)])])
        let v2 = ObjectModel(version: "Note 2", entities: [Entity("Note", attributes: [Attribute("title", .string), Attribute("body", .string)])])
        let store = try temporary.open(v1)
        let other = try PersistentStore.open(at: temporary.url, model: v2, options: StoreOptions(migration: .deferred))
        try other.close()
        let check = try store.checkSchema()
        #expect(check.storedVersion == "Note 2")
        #expect(check.problems.first?.hasPrefix("the store's metadata names model 'Note 2'") == true, "\(check.problems)")
        #expect(check.problems.first?.hasSuffix("another process migrated it") == true, "\(check.problems)")
    }
}
