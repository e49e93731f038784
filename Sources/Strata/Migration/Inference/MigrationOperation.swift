import Foundation

/// One step of a ``MigrationPlan``: what it changes, whether it can wait, and its SQL.
///
/// A **synchronous** operation is needed for the destination model to be correct; all of them
/// run in one transaction when the store opens. A **deferrable** operation is cleanup the new
/// model does not need (a dropped column that nobody reads any more, an index that only
/// speeds queries up); it can run later, online.
///
/// ```swift
/// for op in plan.operations {
///     print(op.isDeferrable ? "DEFERRED" : "SYNC", op.summary)
///     for statement in op.sql() { print("  ", statement) }
/// }
/// ```
public struct MigrationOperation: Sendable, Hashable, Codable {
    /// What an operation does, with what it needs to do it.
    public enum Kind: Sendable, Hashable, Codable {
        /// `ALTER TABLE from RENAME TO to` (entity renamed, hierarchy got a new root, or a name freed).
        case renameTable(from: String, to: String)
        /// `ALTER TABLE table RENAME COLUMN from TO to`.
        case renameColumn(table: String, from: String, to: String)
        /// `ALTER TABLE table ADD COLUMN column sqlType [DEFAULT literal]`: O(1), existing rows
        /// read the default. The `DEFAULT` clause is removed when the table is rewritten later.
        case addColumn(table: String, column: String, sqlType: String, defaultSQL: String?)
        /// `CREATE TABLE` for a new entity hierarchy (or one that moved out of its old table).
        case createTable(table: String, sql: String)
        /// `CREATE TABLE` for a new join table.
        case createJoinTable(table: String, sql: String)
        /// Copies the rows of some entities into a table created by this plan, keeping `_pk`.
        case copyRows(RowCopy)
        /// Deletes the rows of entities removed from a table (or moved out of it).
        case deleteRows(RowDeletion)
        /// Fills a join table from the foreign-key column(s) that stored the links before.
        case populateJoinTable(JoinPopulation)
        /// Fills a new to-one column from the inverse to-one column (one-to-one gained a side).
        case populateForeignKey(table: String, column: String, fromTable: String, fromColumn: String)
        /// Numbers the rows of each group (unordered -> ordered), deterministically by `sortColumn`.
        case fillOrder(table: String, orderColumn: String, groupColumn: String, sortColumn: String)
        /// `UPDATE table SET column = default WHERE column IS NULL` (optional -> non-optional).
        case setDefaultWhereNull(table: String, column: String, defaultSQL: String)
        /// Renames entity names stored in a table's `_entity` column.
        case renameEntityValues(table: String, from: String, to: String)
        /// Widening type change. SQLite typing is dynamic and the object layer converts on read,
        /// so the values need no change now; the declared type changes when the table is rewritten.
        case widenColumn(table: String, column: String, from: AttributeType, to: AttributeType)
        /// `CREATE [UNIQUE] INDEX`. A unique index first checks existing rows for duplicates.
        case createIndex(IndexSpec)
        /// `DROP INDEX IF EXISTS`.
        case dropIndex(name: String, table: String)
        /// A non-unique index whose definition or name changed: drop it and build the new one.
        case rebuildIndex(oldName: String, IndexSpec)
        /// One rewrite of an entity table: drops columns, restores declaration order and
        /// declared types, removes `ADD COLUMN` defaults. See ``TableRewrite``.
        case rewriteTable(TableRewrite)
        /// One rewrite of a join table (e.g. an ordering column dropped after ordered -> unordered).
        case rewriteJoinTable(TableRewrite)
        /// `DROP TABLE IF EXISTS` (removed entity hierarchy or relationship).
        case dropTable(String)
        /// `PRAGMA incremental_vacuum` to give freed pages back (no-op unless auto_vacuum=INCREMENTAL).
        case incrementalVacuum
        /// A consistent copy of the store written to `destination` with SQLite's online backup
        /// API, a few pages at a time, before any deferred cleanup destroys data. Never part of
        /// an inferred plan: recorded in the deferred ledger when a migration at open asks for a
        /// backup (``MigrationOptions/backup``) and its synchronous part destroys nothing.
        case backup(destination: String)
    }

