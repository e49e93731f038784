import Foundation

/// One rewrite of a table into its final shape, the SQLite way: create a shadow table with the
/// destination `CREATE TABLE`, copy the rows, drop the old table, rename the shadow, recreate
/// the table's indexes.
///
/// After the synchronous part of a plan, every destination column exists in the table under
/// its final name, so ``columns`` are copied as they are; everything else (``droppedColumns``)
/// is left behind. The online finisher copies in batches by `_pk` (entity tables) or rowid
/// (join tables), capturing concurrent changes, then swaps in one short transaction.
public struct TableRewrite: Sendable, Hashable, Codable {
    /// The table rewritten.
    public var table: String
    /// Name of the shadow table the rows are copied into (`_strata_rewrite_<table>`).
    public var shadowTable: String
    /// The destination `CREATE TABLE`, with the shadow name.
    public var createShadowSQL: String
    /// The destination `CREATE TABLE`, with the final name.
    public var finalCreateSQL: String
    /// The destination columns, in order; all exist in the table being rewritten.
    public var columns: [String]
    /// Columns left behind (removed properties, ordering columns no longer used, freed names).
    public var droppedColumns: [String]
    /// Columns whose declared type changes (widening type changes).
    public var retypedColumns: [String]
    /// `CREATE INDEX IF NOT EXISTS` statements of the table's destination indexes.
    public var indexSQL: [String]
    /// Why the table is rewritten, one reason per change.
    public var reasons: [String]

    /// The online copy's cursor (`_strata_copied_<table>`): one row, the last key copied into
    /// the shadow, which the capture triggers read so that they mirror only rows the copy has
    /// passed (rows after it are copied with their values of the moment).
    public var copyCursorTable: String { "_strata_copied_" + table }
}
