import Foundation

/// A SQL index derived from a fetch index, a uniqueness constraint, a to-one relationship,
/// a join table or an entity hierarchy.
public struct IndexLayout: Sendable, Hashable {
    /// One indexed column and its direction.
    public struct Column: Sendable, Hashable {
        /// The column's name.
        public var name: String
        /// Whether the column sorts ascending (`DESC` otherwise).
        public var ascending: Bool
    }
    /// What in the model asks for the index.
    public enum Origin: Sendable, Hashable {
        case fetchIndex(entity: String, name: String)
        case uniqueness(entity: String, keyPaths: [String])
        case foreignKey(entity: String, relationship: String)
        case joinTable(name: String)
        case entityColumn(table: String)
    }
    /// The index's name.
    public var name: String
    /// The table it indexes.
    public var table: String
    /// The indexed columns, in order.
    public var columns: [Column]
    /// Whether it is a `UNIQUE` index (a uniqueness constraint).
    public var isUnique: Bool
    /// What in the model asks for it.
    public var origin: Origin
}
