import Foundation

/// A join table for a many-to-many or an inverse-less to-many relationship.
public struct JoinTableLayout: Sendable, Hashable {
    /// The join table's name: `<Entity>_<relationship>`.
    public var name: String
    /// The table of the source entity.
    public var sourceTable: String
    /// The table of the target entity.
    public var targetTable: String
    /// The entity whose relationship names the table.
    public var sourceEntity: String
    /// The relationship of `sourceEntity` stored here.
    public var sourceRelationship: String
    /// The entity at the other end.
    public var targetEntity: String
    /// The inverse relationship, if there is one.
    public var targetRelationship: String?
    /// Whether the source side is ordered (a `source_order` column).
    public var sourceOrdered: Bool
    /// Whether the target side is ordered (a `target_order` column).
    public var targetOrdered: Bool

    /// Column names, in order.
    public var columnNames: [String] {
        ["source_id", "target_id"] + (sourceOrdered ? ["source_order"] : []) + (targetOrdered ? ["target_order"] : [])
    }
}
