import Foundation

/// One version of an object model: a named set of entities.
///
/// Build one in code, or load it from a model file (JSON or YAML) or a Core Data
/// `.xcdatamodel`. Every model is validated before a store uses it; ``checksum`` identifies
/// its storage layout.
///
/// ```swift
/// let model = try ObjectModel(version: "Aircraft 1", entities: [
///     Entity("Aircraft", attributes: [Attribute("tailNumber", .string, isOptional: false)]),
/// ]).validated()
/// print(model.checksum)   // "nX0G…=" (base64 SHA-256)
/// ```
public struct ObjectModel: Sendable, Hashable {
    /// The version's name (`"Aircraft 1"`), used in messages and model directories.
    /// Not part of the checksum.
    public var version: String
    /// The entities, sorted by name.
    public var entities: [Entity] {
        didSet { lookup = ModelLookup() }
    }
    /// The name of the version that follows this one in a progressive migration graph, if any.
    /// Not part of the checksum.
    public var nextVersion: String?
    /// Free-form information; not part of the checksum.
    public var userInfo: [String: String]
    /// A version identifier chosen by the model's author (Core Data's
    /// `userDefinedModelVersionIdentifier`, recorded in a Core Data store's
    /// `NSStoreModelVersionIdentifiers`). Not part of the checksum.
    public var versionIdentifier: String?
    /// Entity lookups by name and parent, built once per set of entities (not part of equality).
    private var lookup = ModelLookup()

    /// A model version of `entities`; `nextVersion` names the version a progressive migration goes to next.
    public init(version: String, entities: [Entity], nextVersion: String? = nil, userInfo: [String: String] = [:],
                versionIdentifier: String? = nil) {
        self.version = version
        self.entities = entities
        self.nextVersion = nextVersion
        self.userInfo = userInfo
        self.versionIdentifier = versionIdentifier
    }

    // MARK: - Equality

    /// Models are equal when their version, entities, next version, user info and version identifier are.
    public static func == (lhs: ObjectModel, rhs: ObjectModel) -> Bool {
        lhs.version == rhs.version && lhs.entities == rhs.entities && lhs.nextVersion == rhs.nextVersion
            && lhs.userInfo == rhs.userInfo && lhs.versionIdentifier == rhs.versionIdentifier
    }

    /// Hashes what equality compares (see `==`).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(version)
        hasher.combine(entities)
        hasher.combine(nextVersion)
        hasher.combine(userInfo)
        hasher.combine(versionIdentifier)
    }

    // MARK: - Lookup

    /// The entity named `name` (the first one, in a model that declares a name twice).
    public func entity(named name: String) -> Entity? {
        lookup.index(of: entities).positionByName[name].map { entities[$0] }
    }

    /// The entity at the top of `name`'s inheritance chain (itself when it has no parent).
    public func rootEntity(of name: String) -> Entity? {
        var current = entity(named: name)
        var seen: Set<String> = []
        while let e = current, let p = e.parent, !seen.contains(p) {
            seen.insert(e.name)
            current = entity(named: p)
        }
        return current
    }

    /// The chain from `name` up to its root: `[name, parent, …, root]`.
    public func ancestry(of name: String) -> [Entity] {
        var chain: [Entity] = []
        var seen: Set<String> = []
        var current = entity(named: name)
        while let e = current, seen.insert(e.name).inserted {
            chain.append(e)
            current = e.parent.flatMap(entity(named:))
        }
        return chain
    }

    /// The direct sub-entities of `name`.
    public func subentities(of name: String) -> [Entity] {
        (lookup.index(of: entities).childrenByParent[name] ?? []).map { entities[$0] }
    }

    /// `name` and every entity below it, depth first.
    public func hierarchy(of name: String) -> [Entity] {
        guard let root = entity(named: name) else { return [] }
        // Depth first, iteratively (an inheritance chain may be long), never visiting an
        // entity twice (an invalid model may have a cycle).
        let index = lookup.index(of: entities)
        var result: [Entity] = []
        var visited: Set<String> = []
        var stack: [Entity] = [root]
        while let entity = stack.popLast() {
            guard visited.insert(entity.name).inserted else { continue }
            result.append(entity)
            for position in (index.childrenByParent[entity.name] ?? []).reversed() { stack.append(entities[position]) }
        }
        return result
    }

    /// The entities with no parent, each the owner of one table.
    public var rootEntities: [Entity] { lookup.index(of: entities).roots.map { entities[$0] } }

    /// Attributes of `name` including inherited ones, root first (transient ones included).
    public func allAttributes(of name: String) -> [Attribute] {
        ancestry(of: name).reversed().flatMap(\.attributes)
    }

    /// The stored (not transient) attributes of `name`, inherited ones included, root first.
    public func storedAttributes(of name: String) -> [Attribute] {
        allAttributes(of: name).filter { !$0.isTransient }
    }

    /// The composites of entity `name`, inherited ones included.
    public func allComposites(of name: String) -> [CompositeAttribute] {
        ancestry(of: name).reversed().flatMap(\.composites)
    }

    /// The relationships of entity `name`, inherited ones included.
    public func allRelationships(of name: String) -> [Relationship] {
        ancestry(of: name).reversed().flatMap(\.relationships)
    }

    /// Finds a relationship by name on `entity` or its ancestors.
    public func relationship(_ name: String, of entity: String) -> Relationship? {
        allRelationships(of: entity).first { $0.name == name }
    }

    /// The inverse of a relationship, if it declares one and it exists.
    public func inverse(of relationship: Relationship) -> Relationship? {
        guard let inv = relationship.inverse else { return nil }
        return self.relationship(inv, of: relationship.destination)
    }

    /// Whether `name` is `ancestor` or one of its sub-entities.
    public func entity(_ name: String, isKindOf ancestor: String) -> Bool {
        ancestry(of: name).contains { $0.name == ancestor }
    }
}
