/// An option of ``Attribute(_:originalName:)`` (SwiftData's `Schema.Attribute.Option`).
public struct AttributeOption: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case unique
        case preserveValueOnDeletion
    }

    let kind: Kind

    /// The attribute's value is unique among the entity's objects (a uniqueness constraint,
    /// stored as a `UNIQUE` index).
    public static let unique = AttributeOption(kind: .unique)
    /// The value is kept in the change history when the object is deleted (Core Data's
    /// `preservesValueInHistoryOnDeletion`).
    public static let preserveValueOnDeletion = AttributeOption(kind: .preserveValueOnDeletion)
}

/// An option of ``Relationship(_:deleteRule:minimumModelCount:maximumModelCount:originalName:inverse:)``.
public struct RelationshipOption: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case ordered
    }

    let kind: Kind

    /// A to-many relationship that keeps its order (an ordering column, Core Data's ordered
    /// relationships). SwiftData has no such option; to-many relationships are unordered by default.
    public static let ordered = RelationshipOption(kind: .ordered)
}
