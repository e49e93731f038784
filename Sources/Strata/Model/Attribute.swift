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
