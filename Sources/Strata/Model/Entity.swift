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
    public var name: String
    /// The parent entity's name; sub-entities share their root entity's table.
    public var parent: String?
    public var isAbstract: Bool
    public var attributes: [Attribute]
    public var composites: [CompositeAttribute]
    public var relationships: [Relationship]
    public var indexes: [Index]
    public var uniquenessConstraints: [UniquenessConstraint]
    public var renamingIdentifier: String?
    public var userInfo: [String: String]

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

    public func attribute(named name: String) -> Attribute? { attributes.first { $0.name == name } }
    public func composite(named name: String) -> CompositeAttribute? { composites.first { $0.name == name } }
    public func relationship(named name: String) -> Relationship? { relationships.first { $0.name == name } }
}
