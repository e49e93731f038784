import Foundation
import GRDB
import Synchronization
import Testing
@testable import Strata

/// History through schema evolution: renames follow renaming identifiers, migrations and
/// deferred rewrites record no object changes, a dropped entity's history stays readable.
@Suite struct HistoryMigrationTests {
    static let v1 = HistoryTests.model

    /// Aircraft renamed Plane, seats renamed capacity, colorScheme renamed livery, photo dropped.
    static let v2 = MigrationTestModels.model("History 2", [
        Entity("Plane", attributes: [
            Attribute("tailNumber", .string, isOptional: false, preservesValueInHistoryOnDeletion: true),
            Attribute("capacity", .int16, renamingIdentifier: "seats"),
        ], composites: [CompositeAttribute("livery", elements: [
            .attribute(Attribute("primary", .string)), .attribute(Attribute("secondary", .string)),
        ], renamingIdentifier: "colorScheme")],
        relationships: [Relationship("owner", destination: "Owner", inverse: "aircraft")],
        uniquenessConstraints: [UniquenessConstraint(["tailNumber"])], renamingIdentifier: "Aircraft"),
        MigrationTestModels.owner(Relationship("aircraft", destination: "Plane", inverse: "owner", toMany: true)),
    ])

    /// Owner dropped.
    static let v3 = MigrationTestModels.model("History 3", [
        Entity("Plane", attributes: [
            Attribute("tailNumber", .string, isOptional: false, preservesValueInHistoryOnDeletion: true),
            Attribute("capacity", .int16),
        ], composites: [CompositeAttribute("livery", elements: [
            .attribute(Attribute("primary", .string)), .attribute(Attribute("secondary", .string)),
        ])], uniquenessConstraints: [UniquenessConstraint(["tailNumber"])]),
    ])

    func seed(_ temp: TemporaryStore) throws {
        let store = try temp.open(Self.v1)
        defer { try? store.close() }
        let context = ObjectContext(store: store)
        let owner = try context.insert("Owner")
        owner["name"] = "Ann"
        let aircraft = try context.insert("Aircraft")
        aircraft["tailNumber"] = "F-GSPT"
        try context.save()
        aircraft["seats"] = 4
        aircraft["colorScheme.primary"] = "red"
        try aircraft.setObject(owner, forRelationship: "owner")
        try context.save()
        let other = try context.insert("Aircraft")
        other["tailNumber"] = "D-EABC"
        try context.save()
        try context.delete(other)
        try context.save()
    }

    static func migrating(deferCleanup: Bool) -> StoreOptions {
        StoreOptions(migration: MigrationOptions(deferCleanup: deferCleanup))
    }

    @Test(arguments: [false, true]) func renamesFollowTheRenamingIdentifiers(deferCleanup: Bool) async throws {
        let temp = TemporaryStore()
        try seed(temp)
        let store = try temp.open(Self.v2, options: Self.migrating(deferCleanup: deferCleanup))
        defer { try? store.close() }
        // The migration itself is not an object change.
        #expect(try store.latestHistoryToken() == 4)
        let transactions = try store.history(since: 0).transactions
        #expect(transactions[0].changes.map(\.entity) == ["Owner", "Plane"])
        #expect(transactions[1].changes == [HistoryChange(entity: "Plane", primaryKey: 1, kind: .update, properties: ["capacity", "livery", "owner"])])
        #expect(transactions[3].changes == [HistoryChange(entity: "Plane", primaryKey: 2, kind: .delete, tombstone: ["tailNumber": .string("D-EABC")])])
        #expect(try store.history(since: 0, entities: ["Plane"]).transactions.count == 4)
        // The deferred rewrite (photo's column dropped) records nothing either.
        if deferCleanup {
            #expect(try store.hasPendingDeferredWork())
            try await store.finishDeferredMigration()
            #expect(try !store.hasPendingDeferredWork())
        }
        #expect(try store.latestHistoryToken() == 4)
        // New changes are recorded under the new names, after the old ones.
        let context = ObjectContext(store: store)
        try context.object(with: ObjectID(entityName: "Plane", primaryKey: 1))["capacity"] = 6
        try context.save()
        #expect(try store.history(since: 4).transactions.first?.changes.first?.properties == ["capacity"])
    }

    @Test func aDroppedEntityKeepsItsHistory() throws {
        let temp = TemporaryStore()
        try seed(temp)
        try temp.open(Self.v2, options: Self.migrating(deferCleanup: false)).close()
        let store = try temp.open(Self.v3, options: Self.migrating(deferCleanup: false))
        defer { try? store.close() }
        let owners = try store.history(since: 0, entities: ["Owner"]).transactions
        #expect(owners.map(\.token) == [1] && owners[0].changes.map(\.entity) == ["Owner"])
    }

    @Test func aSaveDuringADeferredRewriteIsRecordedOnce() async throws {
        let temp = TemporaryStore()
        try seed(temp)
        let store = try temp.open(Self.v2, options: Self.migrating(deferCleanup: true))
        defer { try? store.close() }
        // One batch of the rewrite (its shadow table and capture triggers in place), a save,
        // then the rest.
        let checks = Mutex(0)
        var options = FinishOptions()
        options.shouldContinue = { checks.withLock { $0 += 1; return $0 <= 1 } }
        try await store.finishDeferredMigration(options)
        #expect(try store.hasPendingDeferredWork())
        let context = ObjectContext(store: store)
        try context.object(with: ObjectID(entityName: "Plane", primaryKey: 1))["capacity"] = 8
        try context.save()
        try await store.finishDeferredMigration()
        #expect(try store.latestHistoryToken() == 5)
        #expect(try temp.rawQueue().strings("SELECT count(*) FROM _strata_object_changes WHERE token = 5") == ["1"])
    }

    @Test func aCustomStagesObjectChangesAreNotHistory() throws {
        let temp = TemporaryStore()
        let store = try temp.open(MigrationTestModels.base)
        let context = ObjectContext(store: store)
        for tail in ["F-GSPT", "N1"] { try context.insert("Aircraft")["tailNumber"] = .string(tail) }
        try context.save()
        try store.close()
        let stage = MigrationStage.custom(
            from: ModelReference(model: MigrationTestModels.base), to: ModelReference(model: MigrationSafetyTests.serialVersion),
            label: "fill serial", didMigrate: { stage in
                for aircraft in try stage.context.fetch("Aircraft") { aircraft["serial"] = .string("S-\(aircraft.objectID.primaryKey)") }
                try stage.context.insert("Owner")["name"] = "Stage"
                try stage.context.save()
            })
        try StagedMigrationManager(stages: [stage], models: [MigrationTestModels.base, MigrationSafetyTests.serialVersion]).migrateStore(at: temp.url)
        let migrated = try temp.open(MigrationSafetyTests.serialVersion)
        defer { try? migrated.close() }
        #expect(try temp.rawQueue().strings(#"SELECT "serial" FROM "Aircraft" ORDER BY "_pk""#) == ["S-1", "S-2"])
        #expect(try migrated.latestHistoryToken() == 1)
        #expect(try migrated.history(since: 0).transactions.flatMap(\.changes).map(\.kind) == [.insert, .insert])
    }
}
