import Foundation

/// How an application's store moves from one ``VersionedSchema`` to the next (SwiftData's
/// `SchemaMigrationPlan`), run by ``ModelContainer`` on Strata's staged, progressive and
/// deferred migration.
///
/// ```swift
/// enum AircraftMigrationPlan: SchemaMigrationPlan {
///     static var schemas: [any VersionedSchema.Type] { [AircraftSchemaV1.self, AircraftSchemaV2.self, AircraftSchemaV3.self] }
///     static var stages: [SchemaMigrationStage] { [moveFlightData] }   // V1 → V2 is inferred
///
///     static let moveFlightData = SchemaMigrationStage.custom(
///         fromVersion: AircraftSchemaV2.self, toVersion: AircraftSchemaV3.self,
///         didMigrate: { stage in
///             for aircraft in try stage.context.fetch(FetchDescriptor<AircraftSchemaV3.Aircraft>()) {
///                 if let data = try stage.previousValue(\AircraftSchemaV2.Aircraft.flightData, of: aircraft) {
///                     aircraft.flightParameters.append(AircraftSchemaV3.FlightData(data: data))
///                 }
///             }
///         })
/// }
/// ```
///
/// Where Strata differs from SwiftData:
/// - one custom stage reads the previous version's values and writes the next version's:
///   `didMigrate` sees the new models, and ``SchemaMigrationContext/previousValue(_:of:)``
///   reads what the hop removed (its columns stay until the deferred cleanup);
/// - a pair of consecutive schemas the plan does not declare is a lightweight hop when Strata
///   can infer it, and is otherwise refused before anything is written, with the plan printed;
/// - a schema whose checksum equals its predecessor's is no hop at all (not an error).
public protocol SchemaMigrationPlan {
    /// The schemas in migration order, oldest first.
    static var schemas: [any VersionedSchema.Type] { get }
    /// The declared stages, each between two consecutive schemas.
    static var stages: [SchemaMigrationStage] { get }
}
