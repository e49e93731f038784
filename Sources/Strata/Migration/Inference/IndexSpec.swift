import Foundation

/// An index to create: derived from a fetch index, a uniqueness constraint, a to-one
/// relationship, a join table or an entity column.
public struct IndexSpec: Sendable, Hashable, Codable {
    /// The index's name.
    public var name: String
    /// The table it indexes.
    public var table: String
    /// The indexed columns.
    public var columns: [String]
    /// Whether it is unique.
    public var isUnique: Bool
    /// The `CREATE INDEX` statement (from ``StorageLayout/createIndexSQL(_:ifNotExists:)``).
    public var sql: String
    /// For uniqueness constraints: the entity and keypaths, for the duplicate-rows error.
    public var entity: String?
    /// The key paths of a uniqueness constraint, for error messages.
    public var keyPaths: [String]

    /// A query returning one group of duplicate values, or no row when the unique index can be built.
    public var duplicateCheckSQL: String? {
        guard isUnique else { return nil }
        let cols = columns.map(quoteIdentifier).joined(separator: ", ")
        let notNull = columns.map { "\(quoteIdentifier($0)) IS NOT NULL" }.joined(separator: " AND ")
        return "SELECT \(cols), count(*) FROM \(quoteIdentifier(table)) WHERE \(notNull) GROUP BY \(cols) HAVING count(*) > 1 LIMIT 1"
    }
}
