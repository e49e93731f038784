import Foundation

/// A table holding one entity hierarchy.
public struct TableLayout: Sendable, Hashable {
    /// The table's name (the root entity's).
    public var name: String
    /// The root entity of the hierarchy stored here.
    public var rootEntity: String
    /// The columns, system columns first.
    public var columns: [ColumnLayout]

    /// The column named `name`, if any.
    public func column(named name: String) -> ColumnLayout? { columns.first { $0.name == name } }
}

/// One column of an entity table.
public struct ColumnLayout: Sendable, Hashable {
    /// What a column stores.
    public enum Role: Sendable, Hashable {
        case primaryKey
        case version
        case entityName
        case attribute(entity: String, keyPath: String, type: AttributeType)
        case foreignKey(entity: String, relationship: String, destinationTable: String)
        case order(entity: String, relationship: String)
    }
    /// The column's name.
    public var name: String
    /// The declared SQL type (`TEXT`, `INTEGER`, `REAL`, `BLOB`, `NUMERIC`).
    public var sqlType: String
    /// What the column stores.
    public var role: Role
}
