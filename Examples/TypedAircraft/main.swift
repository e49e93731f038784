// The WWDC 2023 Aircraft story ("What's new in Core Data": staged migration) written with
// StrataData: three versioned schemas in Swift, V1 → V2 lightweight, V2 → V3 one custom stage
// that moves each aircraft's `flightData` blob into FlightData objects, cleanup deferred.
//
//   swift run typed-aircraft-example [STORE] [--export DIR]
//
// Without STORE the example works in a temporary directory. --export writes the schemas'
// model directory (what stratad reads; compare with config/models/Aircraft).
import Foundation
import StrataData

@Composite
struct ColorScheme: Codable, Hashable {
    var primary: String?
    var secondary: String?
    var tertiary: String?
}

enum AircraftSchemaV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static let versionName = "Aircraft 1"
    static var models: [any PersistentModel.Type] { [Aircraft.self] }

    @Model
    final class Aircraft {
        var tailNumber: String
        var aircraftType: String?
        var aircraftCategory: String?
        var aircraftClass: String?
        var photo: Data?
        var colorScheme: ColorScheme?
        #Index<Aircraft>([\.colorScheme?.primary], name: "byPrimaryColor")

        init(tailNumber: String, aircraftType: String?, colorScheme: ColorScheme?) {
            self.tailNumber = tailNumber
            self.aircraftType = aircraftType
            self.colorScheme = colorScheme
        }
    }
}

enum AircraftSchemaV2: VersionedSchema {
    static let versionIdentifier = Schema.Version(2, 0, 0)
    static let versionName = "Aircraft 2"
    static var models: [any PersistentModel.Type] { [Aircraft.self] }

    @Model
    final class Aircraft {
        var tailNumber: String
        var aircraftType: String?
        var aircraftCategory: String?
        var aircraftClass: String?
        var photo: Data?
        var colorScheme: ColorScheme?
        var flightData: Data?
        #Index<Aircraft>([\.colorScheme?.primary], name: "byPrimaryColor")

        init(tailNumber: String) { self.tailNumber = tailNumber }
    }
}

enum AircraftSchemaV3: VersionedSchema {
    static let versionIdentifier = Schema.Version(3, 0, 0)
    static let versionName = "Aircraft 3"
    static var models: [any PersistentModel.Type] { [Aircraft.self, FlightData.self] }

    @Model
    final class Aircraft {
        var tailNumber: String
        var aircraftType: String?
        var aircraftCategory: String?
        var aircraftClass: String?
        var photo: Data?
        var colorScheme: ColorScheme?
        @Relationship(deleteRule: .cascade, inverse: \FlightData.aircraft)
        var flightParameters: [FlightData] = []
        #Index<Aircraft>([\.colorScheme?.primary], name: "byPrimaryColor")

        init(tailNumber: String) { self.tailNumber = tailNumber }
    }

    @Model
    final class FlightData {
        var data: Data
        var aircraft: Aircraft?

        init(data: Data) { self.data = data }
    }
}

enum AircraftMigrationPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [AircraftSchemaV1.self, AircraftSchemaV2.self, AircraftSchemaV3.self] }
    static var stages: [SchemaMigrationStage] { [migrateV1toV2, migrateV2toV3] }

    static let migrateV1toV2 = SchemaMigrationStage.lightweight(fromVersion: AircraftSchemaV1.self, toVersion: AircraftSchemaV2.self)

    /// One stage reads V2's values and writes V3's (SwiftData needs two stages and temporary
    /// storage for this): `didMigrate` sees V3's models, and the removed `flightData` column
    /// is still there until the deferred cleanup drops it.
    static let migrateV2toV3 = SchemaMigrationStage.custom(
        fromVersion: AircraftSchemaV2.self, toVersion: AircraftSchemaV3.self,
        didMigrate: { stage in
            for aircraft in try stage.context.fetch(FetchDescriptor<AircraftSchemaV3.Aircraft>()) {
                if let data = try stage.previousValue(\AircraftSchemaV2.Aircraft.flightData, of: aircraft) {
                    aircraft.flightParameters.append(AircraftSchemaV3.FlightData(data: data))
                }
            }
        })
}

var arguments = Array(CommandLine.arguments.dropFirst())
if let flag = arguments.firstIndex(of: "--export"), arguments.indices.contains(flag + 1) {
    let directory = URL(filePath: arguments[flag + 1])
    try ModelDirectoryExport.write(AircraftMigrationPlan.schemas, to: directory)
    print("wrote the model directory \(directory.path)")
    arguments.removeSubrange(flag...(flag + 1))
}
let url = arguments.first.map { URL(filePath: $0) }
    ?? FileManager.default.temporaryDirectory.appending(path: "typed-aircraft-\(UUID().uuidString).sqlite")

// Version 1: two aircraft.
let v1 = try ModelContainer(for: AircraftSchemaV1.self, migrationPlan: AircraftMigrationPlan.self, url: url)
let context1 = ModelContext(v1)
context1.insert(AircraftSchemaV1.Aircraft(tailNumber: "F-GSPT", aircraftType: "A320", colorScheme: ColorScheme(primary: "red")))
context1.insert(AircraftSchemaV1.Aircraft(tailNumber: "F-HBXA", aircraftType: "A321", colorScheme: ColorScheme(primary: "blue")))
try context1.save()
try v1.store.close()

// Version 2 (lightweight): one aircraft gets flight data.
let v2 = try ModelContainer(for: AircraftSchemaV2.self, migrationPlan: AircraftMigrationPlan.self, url: url)
let context2 = ModelContext(v2)
for aircraft in try context2.fetch(FetchDescriptor<AircraftSchemaV2.Aircraft>(predicate: #Predicate { $0.tailNumber == "F-GSPT" })) {
    aircraft.flightData = Data("recorder".utf8)
}
try context2.save()
print("V2:", v2.migration?.steps.map(\.description) ?? [])
try v2.store.close()

// Version 3 (custom stage): the blob becomes a FlightData object; the column's drop is deferred.
let clock = ContinuousClock()
let start = clock.now
let v3 = try ModelContainer(for: AircraftSchemaV3.self, migrationPlan: AircraftMigrationPlan.self, url: url)
print("V3:", v3.migration?.steps.map(\.description) ?? [], "ready in", clock.now - start)
let context3 = ModelContext(v3)
for aircraft in try context3.fetch(FetchDescriptor<AircraftSchemaV3.Aircraft>(sortBy: [SortDescriptor(\.tailNumber)])) {
    print(aircraft.tailNumber, aircraft.colorScheme?.primary ?? "-", aircraft.flightParameters.map { String(decoding: $0.data, as: UTF8.self) })
}
print("deferred cleanup pending:", try v3.store.pendingDeferredWork().map(\.summary))
try await v3.store.finishDeferredMigration()
print("deferred cleanup pending after finishing:", try v3.store.pendingDeferredWork().count)
try v3.store.close()