    /// What the operation does.
    public var kind: Kind
    /// Whether it is cleanup that may wait (the ledger) rather than needed at open.
    public var isDeferrable: Bool
    /// Human text: `"drop column Aircraft.photo (attribute removed in Aircraft 2)"`.
    public var summary: String
    /// The entity concerned, if any.
    public var entity: String?
    /// The property concerned, if any.
    public var property: String?
    /// The stored data this operation throws away (empty for most operations).
    public var discards: [DiscardedData]

    /// An operation and how to describe it.
    public init(_ kind: Kind, deferrable: Bool, summary: String, entity: String? = nil, property: String? = nil,
                discards: [DiscardedData] = []) {
        self.kind = kind
        self.isDeferrable = deferrable
        self.summary = summary
        self.entity = entity
        self.property = property
        self.discards = discards
    }

    private enum CodingKeys: String, CodingKey {
        case kind, isDeferrable, summary, entity, property, discards
    }

    /// Decodes an operation; ledgers written before `discards` existed decode with none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kind = try container.decode(Kind.self, forKey: .kind)
        isDeferrable = try container.decode(Bool.self, forKey: .isDeferrable)
        summary = try container.decode(String.self, forKey: .summary)
        entity = try container.decodeIfPresent(String.self, forKey: .entity)
        property = try container.decodeIfPresent(String.self, forKey: .property)
        discards = try container.decodeIfPresent([DiscardedData].self, forKey: .discards) ?? []
    }

    /// Whether the statements must run with `PRAGMA foreign_keys = OFF` (set outside any
    /// transaction): table rewrites drop a table that join tables reference with
    /// `ON DELETE CASCADE`, which would otherwise empty them.
    public var requiresForeignKeysOff: Bool {
        switch kind {
        case .rewriteTable, .rewriteJoinTable: return true
        default: return false
        }
    }

    /// Whether running the operation loses stored data: deleting rows or tables, dropping
    /// columns (a table rewrite), overwriting values. Renames, added columns, tables and
    /// indexes, copies into new tables and values filled into new columns lose nothing.
    ///
    /// A migration at open whose synchronous operations all return false can defer its backup
    /// (``MigrationOptions/backup``): the old data stay in the store until the deferred cleanup
    /// runs, and the backup is taken online before that.
    public var destroysData: Bool {
        if !discards.isEmpty { return true }
        switch kind {
        case .deleteRows, .setDefaultWhereNull, .rewriteTable, .rewriteJoinTable, .dropTable:
            return true
        case .renameTable, .renameColumn, .addColumn, .createTable, .createJoinTable, .copyRows, .populateJoinTable,
            .populateForeignKey, .fillOrder, .renameEntityValues, .widenColumn, .createIndex, .dropIndex, .rebuildIndex,
            .incrementalVacuum, .backup:
            return false
        }
    }

    /// The table this operation works on, for progress reports and `stratactl plan`.
    public var table: String? {
        switch kind {
        case .renameTable(_, let to): return to
        case .renameColumn(let t, _, _), .addColumn(let t, _, _, _), .createTable(let t, _),
            .createJoinTable(let t, _), .populateForeignKey(let t, _, _, _), .fillOrder(let t, _, _, _),
            .setDefaultWhereNull(let t, _, _), .renameEntityValues(let t, _, _), .widenColumn(let t, _, _, _),
            .dropIndex(_, let t):
            return t
        case .copyRows(let c): return c.toTable
        case .deleteRows(let d): return d.table
        case .populateJoinTable(let p): return p.joinTable
        case .createIndex(let i), .rebuildIndex(_, let i): return i.table
        case .rewriteTable(let r), .rewriteJoinTable(let r): return r.table
        case .dropTable(let t): return t
        case .incrementalVacuum, .backup: return nil
        }
    }
}

// MARK: - Payloads

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
}
