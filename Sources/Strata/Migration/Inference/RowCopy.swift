import Foundation

/// Rows of some entities copied from one table into a table created by the same plan.
public struct RowCopy: Sendable, Hashable, Codable {
    /// The table copied from.
    public var fromTable: String
    /// The table copied into.
    public var toTable: String
    /// Destination entity names whose rows are copied.
    public var entities: [String]
    /// Destination columns, in order.
    public var columns: [String]
    /// One SQL expression over the source table per destination column.
    public var expressions: [String]
    /// Filter on the source table (`"_entity" IN ('Glider')`), if any.
    public var filter: String?
}
