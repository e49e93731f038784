import Foundation

/// Links copied into a join table from the storage a relationship had before (a foreign-key
/// column after to-one -> to-many, the to-one side's column after one-to-many -> many-to-many).
public struct JoinPopulation: Sendable, Hashable, Codable {
    /// Where the links come from.
    public struct Source: Sendable, Hashable, Codable {
        /// The table holding the foreign-key column.
        public var table: String
        /// The column holding the links.
        public var column: String
        /// Whether the row's `_pk` goes in `source_id` (and the column's value in `target_id`).
        public var rowIsSource: Bool
        /// An ordering column to copy along, into `source_order` or `target_order`.
        public var orderColumn: String?
        /// Whether the link order goes into the source order column.
        public var orderIntoSource: Bool
        /// The table the column points into (rows whose value points at no row are skipped).
        public var referencedTable: String
    }
    /// The join table filled.
    public var joinTable: String
    /// Where its links come from.
    public var sources: [Source]
    /// Ordering columns of the join table to number by `_pk` order where no order was copied.
    public var numberedOrderColumns: [String]
}
