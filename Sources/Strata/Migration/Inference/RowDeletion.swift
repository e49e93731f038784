import Foundation

/// Rows deleted from a table: removed sub-entities, or rows that moved to another table.
public struct RowDeletion: Sendable, Hashable, Codable {
    /// The table the rows leave.
    public var table: String
    /// Values of the table's `_entity` column whose rows are deleted.
    public var entityValues: [String]
    /// Foreign-key columns (`table`, `column`) elsewhere that may point at the deleted rows and are
    /// set to NULL first (rows that moved keep their `_pk`, so these are only for removed entities).
    public var nullifiedReferences: [ColumnReference]
}

/// A column of a table.
public struct ColumnReference: Sendable, Hashable, Codable {
    /// The table.
    public var table: String
    /// The column.
    public var column: String
    /// A column of a table.
    public init(table: String, column: String) {
        self.table = table
        self.column = column
    }
}
