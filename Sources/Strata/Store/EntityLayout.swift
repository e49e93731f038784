import Foundation

/// Where an attribute or composite leaf of an entity is stored.
public struct AttributeColumn: Sendable, Hashable {
    /// The column's name.
    public var column: String
    /// `tailNumber` or `colorScheme.primary`.
    public var keyPath: String
    /// The attribute (for a composite leaf: the leaf element as an attribute).
    public var attribute: Attribute
}

/// Where a relationship's links are stored.
public enum RelationshipStorage: Sendable, Hashable {
    /// A to-one relationship: a column on the owner's table.
    case foreignKey(column: String, destinationTable: String)
    /// A to-many relationship whose inverse is to-one: the inverse's column on the destination's table.
    case inverseForeignKey(table: String, column: String, orderColumn: String?)
    /// A join table: the owner's id is in `ownColumn`, the related object's in `otherColumn`.
    case joinTable(name: String, ownColumn: String, otherColumn: String, orderColumn: String?)
}

/// The storage of one entity: its table and where each property lives.
public struct EntityLayout: Sendable, Hashable {
    /// The entity's name.
    public var name: String
    /// The root of its hierarchy.
    public var root: String
    /// The table that stores it.
    public var table: String
    /// Whether the table has an `_entity` column (the hierarchy has several entities).
    public var hasEntityColumn: Bool
    /// This entity and its sub-entities: the `_entity` values a fetch of this entity matches.
    public var entityNames: [String]
    /// Keyed by keypath (`tailNumber`, `colorScheme.primary`), inherited ones included.
    public var attributeColumns: [String: AttributeColumn] = [:]
    /// Keyed by relationship name, inherited ones included.
    public var relationships: [String: RelationshipStorage] = [:]
    /// Every attribute column of the entity in table-column order: an object keeps its values
    /// in this order ("slots"), so that reading a row and binding an insert need no lookups.
    public var slots: [AttributeColumn] = []
    /// Slot number by keypath.
    public var slotIndex: [String: Int] = [:]
    /// The attribute type of each slot.
    public var slotTypes: [AttributeType] = []
    /// Columns an insert fills with a constant besides the slots, by column: SQL literals. A
    /// store's own layout has none; the layout that serves an older model version beside the
    /// current one (``VersionBridge``) gives the columns that version does not know their
    /// defaults (and `_entity` its stored name).
    public var insertConstants: [String: String] = [:]

    /// The column for an attribute keypath, a composite leaf, or a to-one relationship.
    public func column(forKeyPath keyPath: String) -> String? {
        if let a = attributeColumns[keyPath] { return a.column }
        if case .foreignKey(let column, _)? = relationships[keyPath] { return column }
        return nil
    }
}
