import Foundation
import Observation
import Strata
import StrataData
import Testing

/// Model classes work with the Observation module; the context streams typed changes from
/// the change history; the Swift schemas export the model directory the daemon reads.
@Suite struct ObservationAndExportTests {
    final class Flag: @unchecked Sendable {
        var fired = 0
    }

    @Test func propertyChangesAreObservable() throws {
        let context = ModelContext(store: try Fleet.store())
        let plane = Plane(tailNumber: "A", seats: 1)
        context.insert(plane)
        let flag = Flag()
        withObservationTracking { _ = plane.seats } onChange: { flag.fired += 1 }
        plane.tailNumber = "B"   // not observed
        #expect(flag.fired == 0)
        plane.seats = 2
        #expect(flag.fired == 1)
        // A fetched model too.
        try context.save()
        let fetched = try ModelContext(store: context.objectContext.store).fetch(FetchDescriptor<Plane>())[0]
        withObservationTracking { _ = fetched.livery } onChange: { flag.fired += 1 }
        fetched.livery = Livery(primary: "green")
        #expect(flag.fired == 2)
    }

    @Test func theContextStreamsTypedChangesFromTheHistory() async throws {
        let store = try Fleet.store()
        let context = ModelContext(store: store)
        let start = try store.latestHistoryToken()
        let plane = Plane(tailNumber: "A")
        context.insert(plane)
        context.insert(CrewMember(name: "not a plane", role: "x"))
        try context.save()
        plane.seats = 3
        try context.save()
        try context.delete(plane)
        try context.save()
        var changes: [ModelChange<Plane>] = []
        for try await change in context.changes(to: Plane.self, since: start) {
            changes.append(change)
            if changes.count == 3 { break }
        }
        #expect(changes.map(\.kind) == [.insert, .update, .delete])
        #expect(changes[1].properties == ["seats"])
        #expect(Set(changes.map(\.id.entityName)) == ["Plane"])
    }

    static var schemas: [any VersionedSchema.Type] { [AircraftSchemaV1.self, AircraftSchemaV2.self, AircraftSchemaV3.self] }

    @Test func theExportedModelDirectoryHasTheClassesChecksums() throws {
        let directory = try TestPaths.temporaryDirectory().appending(path: "Aircraft")
        try ModelDirectoryExport.write(Self.schemas, to: directory)
        let exported = try ModelDirectory(url: directory)
        #expect(exported.versions.map(\.version) == ["Aircraft 1", "Aircraft 2", "Aircraft 3"])
        #expect(exported.current.version == "Aircraft 3")
        for (schema, version) in zip(Self.schemas, exported.versions) {
            #expect(try schema.objectModel().checksum == version.checksum)
        }
        // The shipped directory (the daemon's demo model) is the same model.
        let shipped = try ModelDirectory(url: TestPaths.packageRoot.appending(path: "config/models/Aircraft"))
        #expect(shipped.versions.map(\.checksum) == exported.versions.map(\.checksum))
    }

    @Test func stratactlReportsTheSameChecksumsForTheExportAndTheClasses() throws {
        let stratactl = TestPaths.productsDirectory.appending(path: "stratactl")
        try #require(FileManager.default.isExecutableFile(atPath: stratactl.path), "build stratactl first (swift build)")
        let directory = try TestPaths.temporaryDirectory().appending(path: "Aircraft")
        try ModelDirectoryExport.write(Self.schemas, to: directory)
        let process = Process()
        process.executableURL = stratactl
        process.arguments = ["model", "checksum", directory.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let expected = try Self.schemas.map { "\($0.versionName)\t\(try $0.objectModel().checksum)" }
        let lines = output.split(separator: "\n").map { $0.split(separator: "\t").prefix(2).joined(separator: "\t") }
        #expect(lines == expected)
    }
}
