import Foundation
import Strata
import StrataData
import Testing

/// Versioned schemas and migration plans on Strata's staged, deferred migration: the WWDC
/// 2023 Aircraft story, inferred and refused hops, no-op hops, and stores shared with the
/// string-keyed API and model files.
@Suite struct SchemaMigrationTests {
    /// A V1 store with two aircraft, written through V1's classes.
    static func v1Store() throws -> URL {
        let url = try TestPaths.temporaryDirectory().appending(path: "aircraft.sqlite")
        let container = try ModelContainer(for: AircraftSchemaV1.self, url: url)
        let context = ModelContext(container)
        context.insert(AircraftSchemaV1.Aircraft(tailNumber: "F-GSPT", aircraftType: "A320", colorScheme: ColorScheme(primary: "red")))
        context.insert(AircraftSchemaV1.Aircraft(tailNumber: "F-HBXA"))
        try context.save()
        try container.store.close()
        return url
    }

    /// Puts flight data on F-GSPT at V2.
    static func addFlightData(_ url: URL) throws {
        let v2 = try ModelContainer(for: AircraftSchemaV2.self, migrationPlan: AircraftMigrationPlan.self, url: url)
        let context = ModelContext(v2)
        let aircraft = try context.fetch(FetchDescriptor<AircraftSchemaV2.Aircraft>(predicate: #Predicate { $0.tailNumber == "F-GSPT" }))
        aircraft.first?.flightData = Data([1, 2, 3])
        try context.save()
        try v2.store.close()
    }

    @Test func theWWDCStoryMigratesV1ToV3WithOneCustomStage() throws {
        let url = try Self.v1Store()
        try Self.addFlightData(url)
        let v3 = try ModelContainer(for: AircraftSchemaV3.self, migrationPlan: AircraftMigrationPlan.self, url: url)
        #expect(v3.migration?.steps.map(\.kind) == ["custom"])
        let context = ModelContext(v3)
        let aircraft = try context.fetch(FetchDescriptor<AircraftSchemaV3.Aircraft>(sortBy: [SortDescriptor(\.tailNumber)]))
        #expect(aircraft.map(\.tailNumber) == ["F-GSPT", "F-HBXA"])
        #expect(aircraft[0].flightParameters.map(\.data) == [Data([1, 2, 3])])
        #expect(aircraft[1].flightParameters.isEmpty)
        #expect(aircraft[0].colorScheme?.primary == "red")
        // Deferral on: the removed column's drop waits in the ledger.
        #expect(try v3.store.hasPendingDeferredWork())
        try v3.store.close()
    }

    @Test func fromV1InOneOpenTheLightweightAndCustomStagesBothRun() throws {
        let url = try Self.v1Store()
        let v3 = try ModelContainer(for: AircraftSchemaV3.self, migrationPlan: AircraftMigrationPlan.self, url: url)
        #expect(v3.migration?.steps.map(\.kind) == ["declared lightweight", "custom"])
        #expect(try ModelContext(v3).fetchCount(FetchDescriptor<AircraftSchemaV3.Aircraft>()) == 2)
        try v3.store.close()
    }

    @Test func anUndeclaredInferableChangeIsALightweightHop() throws {
        let url = try Self.v1Store()
        let v3 = try ModelContainer(for: AircraftSchemaV3.self, migrationPlan: AircraftInferredPlan.self, url: url)
        #expect(v3.migration?.steps.map(\.kind) == ["inferred lightweight", "custom"])
        try v3.store.close()
    }

    @Test func anUndeclaredChangeThatCannotBeInferredIsRefusedBeforeAnythingIsWritten() throws {
        let url = try TestPaths.temporaryDirectory().appending(path: "v2.sqlite")
        let v2 = try ModelContainer(for: AircraftSchemaV2.self, url: url)
        let context = ModelContext(v2)
        context.insert(AircraftSchemaV2.Aircraft(tailNumber: "N1"))
        try context.save()
        let before = try v2.store.currentMetadata().modelChecksum
        try v2.store.close()
        #expect {
            try ModelContainer(for: AircraftSchemaV2Changed.self, migrationPlan: AircraftUndeclaredPlan.self, url: url)
        } throws: { error in
            let text = "\(error)"
            return error is SchemaMigrationPlanError && text.contains("nothing was written") && text.contains("photo")
                && text.contains("schema Aircraft 2 (2.0.0) checksum") && text.contains("not declared")
        }
        #expect(try PersistentStore.metadata(at: url).modelChecksum == before)
    }

    @Test func equalChecksumsAreANoOpHop() throws {
        let url = try Self.v1Store()
        let current = try ModelContainer(for: AircraftSchemaV3Again.self, migrationPlan: AircraftPlanWithDuplicate.self, url: url)
        #expect(current.migration?.steps.map(\.kind) == ["declared lightweight", "custom", "no-op (equal checksums)"])
        #expect(try ModelContext(current).fetchCount(FetchDescriptor<AircraftSchemaV3.Aircraft>()) == 2)
        try current.store.close()
    }

    @Test func aModelFileStoreOpensWithTheTypedSchemaAndBack() throws {
        let directory = try ModelDirectory(url: TestPaths.packageRoot.appending(path: "config/models/Aircraft"))
        let url = try TestPaths.temporaryDirectory().appending(path: "files.sqlite")
        // Written by the string-keyed API with the model file's version 1…
        let fileStore = try PersistentStore.open(at: url, model: try #require(directory.version(named: "Aircraft 1")))
        let strings = ObjectContext(store: fileStore)
        _ = try strings.insert("Aircraft", values: ["tailNumber": "F-GSPT", "colorScheme.primary": "red"])
        try strings.save()
        try fileStore.close()
        // …opened and migrated by the typed plan…
        let typed = try ModelContainer(for: AircraftSchemaV3.self, migrationPlan: AircraftMigrationPlan.self, url: url)
        let aircraft = try ModelContext(typed).fetch(FetchDescriptor<AircraftSchemaV3.Aircraft>())
        #expect(aircraft.map(\.tailNumber) == ["F-GSPT"] && aircraft.first?.colorScheme?.primary == "red")
        try typed.store.close()
        // …and read back through the model file's version 3.
        let again = try PersistentStore.open(at: url, model: directory.current)
        #expect(try ObjectContext(store: again).fetch("Aircraft").map { $0["tailNumber"] } == ["F-GSPT"])
        try again.close()
    }
}
