import Foundation

/// A set of model classes and the object model they describe (SwiftData's `Schema`).
///
/// ```swift
/// let schema = Schema([Aircraft.self, FlightData.self], version: "Aircraft 3")
/// let model = try schema.objectModel()      // the same ObjectModel a model file describes
/// print(model.checksum)
/// ```
///
/// Models reachable through relationships are included even when not listed. A one-sided
/// `inverse:` is completed on the other side.
public struct Schema: @unchecked Sendable {
    // @unchecked: metatypes of model classes; immutable.

    /// The model classes, listed ones first, then those reached through relationships.
    public let models: [any PersistentModel.Type]
    /// The version's name in the object model.
    public let version: String

    /// A schema of `models`, named `version` in the object model.
    public init(_ models: [any PersistentModel.Type], version: String = "1") {
        var all: [any PersistentModel.Type] = []
        var seen: Set<ObjectIdentifier> = []
        var queue = models
        while !queue.isEmpty {
            let model = queue.removeFirst()
            guard seen.insert(ObjectIdentifier(model)).inserted else { continue }
            all.append(model)
            for property in model.schemaMetadata.properties {
                if let r = property.relationship { queue.append(r.destination) }
            }
        }
        self.models = all
        self.version = version
    }

    /// The object model: one entity per class, validated.
    ///
    /// - Throws: ``ModelSchemaError`` for two classes with one entity name or an inverse that
    ///   is not a relationship; ``ModelError`` when the model is not valid (an index on an
    ///   unknown key path, inverses that do not point back…), naming the entity and property.
    public func objectModel() throws -> ObjectModel {
        var entities: [Entity] = []
        var owners: [String: ObjectIdentifier] = [:]
        for model in models {
            let metadata = model.schemaMetadata
            if let owner = owners[metadata.entityName], owner != ObjectIdentifier(model) {
                throw ModelSchemaError("two model classes of schema '\(version)' are named '\(metadata.entityName)' (\(String(reflecting: model))); an entity's name is its class's, so rename one",
                                       entity: metadata.entityName)
            }
            owners[metadata.entityName] = ObjectIdentifier(model)
            var entity = try metadata.entity()
            let inferred = metadata.inferredInverses(in: models)
            for index in entity.relationships.indices where entity.relationships[index].inverse == nil {
                entity.relationships[index].inverse = inferred[entity.relationships[index].name]
            }
            entities.append(entity)
        }
        return try ObjectModel(version: version, entities: entities).validated()
    }

    /// The model class of entity `name`.
    public func model(forEntity name: String) -> (any PersistentModel.Type)? {
        models.first { $0.schemaMetadata.entityName == name }
    }
}
