import Foundation
import StrataData

/// The WWDC 2023 story as a plan: V1 → V2 lightweight (declared), V2 → V3 custom — one stage
/// that reads V2's `flightData` and writes V3's `FlightData` objects.
enum AircraftMigrationPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [AircraftSchemaV1.self, AircraftSchemaV2.self, AircraftSchemaV3.self] }
    static var stages: [SchemaMigrationStage] { [addFlightData, moveFlightData] }

    static let addFlightData = SchemaMigrationStage.lightweight(fromVersion: AircraftSchemaV1.self, toVersion: AircraftSchemaV2.self)

    static let moveFlightData = SchemaMigrationStage.custom(
        fromVersion: AircraftSchemaV2.self, toVersion: AircraftSchemaV3.self,
        didMigrate: { stage in
            for aircraft in try stage.context.fetch(FetchDescriptor<AircraftSchemaV3.Aircraft>()) {
                if let data = try stage.previousValue(\AircraftSchemaV2.Aircraft.flightData, of: aircraft) {
                    aircraft.flightParameters.append(AircraftSchemaV3.FlightData(data: data))
                }
            }
        })
}

/// The same plan with no declared stage for V1 → V2 (inferred) .
enum AircraftInferredPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { AircraftMigrationPlan.schemas }
    static var stages: [SchemaMigrationStage] { [AircraftMigrationPlan.moveFlightData] }
}

/// V2 → a V2 whose `photo` changed type (Data → String), with no stage: not inferable.
enum AircraftUndeclaredPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [AircraftSchemaV2.self, AircraftSchemaV2Changed.self] }
    static var stages: [SchemaMigrationStage] { [] }
}

/// A V2 whose `photo` is a String: a type change no lightweight migration can make.
enum AircraftSchemaV2Changed: VersionedSchema {
    static let versionIdentifier = Schema.Version(2, 1, 0)
    static let versionName = "Aircraft 2 photo as text"
    static var models: [any PersistentModel.Type] { [Aircraft.self] }

    @Model
    final class Aircraft {
        var tailNumber: String
        var aircraftType: String?
        var aircraftCategory: String?
        var aircraftClass: String?
        var photo: String?
        var colorScheme: ColorScheme?
        var flightData: Data?
        #Index<Aircraft>([\.colorScheme?.primary], name: "byPrimaryColor")

        init(tailNumber: String) { self.tailNumber = tailNumber }
    }
}

/// V3 again under another name: the same checksum as V3 (a no-op hop).
enum AircraftSchemaV3Again: VersionedSchema {
    static let versionIdentifier = Schema.Version(3, 0, 1)
    static let versionName = "Aircraft 3 again"
    static var models: [any PersistentModel.Type] { AircraftSchemaV3.models }
}

enum AircraftPlanWithDuplicate: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { AircraftMigrationPlan.schemas + [AircraftSchemaV3Again.self] }
    static var stages: [SchemaMigrationStage] { AircraftMigrationPlan.stages }
}
