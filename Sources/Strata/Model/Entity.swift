import Foundation

/// An entity of an object model: its properties, indexes, constraints and place in an
/// inheritance hierarchy.
///
/// ```swift
/// Entity("Aircraft",
///        attributes: [Attribute("tailNumber", .string, isOptional: false)],
///        composites: [CompositeAttribute("colorScheme", elements: [
///            .attribute(Attribute("primary", .string)),
///            .attribute(Attribute("secondary", .string)),
///        ])],
///        indexes: [Index("byPrimaryColor", keyPaths: ["colorScheme.primary"])])
/// ```
public struct Entity: Sendable, Hashable {
    /// The entity's name (the table's, for a root).
    public var name: String
    /// The parent entity's name; sub-entities share their root entity's table.
    public var parent: String?
    /// Whether the entity has no objects of its own (only its sub-entities do).
    public var isAbstract: Bool
    /// Its attributes.
    public var attributes: [Attribute]
    /// Its composite attributes.
    public var composites: [CompositeAttribute]
    /// Its relationships.
    public var relationships: [Relationship]
    /// Its fetch indexes.
    public var indexes: [Index]
    /// Its uniqueness constraints.
    public var uniquenessConstraints: [UniquenessConstraint]
    /// The name it had in an earlier version, for migration.
    public var renamingIdentifier: String?
    /// Free-form metadata (not part of the checksum).
    public var userInfo: [String: String]

    /// An entity; its parent, if any, names the hierarchy it belongs to.
    public init(
        _ name: String, parent: String? = nil, isAbstract: Bool = false, attributes: [Attribute] = [],
        composites: [CompositeAttribute] = [], relationships: [Relationship] = [], indexes: [Index] = [],
        uniquenessConstraints: [UniquenessConstraint] = [], renamingIdentifier: String? = nil,
        userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.parent = parent
        self.isAbstract = isAbstract
        self.attributes = attributes
        self.composites = composites
        self.relationships = relationships
        self.indexes = indexes
        self.uniquenessConstraints = uniquenessConstraints
        self.renamingIdentifier = renamingIdentifier
        self.userInfo = userInfo
    }

    /// Names of every property declared on this entity (not inherited ones).
    public var propertyNames: [String] {
        attributes.map(\.name) + composites.map(\.name) + relationships.map(\.name)
    }

    /// The attribute `name`, if the entity declares it.
    public func attribute(named name: String) -> Attribute? { attributes.first { $0.name == name } }
    /// The composite `name`, if the entity declares it.
    public func composite(named name: String) -> CompositeAttribute? { composites.first { $0.name == name } }
    /// The relationship `name`, if the entity declares it.
    public func relationship(named name: String) -> Relationship? { relationships.first { $0.name == name } }
}
