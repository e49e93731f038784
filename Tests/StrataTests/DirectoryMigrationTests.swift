import Foundation
import Testing
@testable import Strata

/// ``DirectoryMigration``: the one entry point stratad and `stratactl migrate` share for a store
/// described by a model directory and a target version — which stores it applies to, the route
/// with its custom stages by hop, progress (the first hop announced before the run), and a
/// failure that names the version the store is at and the hop that failed.
@Suite("Directory migration")
struct DirectoryMigrationTests {
    typealias S = StagedScenarios

    /// Every progress step, in order (the callback runs on the migrating thread).
    final class Steps: @unchecked Sendable {
        var all: [StagedMigrationProgress] = []
    }

    @Test func appliesOnlyToAStoreAtAnEarlierVersionOfTheDirectory() throws {
        let migration = DirectoryMigration(directory: S.aircraftDirectory, targetVersion: "Aircraft 3")
        let temporary = TemporaryStore()
        try S.aircraftStore(version: 1, at: temporary.url)
        #expect(migration.applies(to: try PersistentStore.metadata(at: temporary.url)))
        let atTarget = TemporaryStore()
        try PersistentStore.open(at: atTarget.url, model: S.aircraft(3)).close()
        #expect(!migration.applies(to: try PersistentStore.metadata(at: atTarget.url)))
        let behind = DirectoryMigration(directory: S.aircraftDirectory, targetVersion: "Aircraft 1")
        #expect(!behind.applies(to: try PersistentStore.metadata(at: atTarget.url)))
    }

    @Test func runsTheRouteHopByHopWithItsCustomStage() throws {
        let temporary = TemporaryStore()
        try S.aircraftStore(version: 1, at: temporary.url)
        let metadata = try PersistentStore.metadata(at: temporary.url)
        let migration = DirectoryMigration(directory: S.aircraftDirectory, targetVersion: "Aircraft 3", customStages: [S.moveFlightData])
        let route = try migration.route(from: metadata)
        #expect(route.path.versions.map(\.version) == ["Aircraft 1", "Aircraft 2", "Aircraft 3"])
        #expect(route.customLabel(ofHop: 1) == nil)
        #expect(route.customLabel(ofHop: 2) == "move flightData into FlightData")
        #expect(route.unusedCustomStages.isEmpty)

        let steps = Steps()
        let report = try migration.run(route, storeAt: temporary.url, from: metadata) { steps.all.append($0) }
        #expect(report.endVersion == "Aircraft 3" && report.hops.count == 2)
        let starts = steps.all.filter { $0.phase == .hopStarted }
        #expect(starts.map(\.hop) == [1, 2], "each hop announced once: \(starts)")
        #expect(steps.all.first?.phase == .hopStarted && steps.all.first?.hop == 1, "the first hop is announced before the run")
        #expect(steps.all.filter { $0.phase == .hopCommitted }.map(\.toVersion) == ["Aircraft 2", "Aircraft 3"])
        #expect(try PersistentStore.metadata(at: temporary.url).modelVersion == "Aircraft 3")
    }

    struct StageFailed: Error {}

    @Test func aFailingHopIsNamedWithTheVersionTheStoreIsAt() throws {
        let temporary = TemporaryStore()
        try S.aircraftStore(version: 1, at: temporary.url)
        let metadata = try PersistentStore.metadata(at: temporary.url)
        let failing = MigrationStage.custom(
            from: ModelReference(version: "Aircraft 2", in: ModelFileFixtures.configModels.appending(path: "Aircraft"), checksum: S.aircraft(2).checksum),
            to: ModelReference(version: "Aircraft 3", in: ModelFileFixtures.configModels.appending(path: "Aircraft"), checksum: S.aircraft(3).checksum),
            label: "always fails", didMigrate: { _ in throw StageFailed() })
        let migration = DirectoryMigration(directory: S.aircraftDirectory, targetVersion: "Aircraft 3", customStages: [failing])
        let route = try migration.route(from: metadata)
        var caught: DirectoryMigrationError?
        do {
            try migration.run(route, storeAt: temporary.url, from: metadata)
        } catch {
            caught = error
        }
        let error = try #require(caught, "the failing stage fails the migration")
        #expect(error.storeVersion == "Aircraft 2", "the first hop committed")
        #expect(error.hop == DirectoryMigrationError.Hop(from: "Aircraft 2", to: "Aircraft 3", number: 2, count: 2, customLabel: "always fails"))
        #expect(error.error.code == .handlerFailed, "\(error)")
        #expect(error.changed)
        #expect(try PersistentStore.metadata(at: temporary.url).modelVersion == "Aircraft 2", "the first hop stays committed")
    }
}
