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

/// A stage of a ``SchemaMigrationPlan`` (SwiftData's `MigrationStage`; the name differs because
/// Strata's own ``MigrationStage`` is the string-keyed stage this one runs as).
public enum SchemaMigrationStage: Sendable {
    /// A change Strata infers (add, remove or rename attributes and entities, widen types…).
    case lightweight(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type)
    /// A change with code: `willMigrate` on the old models before the hop, `didMigrate` on
    /// the new models after it (with the removed values still readable), in one transaction.
    case custom(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type,
                willMigrate: (@Sendable (SchemaMigrationContext) throws -> Void)?,
                didMigrate: (@Sendable (SchemaMigrationContext) throws -> Void)?)

    /// The stage's source schema.
    public var fromVersion: any VersionedSchema.Type {
        switch self {
        case .lightweight(let from, _), .custom(let from, _, _, _): return from
        }
    }

    /// The stage's destination schema.
    public var toVersion: any VersionedSchema.Type {
        switch self {
        case .lightweight(_, let to), .custom(_, let to, _, _): return to
        }
    }

    /// `custom(fromVersion:toVersion:didMigrate:)` without a `willMigrate`.
    public static func custom(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type,
                              didMigrate: @escaping @Sendable (SchemaMigrationContext) throws -> Void) -> SchemaMigrationStage {
        .custom(fromVersion: fromVersion, toVersion: toVersion, willMigrate: nil, didMigrate: didMigrate)
    }
}

/// What a custom stage's handler works with: a typed context on the store inside the stage's
/// transaction (the old schema's models in `willMigrate`, the new schema's in `didMigrate`)
/// and the values the hop removed.
public final class SchemaMigrationContext {
    /// The typed context (see above for its models). Unsaved changes are saved when the
    /// handler returns; a thrown error rolls the whole stage back.
    public let context: ModelContext
    /// The stage underneath (its SQL connection, its models).
    public let stage: MigrationStageContext

    init(stage: MigrationStageContext) {
        self.stage = stage
        self.context = ModelContext(objectContext: stage.context)
    }

    /// The value `model` had for a property of an earlier schema's class — in `didMigrate`,
    /// a property the hop removed (`\AircraftSchemaV2.Aircraft.flightData` read from a
    /// `AircraftSchemaV3.Aircraft`): its column is still there until the deferred cleanup.
    ///
    /// - Throws: ``ModelSchemaError`` when the key path is not a persisted attribute of
    ///   `Old`, or the store has no such column any more.
    public func previousValue<Old: PersistentModel, V: PersistentAttributeValue>(_ keyPath: KeyPath<Old, V>, of model: some PersistentModel) throws -> V {
        guard let property = Old.schemaMetadata.property(for: keyPath), case .attribute = property.kind else {
            throw ModelSchemaError("\(keyPath) is not a persisted attribute of \(Old.self)", entity: Old.schemaMetadata.entityName)
        }
        guard let object = model.persistentBackingData.object, let value = object.value(forKeyPath: property.name) else {
            throw ModelSchemaError("the stage's store has no attribute '\(property.name)' on '\(type(of: model).schemaMetadata.entityName)' (it was neither kept by this hop nor removed by it)",
                                   entity: type(of: model).schemaMetadata.entityName, property: property.name)
        }
        return V.strataRead(value)
    }
}
