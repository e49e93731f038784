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
    static let metadataTables: Set<String> = Set([MetadataSchema.metadataTable, MetadataSchema.historyTable, DeferredLedger.table] + HistorySchema.tables)
    /// Tables another process keeps in the store and that are not the model's to drop:
    /// Litestream's `_litestream_seq` and `_litestream_lock` (a replicated store, docs/Fleet.md).
    /// The reconciler, the schema check and schema snapshots leave them (and their indexes) out.
    static let replicatorTablePrefix = "_litestream_"

    /// Whether `name` is a table of a replicator (``replicatorTablePrefix``).
    static func isReplicatorTable(_ name: String) -> Bool { name.hasPrefix(replicatorTablePrefix) }

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
            if metadataTables.contains(name) || isReplicatorTable(name) { continue }
            result[name] = row["sql"]
        }
        return result
    }

    /// Physical indexes with SQL (automatic indexes excluded): name → (table, sql).
    static func physicalIndexes(_ db: Database) throws -> [String: (table: String, sql: String)] {
        var result: [String: (table: String, sql: String)] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL") {
            let table: String = row["tbl_name"]
            if metadataTables.contains(table) || isReplicatorTable(table) { continue }
            result[row["name"]] = (table, row["sql"])
        }
        return result
    }

    /// The tasks that make `db` identical to a fresh store of `layout`, in the order to run them.
    ///
    /// `planned` are the deferrable operations lightweight inference derived from the model
    /// change: a task that does what one of them does takes its summary, entity, property,
    /// discarded data and rewrite reasons, so that the plan and the ledger describe a step in
    /// the same words. They never add or remove a task: the physical schema decides.
    static func tasks(for layout: StorageLayout, in db: Database, planned: [MigrationOperation] = []) throws -> [Task] {
        let tables = try physicalTables(db)
        let indexes = try physicalIndexes(db)
        var reasons: [String: [String]] = [:]
        for operation in planned {
            if case .rewriteTable(let r) = operation.kind { reasons[r.table, default: []] += r.reasons }
            if case .rewriteJoinTable(let r) = operation.kind { reasons[r.table, default: []] += r.reasons }
        }
        var targetTables: [String: (sql: String, shadow: String, columns: [String], isJoin: Bool)] = [:]
        for (name, table) in layout.tables {
            targetTables[name] = (layout.createTableSQL(table), layout.createTableSQL(table, name: shadowName(name)), table.columns.map(\.name), false)
        }
        for (name, join) in layout.joinTables {
            targetTables[name] = (layout.createJoinTableSQL(join), layout.createJoinTableSQL(join, name: shadowName(name)), join.columnNames, true)
        }
        var drops: [Task] = []
        var rewrites: [Task] = []
        var indexDrops: [Task] = []
        var indexBuilds: [Task] = []
        var rewritten: Set<String> = []

        for name in tables.keys.sorted() where targetTables[name] == nil {
            let rows = try TableStatistics.estimatedRows(name, db)
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
                                 kind: .rewriteTable, summary: summary, rowsTotal: try TableStatistics.estimatedRows(name, db)))
            rewritten.insert(name)
        }

        // Indexes: a stale physical index (not in the model, or defined differently) is
        // dropped, a missing one built — two tasks, each run in bounded steps by the finisher
        // (a changed or renamed index is a drop and a build, in the plan as in the ledger).
        let targetIndexes = Dictionary(uniqueKeysWithValues: layout.indexes.map { ($0.name, $0) })
        let live = { (table: String) in tables[table] != nil && targetTables[table] != nil && !rewritten.contains(table) }
        for (name, physical) in indexes.sorted(by: { $0.key < $1.key }) where live(physical.table) {
            if let target = targetIndexes[name], SchemaSnapshot.normalize(layout.createIndexSQL(target)) == SchemaSnapshot.normalize(physical.sql) { continue }
            let summary = "drop index \(name) (no longer in the model or changed)"
            indexDrops.append(Task(operation: MigrationOperation(.dropIndex(name: name, table: physical.table), deferrable: true, summary: summary),
                                   kind: .dropIndex, summary: summary, rowsTotal: 0))
        }
        for index in layout.indexes where live(index.table) {
            if let physical = indexes[index.name], SchemaSnapshot.normalize(physical.sql) == SchemaSnapshot.normalize(layout.createIndexSQL(index)) { continue }
            let columns = index.columns.map(\.name)
            let spec = IndexSpec(name: index.name, table: index.table, columns: columns, isUnique: index.isUnique,
                                 sql: layout.createIndexSQL(index), entity: nil, keyPaths: columns)
            let summary = "build \(index.isUnique ? "unique " : "")index \(index.name) on \(index.table)(\(columns.joined(separator: ", ")))"
            indexBuilds.append(Task(operation: MigrationOperation(.createIndex(spec), deferrable: !index.isUnique, summary: summary),
                                    kind: .createIndex, summary: summary, rowsTotal: try TableStatistics.estimatedRows(index.table, db)))
        }
        var all = indexDrops + drops + rewrites + indexBuilds
        if !drops.isEmpty || !rewrites.isEmpty {
            all.append(Task(operation: MigrationOperation(.incrementalVacuum, deferrable: true, summary: "reclaim free pages"),
                            kind: .incrementalVacuum, summary: "reclaim free pages (incremental vacuum)", rowsTotal: 0))
        }
        return all.map { annotated($0, from: planned) }
    }

    /// `task` with the words of the planned operation that does the same thing, if any.
    private static func annotated(_ task: Task, from planned: [MigrationOperation]) -> Task {
        guard let match = planned.first(where: { sameStep($0.kind, task.operation.kind) }) else { return task }
        var task = task
        task.operation.summary = match.summary
        task.operation.entity = match.entity
        task.operation.property = match.property
        task.operation.discards = match.discards
        task.summary = match.summary
        return task
    }

    /// Whether two operations do the same step (same kind, same table or index).
    private static func sameStep(_ a: MigrationOperation.Kind, _ b: MigrationOperation.Kind) -> Bool {
        switch (a, b) {
        case (.dropTable(let x), .dropTable(let y)): return x == y
        case (.rewriteTable(let x), .rewriteTable(let y)), (.rewriteJoinTable(let x), .rewriteJoinTable(let y)): return x.table == y.table
        case (.dropIndex(let x, _), .dropIndex(let y, _)): return x == y
        case (.createIndex(let x), .createIndex(let y)): return x.name == y.name
        case (.incrementalVacuum, .incrementalVacuum): return true
        default: return false
        }
    }

    // MARK: - The plan's deferrable part

    /// The deferrable part of a plan whose synchronous part is `synchronous`: the tasks that
    /// the ledger of a store at `source` holds once it opens at `destination` — computed by
    /// running `synchronous` on an empty in-memory store of `source` and reconciling it with
    /// `destination`, exactly as the open path reconciles the real store. Tasks the open
    /// path runs at once (unique indexes the model needs) come back in `synchronous`.
    static func deferrablePart(from source: StorageLayout, to destination: StorageLayout, synchronous: [MigrationOperation],
                               planned: [MigrationOperation]) throws -> (synchronous: [MigrationOperation], deferrable: [MigrationOperation]) {
        let queue = try DatabaseQueue()
        return try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            for statement in source.creationSQL { try db.execute(sql: statement) }
            for operation in synchronous { try operation.execute(in: db) }
            var sync = synchronous
            var deferrable: [MigrationOperation] = []
            for task in try tasks(for: destination, in: db, planned: planned) {
                if task.operation.isDeferrable { deferrable.append(task.operation) } else { sync.append(task.operation) }
            }
            return (sync, deferrable)
        }
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
