import Foundation
import GRDB

/// Computes the cleanup that brings a store's physical schema to exactly the schema of a fresh
/// store at its model version: the deferred ledger.
///
/// The ledger is recomputed from the physical schema after every migration instead of being
/// appended to, so that successive deferred migrations merge by construction: a column dropped
/// in v2 and re-added in v3, a property renamed while its old column awaits its drop, an
/// entity removed while its index awaits its build — the ledger is always "what differs from
/// a fresh store", never a stale list of steps.
enum SchemaReconciler {
    static let metadataTables: Set<String> = [MetadataSchema.metadataTable, MetadataSchema.historyTable, MetadataSchema.deferredTable]

    struct Task {
        var operation: MigrationOperation
        var kind: DeferredTask.Kind
        var summary: String
        var rowsTotal: Int64
    }

    /// The physical tables of the store (not SQLite's or Strata's metadata), with their SQL.
    static func physicalTables(_ db: Database) throws -> [String: String] {
        var result: [String: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'") {
            let name: String = row["name"]
            if metadataTables.contains(name) { continue }
            result[name] = row["sql"]
        }
        return result
    }

    /// Physical indexes with SQL (automatic indexes excluded): name → (table, sql).
    static func physicalIndexes(_ db: Database) throws -> [String: (table: String, sql: String)] {
        var result: [String: (table: String, sql: String)] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL") {
            let table: String = row["tbl_name"]
            if metadataTables.contains(table) { continue }
            result[row["name"]] = (table, row["sql"])
        }
        return result
    }

    /// A cheap row-count estimate (no full scan): the primary-key or rowid span.
    static func estimatedRows(_ table: String, _ db: Database) throws -> Int64 {
        // Two single-aggregate subqueries: SQLite answers each from the b-tree's edge, while
        // `max(rowid) - min(rowid)` in one SELECT would scan the whole table.
        let t = quoteIdentifier(table)
        // A WITHOUT ROWID table (a retired index, a sorted build's entries) has no rowid span.
        if try Bool.fetchOne(db, sql: "SELECT wr FROM pragma_table_list WHERE name = ? AND schema = 'main'", arguments: [table]) ?? false { return 0 }
        let span = try Int64.fetchOne(db, sql: "SELECT coalesce((SELECT max(rowid) FROM \(t)) - (SELECT min(rowid) FROM \(t)) + 1, 0)") ?? 0
        return max(0, span)
    }

    /// The tasks that make `db` identical to a fresh store of `layout`, in the order to run them.
    /// `reasons` maps a table to why it is rewritten (from the migration plan), for summaries.
    static func tasks(for layout: StorageLayout, in db: Database, reasons: [String: [String]] = [:]) throws -> [Task] {
        let tables = try physicalTables(db)
        let indexes = try physicalIndexes(db)
        var targetTables: [String: (sql: String, shadow: String, columns: [String], isJoin: Bool)] = [:]
        for (name, table) in layout.tables {
            targetTables[name] = (layout.createTableSQL(table), layout.createTableSQL(table, name: shadowName(name)), table.columns.map(\.name), false)
        }
        for (name, join) in layout.joinTables {
            targetTables[name] = (layout.createJoinTableSQL(join), layout.createJoinTableSQL(join, name: shadowName(name)), join.columnNames, true)
        }
        var drops: [Task] = []
        var rewrites: [Task] = []
        var indexTasks: [Task] = []
        var rewritten: Set<String> = []

        for name in tables.keys.sorted() where targetTables[name] == nil {
            let rows = try estimatedRows(name, db)
            drops.append(Task(operation: MigrationOperation(.dropTable(name), deferrable: true, summary: "drop table \(name) (no longer in the model)"),
                              kind: .dropTable, summary: "drop table \(name) (no longer in the model)", rowsTotal: rows))
        }
        for name in targetTables.keys.sorted() {
            let target = targetTables[name]!
            guard let physical = tables[name] else { continue }   // created synchronously; absent only if the sync part failed
            if SchemaSnapshot.normalize(physical) == SchemaSnapshot.normalize(target.sql) { continue }
            let physicalColumns = try db.columns(in: name).map(\.name)
            let dropped = physicalColumns.filter { !target.columns.contains($0) }
            let retyped = try retypedColumns(name, target: layout, db: db)
            var why = reasons[name] ?? []
            if why.isEmpty {
                if !dropped.isEmpty { why.append("drop column\(dropped.count > 1 ? "s" : "") \(dropped.joined(separator: ", "))") }
                if !retyped.isEmpty { why.append("retype \(retyped.joined(separator: ", "))") }
                if why.isEmpty { why.append("normalize the table definition") }
            }
            let indexSQL = layout.indexes.filter { $0.table == name }.map { layout.createIndexSQL($0, ifNotExists: true) }
            let rewrite = TableRewrite(table: name, shadowTable: shadowName(name), createShadowSQL: target.shadow, finalCreateSQL: target.sql,
                                       columns: target.columns, droppedColumns: dropped, retypedColumns: retyped,
                                       indexSQL: indexSQL, reasons: why)
            let summary = "rewrite table \(name): \(why.joined(separator: "; "))"
            rewrites.append(Task(operation: MigrationOperation(target.isJoin ? .rewriteJoinTable(rewrite) : .rewriteTable(rewrite), deferrable: true, summary: summary),
                                 kind: .rewriteTable, summary: summary, rowsTotal: try estimatedRows(name, db)))
            rewritten.insert(name)
        }
        let targetIndexes = Dictionary(uniqueKeysWithValues: layout.indexes.map { ($0.name, $0) })
        for (name, physical) in indexes.sorted(by: { $0.key < $1.key }) {
            if rewritten.contains(physical.table) || tables[physical.table] == nil || targetTables[physical.table] == nil { continue }
            if let target = targetIndexes[name], SchemaSnapshot.normalize(layout.createIndexSQL(target)) == SchemaSnapshot.normalize(physical.sql) { continue }
            indexTasks.append(Task(operation: MigrationOperation(.dropIndex(name: name, table: physical.table), deferrable: true, summary: "drop index \(name)"),
                                   kind: .dropIndex, summary: "drop index \(name) (no longer in the model or changed)", rowsTotal: 0))
        }
        for index in layout.indexes where !rewritten.contains(index.table) {
            if let physical = indexes[index.name], SchemaSnapshot.normalize(physical.sql) == SchemaSnapshot.normalize(layout.createIndexSQL(index)) { continue }
            let spec = IndexSpec(name: index.name, table: index.table, columns: index.columns.map(\.name), isUnique: index.isUnique,
                                 sql: layout.createIndexSQL(index), entity: nil, keyPaths: index.columns.map(\.name))
            let summary = "build \(index.isUnique ? "unique " : "")index \(index.name) on \(index.table)(\(spec.columns.joined(separator: ", ")))"
            indexTasks.append(Task(operation: MigrationOperation(.createIndex(spec), deferrable: !index.isUnique, summary: summary),
                                   kind: .createIndex, summary: summary, rowsTotal: try estimatedRows(index.table, db)))
        }
        var all = indexTasks.filter { $0.kind == .dropIndex } + drops + rewrites + indexTasks.filter { $0.kind == .createIndex }
        if !drops.isEmpty || !rewrites.isEmpty {
            all.append(Task(operation: MigrationOperation(.incrementalVacuum, deferrable: true, summary: "reclaim free pages"),
                            kind: .incrementalVacuum, summary: "reclaim free pages (incremental vacuum)", rowsTotal: 0))
        }
        return all
    }

    static func shadowName(_ table: String) -> String { "_strata_rewrite_\(table)" }

    /// Columns whose declared type differs from the target layout's.
    private static func retypedColumns(_ table: String, target layout: StorageLayout, db: Database) throws -> [String] {
        guard let targetTable = layout.tables[table] else { return [] }
        let physical = Dictionary(try db.columns(in: table).map { ($0.name, $0.type.uppercased()) }, uniquingKeysWith: { a, _ in a })
        return targetTable.columns.filter { column in
            guard let type = physical[column.name], column.role != .primaryKey else { return false }
            return type != column.sqlType.uppercased()
        }.map(\.name)
    }
}
