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
