import Foundation
import GRDB

/// What a store's physical schema looks like next to the model it is open with: whether the
/// model can still read and write it, and what else changed.
///
/// SQLite lets any process change a store's schema (`ALTER TABLE … DROP COLUMN` in the
/// `sqlite3` shell, a script that renames a table). Every such change moves
/// `PRAGMA schema_version` (``PersistentStore/schemaVersion()``); a long-lived process
/// compares it before its work and, when it moved, checks the schema again:
///
/// ```swift
/// if try store.schemaVersion() != lastSeen {
///     let check = try store.checkSchema()
///     guard check.isUsable else { throw MyError.schemaChanged(check.problems) }
///     lastSeen = check.schemaVersion
/// }
/// ```
///
/// The deferred finisher changes the schema too (shadow tables, capture triggers, swaps,
/// drops), but never so that the model stops matching: its intermediate objects are named
/// `_strata_…` and its pending work is in the ledger, so neither shows up here.
public struct SchemaCheck: Sendable, Hashable {
    /// `PRAGMA schema_version` when the check ran.
    public var schemaVersion: Int
    /// The model version the store's metadata names.
    public var storedVersion: String
    /// What the open model needs and the store no longer has, one sentence each: a missing
    /// table, column or uniqueness index, or metadata that names another model version (the
    /// store was migrated by another process). The model cannot use the store while any remain.
    public var problems: [String]
    /// Differences that do not keep the model from working and that no pending deferred task
    /// explains: an index or table the model does not know, a table whose definition differs
    /// (a column added), an index of the model that is missing (queries get slower).
    public var unexpected: [String]

    /// Whether the open model can still read and write the store.
    public var isUsable: Bool { problems.isEmpty }
}

extension PersistentStore {
    /// The store's `PRAGMA schema_version`: SQLite moves it with every schema change, made by
    /// any connection of any process. One pragma read on a reader connection.
    public func schemaVersion() throws(StoreError) -> Int {
        do {
            return try database.unsafeRead { db in try Int.fetchOne(db, sql: "PRAGMA schema_version") ?? 0 }
        } catch {
            throw StoreError.from(error, path: path, while: "reading the schema version")
        }
    }

