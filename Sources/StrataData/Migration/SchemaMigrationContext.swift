import Foundation

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
