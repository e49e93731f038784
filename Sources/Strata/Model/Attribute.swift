import Foundation

/// A scalar property of an entity: a name, a type, optionality and an optional default.
///
/// ```swift
/// Attribute("tailNumber", .string, isOptional: false)
/// Attribute("flightHours", .double, defaultValue: 0)
/// ```
public struct Attribute: Sendable, Hashable {
    /// The property name, also the column name (composite leaves are prefixed by their path).
    public var name: String
    /// The value type.
    public var type: AttributeType
    /// Whether the attribute may be nil. Enforced by the object layer on save, not by SQL.
    public var isOptional: Bool
    /// The value a new object starts with, and the value existing rows get when the attribute
    /// is added by a migration.
    public var defaultValue: Value?
    /// The previous name of this property, for lightweight renames (Core Data's renaming identifier).
    public var renamingIdentifier: String?
    /// Free-form information; not part of the version checksum.
    public var userInfo: [String: String]
    /// A transient attribute is part of the model but not of the store (Core Data's
    /// `isTransient`): it has no column, objects keep its value in memory only, and it is not
    /// part of the version checksum.
    public var isTransient: Bool
    /// Whether the value is kept in persistent history when the object is deleted (Core
    /// Data's `preservesValueInHistoryOnDeletion`, `preserveAfterDeletion` in a model file).
    /// Kept with the model; not part of the version checksum.
    public var preservesValueInHistoryOnDeletion: Bool

    /// An attribute; optional, without default, persistent unless told otherwise.
    public init(
        _ name: String, _ type: AttributeType, isOptional: Bool = true, defaultValue: Value? = nil,
        renamingIdentifier: String? = nil, userInfo: [String: String] = [:], isTransient: Bool = false,
        preservesValueInHistoryOnDeletion: Bool = false
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        // Literals in code (`defaultValue: 0` for a double) take the attribute's type; a value
        // that does not convert is kept as given, for validation to report.
        self.defaultValue = defaultValue.map { $0.coerced(to: type) ?? $0 }
        self.renamingIdentifier = renamingIdentifier
        self.userInfo = userInfo
        self.isTransient = isTransient
        self.preservesValueInHistoryOnDeletion = preservesValueInHistoryOnDeletion
    }
}

/// A named group of attributes stored inline in its entity, like Core Data's
/// `NSCompositeAttributeDescription` (WWDC 2023). Elements may themselves be composites;
/// relationships are not allowed inside.
///
/// Each leaf becomes its own column, named by its path with `_`: `colorScheme.primary` is
/// stored in the column `colorScheme_primary`, and can be indexed, sorted and queried by keypath.
public struct CompositeAttribute: Sendable, Hashable {
    /// The composite's name.
    public var name: String
    /// Its elements: attributes or nested composites.
    public var elements: [CompositeElement]
    /// Whether the whole composite may be absent.
    public var isOptional: Bool
    /// The name it had in an earlier version, for migration.
    public var renamingIdentifier: String?
    /// Free-form metadata (not part of the checksum).
    public var userInfo: [String: String]

    /// A composite attribute of `elements`.
    public init(
        _ name: String, elements: [CompositeElement], isOptional: Bool = true,
        renamingIdentifier: String? = nil, userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.elements = elements
        self.isOptional = isOptional
        self.renamingIdentifier = renamingIdentifier
        self.userInfo = userInfo
    }

    /// Every leaf attribute with its path relative to this composite (`["primary"]`, `["inner", "x"]`).
    public var leaves: [(path: [String], attribute: Attribute)] {
        var result: [(path: [String], attribute: Attribute)] = []
        for element in elements {
            switch element {
            case .attribute(let a): result.append(([a.name], a))
            case .composite(let c):
                for leaf in c.leaves { result.append(([c.name] + leaf.path, leaf.attribute)) }
            }
        }
        return result
    }
}

/// One element of a composite attribute: a scalar attribute or a nested composite.
public indirect enum CompositeElement: Sendable, Hashable {
    case attribute(Attribute)
    case composite(CompositeAttribute)

    /// The element's name.
    public var name: String {
        switch self {
        case .attribute(let a): return a.name
        case .composite(let c): return c.name
        }
    }
}