    /// `PRAGMA schema_version` read on `db` (in the caller's transaction) through the
    /// connection's statement cache: what ``schemaVersion()`` reads, without a transaction
    /// of its own.
    package static func schemaVersion(in db: Database) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "PRAGMA schema_version")) ?? 0
    }

    /// ``checkSchema()`` on `db`, in the caller's transaction.
    package func checkSchema(in db: Database) throws -> SchemaCheck {
        try Self.checkSchema(of: model, layout: layout, in: db, path: path)
    }

    /// Checks the store's physical schema against ``model`` (see ``SchemaCheck``). Reads
    /// `sqlite_master`, the columns and indexes of the model's tables, and the deferred ledger,
    /// in one read transaction; runs in milliseconds, so call it when ``schemaVersion()``
    /// moved rather than before every statement.
    public func checkSchema() throws(StoreError) -> SchemaCheck {
        do {
            return try database.read { db in try Self.checkSchema(of: model, layout: layout, in: db, path: path) }
        } catch {
            throw StoreError.from(error, path: path, while: "checking the schema against model '\(model.version)'")
        }
    }

    static func checkSchema(of model: ObjectModel, layout: StorageLayout, in db: Database, path: String) throws -> SchemaCheck {
        let schemaVersion = try Int.fetchOne(db, sql: "PRAGMA schema_version") ?? 0
        for table in [MetadataSchema.metadataTable, MetadataSchema.historyTable, DeferredLedger.table] where try !db.tableExists(table) {
            return SchemaCheck(schemaVersion: schemaVersion, storedVersion: "?",
                               problems: ["Strata's metadata table \(table) is missing"], unexpected: [])
        }
        let metadata = try StoreMetadata.read(from: db, path: path)
        var problems: [String] = []
        if !metadata.isCompatible(with: model) {
            problems.append("the store's metadata names model '\(metadata.modelVersion)' (\(metadata.modelChecksum)), not '\(model.version)' (\(model.checksum)): another process migrated it")
        }
        problems += try missingStorage(layout, in: db)
        return SchemaCheck(schemaVersion: schemaVersion, storedVersion: metadata.modelVersion, problems: problems,
                           unexpected: problems.isEmpty ? try unexplainedDifferences(layout, in: db) : [])
    }

    // MARK: - What the model needs

    /// Tables, columns and uniqueness indexes of `layout` the store lacks. Extra columns and
    /// tables are fine (a dropped attribute's column stays until cleanup).
    private static func missingStorage(_ layout: StorageLayout, in db: Database) throws -> [String] {
        // Each table: what it is, and each column with how a missing one is named.
        let tables = layout.tables.keys.sorted().map { name in
            let table = layout.tables[name]!
            return (name, "table \(name) (entity \(table.rootEntity))", table.columns.map { ($0.name, "column \(name).\($0.name)\(describe($0.role))") })
        } + layout.joinTables.keys.sorted().map { name in
            let join = layout.joinTables[name]!
            let what = "join table \(name) (relationship \(join.sourceEntity).\(join.sourceRelationship))"
            return (name, what, join.columnNames.map { ($0, "column \(name).\($0) of \(what)") })
        }
        var problems: [String] = []
        for (name, what, columns) in tables {
            guard try db.tableExists(name) else {
                problems.append("\(what) is missing")
                continue
            }
            let present = Set(try db.columns(in: name).map(\.name))
            for (column, described) in columns where !present.contains(column) {
                problems.append("\(described) is missing")
            }
        }
        for index in layout.indexes where index.isUnique {
            guard try db.tableExists(index.table) else { continue }
            let wanted = index.columns.map(\.name)
            let enforced = try db.indexes(on: index.table).contains { $0.isUnique && $0.columns == wanted }
            if !enforced {
                var constraint = ""
                if case .uniqueness(let entity, let keyPaths) = index.origin { constraint = " (uniqueness constraint of \(entity) on \(keyPaths.joined(separator: ", ")))" }
                problems.append("unique index \(index.name) on \(index.table)(\(wanted.joined(separator: ", ")))\(constraint) is missing")
            }
        }
        return problems
    }

    private static func describe(_ role: ColumnLayout.Role) -> String {
        switch role {
        case .primaryKey: " (primary key)"
        case .version: " (optimistic-locking version)"
        case .entityName: " (entity name)"
        case .attribute(let entity, let keyPath, _): " (attribute \(entity).\(keyPath))"
        case .foreignKey(let entity, let relationship, _): " (relationship \(entity).\(relationship))"
        case .order(let entity, let relationship): " (order of relationship \(entity).\(relationship))"
        }
    }

    // MARK: - What else differs

    /// What makes the store differ from a fresh store at `layout` (the reconciler's tasks),
    /// less Strata's own objects and what the pending ledger already holds.
    private static func unexplainedDifferences(_ layout: StorageLayout, in db: Database) throws -> [String] {
        let pending = try DeferredLedger.entries(in: db).map(\.payload.operation.kind)
        var explained = Set(pending.compactMap(Self.target))
        for case .rebuildIndex(let oldName, _) in pending { explained.insert(Target(kind: "index", name: oldName)) }
        var result: [String] = []
        for task in try SchemaReconciler.tasks(for: layout, in: db) {
            guard let target = Self.target(task.operation.kind), !target.name.hasPrefix("_strata_"), !explained.contains(target) else { continue }
            switch task.operation.kind {
            case .dropIndex(let name, let table): result.append("index \(name) on \(table) is not in model '\(layout.model.version)'")
            case .dropTable(let name): result.append("table \(name) is not in model '\(layout.model.version)'")
            case .rewriteTable(let rewrite), .rewriteJoinTable(let rewrite):
                result.append("table \(rewrite.table) differs from its definition in model '\(layout.model.version)' (\(rewrite.reasons.joined(separator: "; ")))")
            case .rebuildIndex(let oldName, let spec):
                result.append("index \(oldName) on \(spec.table) differs from index \(spec.name)(\(spec.columns.joined(separator: ", "))) of model '\(layout.model.version)'")
            case .createIndex(let spec): result.append("index \(spec.name) on \(spec.table)(\(spec.columns.joined(separator: ", "))) of model '\(layout.model.version)' is missing (queries using it are slower)")
            default: continue
            }
        }
        return result
    }

    /// The schema object a cleanup operation works on.
    private struct Target: Hashable {
        var kind: String
        var name: String
    }

    private static func target(_ kind: MigrationOperation.Kind) -> Target? {
        switch kind {
        case .dropIndex(let name, _): Target(kind: "index", name: name)
        case .createIndex(let spec), .rebuildIndex(_, let spec): Target(kind: "index", name: spec.name)
        case .dropTable(let name): Target(kind: "table", name: name)
        case .rewriteTable(let rewrite), .rewriteJoinTable(let rewrite): Target(kind: "table", name: rewrite.table)
        default: nil
        }
    }
}
