import Foundation

/// Infers the operations of a lightweight migration by comparing the storage layouts of two
/// model versions, with ``ModelMatching`` telling which destination element continues which
/// source element.
///
/// The synchronous operations run in this order, each step reading the names the previous
/// steps left: free and rename tables; create new tables; copy rows of entities that change
/// table; create, populate or rebuild join tables; per continued table rename, add and fill
/// columns; number new ordering columns and fill new to-one columns; delete rows of removed
/// sub-entities; rename `_entity` values; drop and create unique indexes (and the indexes of
/// new, empty tables). The deferrable operations follow: drop stale non-unique indexes, drop
/// tables, rewrite tables (dropping leftover columns, restoring declared order and types),
/// build new non-unique indexes, reclaim pages.
struct LightweightInference {
    let source: ObjectModel
    let destination: ObjectModel
    let sourceLayout: StorageLayout
    let destinationLayout: StorageLayout
    let matching: ModelMatching

    /// Destination table -> the source table it continues (same rows, renamed if needed).
    var continued: [String: String] = [:]
    /// Source table -> the destination table that continues it.
    var continuation: [String: String] = [:]
    /// Destination tables created by this plan (entity tables).
    var newTables: Set<String> = []
    /// Destination table -> (source table, source entities, destination entities) whose rows are copied in.
    var moves: [String: (sourceTable: String, sourceEntities: [String])] = [:]
    /// Source table -> `_entity` values whose rows must be deleted from it.
    var deletions: [String: [String]] = [:]
    /// Current name of every source table (entity and join) while the synchronous part runs.
    var liveTableName: [String: String] = [:]
    /// Current columns of each continued destination table, as the synchronous part leaves them.
    var liveColumns: [String: [LiveColumn]] = [:]
    /// Continued tables: source column -> its name after the synchronous part.
    var columnRenames: [String: [String: String]] = [:]
    /// Why each table needs a rewrite (dropped columns, order, types, defaults).
    var rewriteReasons: [String: [String]] = [:]
    var retypedColumns: [String: [String]] = [:]
    /// Join tables (destination name) created or rebuilt by this plan.
    var newJoinTables: Set<String> = []
    /// Source join table -> destination join table that continues it.
    var joinContinuation: [String: String] = [:]

    var synchronous: [MigrationOperation] = []
    var deferred: [MigrationOperation] = []
    /// Operations that run after every table's columns are in place.
    var fills: [MigrationOperation] = []
    /// What existing objects must satisfy (counted against the store before the hop runs).
    var requirements: [ObjectRequirement] = []

    struct LiveColumn: Hashable {
        var name: String
        var sqlType: String
        var defaultSQL: String?
    }

    init(source: ObjectModel, destination: ObjectModel) throws(MigrationError) {
        self.source = source
        self.destination = destination
        self.sourceLayout = StorageLayout(model: source)
        self.destinationLayout = StorageLayout(model: destination)
        self.matching = try ModelMatching(source: source, destination: destination)
        for name in sourceLayout.allTableNames { liveTableName[name] = name }
    }

    mutating func plan() throws(MigrationError) -> [MigrationOperation] {
        try resolveTables()
        renameTables()
        try createAndCopyTables()
        try planJoinTables()
        for table in destinationLayout.tables.keys.sorted() where continued[table] != nil {
            try planColumns(of: table)
        }
        synchronous += fills
        try planRelationshipRequirements()
        planDeletions()
        planEntityValueRenames()
        planIndexes()
        planDrops()
        planRewrites()
        return synchronous + orderedDeferred()
    }

    // MARK: - Tables

    /// Decides which destination table continues which source table, and which rows move.
    mutating func resolveTables() throws(MigrationError) {
        for sourceTable in sourceLayout.tables.keys.sorted() {
            guard let root = matching.destinationEntity[sourceTable],
                let table = destinationLayout.entity(root)?.table else { continue }
            if let other = continued[table] {
                throw matching.error(.notInferable, "the entity hierarchies stored in tables '\(other)' and '\(sourceTable)' would share table '\(table)'; merging two tables is not inferred, \(MigrationError.stagedAdvice)", entity: root, change: "merge hierarchies into '\(table)'")
            }
            continued[table] = sourceTable
            continuation[sourceTable] = table
        }
        for table in destinationLayout.tables.keys where continued[table] == nil { newTables.insert(table) }

        for entity in source.entities {
            guard let sourceTable = sourceLayout.entity(entity.name)?.table else { continue }
            guard let destinationName = matching.destinationEntity[entity.name],
                let table = destinationLayout.entity(destinationName)?.table
            else {
                // Removed entity: its rows go with its table, or are deleted from a continued table.
                if continuation[sourceTable] != nil { deletions[sourceTable, default: []].append(entity.name) }
                continue
            }
            if continuation[sourceTable] == table { continue }
            guard newTables.contains(table) else {
                throw matching.error(.notInferable, "entity '\(entity.name)' would move from table '\(sourceTable)' into the existing table '\(table)'; merging rows into an existing table is not inferred, \(MigrationError.stagedAdvice)", entity: destinationName, change: "move into '\(table)'")
            }
            if let move = moves[table], move.sourceTable != sourceTable {
                throw matching.error(.notInferable, "table '\(table)' would receive rows from both '\(move.sourceTable)' and '\(sourceTable)'; merging tables is not inferred, \(MigrationError.stagedAdvice)", entity: destinationName, change: "merge into '\(table)'")
            }
            moves[table, default: (sourceTable, [])].sourceEntities.append(entity.name)
            if continuation[sourceTable] != nil { deletions[sourceTable, default: []].append(entity.name) }
        }
    }

    /// The source table currently holding name `name`, if any.
    func liveHolder(of name: String) -> String? { liveTableName.first { $0.value == name }?.key }

    /// Makes `name` free for a table: renames the source table holding it out of the way.
    mutating func freeTableName(_ name: String, for owner: String?) {
        guard let holder = liveHolder(of: name), holder != owner else { return }
        let keeps = continuation[holder] != nil || joinContinuation[holder] != nil
        var temporary = (keeps ? "_strata_tmp_" : "_strata_dropped_") + name
        while liveHolder(of: temporary) != nil { temporary += "_" }
        synchronous.append(MigrationOperation(.renameTable(from: name, to: temporary), deferrable: false,
                                              summary: "rename table \(name) to \(temporary) to free its name (\(keeps ? "renamed below" : "dropped later"))"))
        liveTableName[holder] = temporary
        if !keeps {
            // Its indexes keep their names; drop them now so that new indexes can take those names.
            for index in sourceLayout.indexes where index.table == holder {
                synchronous.append(MigrationOperation(.dropIndex(name: index.name, table: temporary), deferrable: false,
                                                      summary: "drop index \(index.name) of \(temporary) (table dropped later)"))
            }
        }
    }

    mutating func renameTables() {
        for (table, sourceTable) in continued.sorted(by: { $0.key < $1.key }) where liveTableName[sourceTable] != table {
            freeTableName(table, for: sourceTable)
            let from = liveTableName[sourceTable]!
            let entity = destinationLayout.tables[table]!.rootEntity
            let why = sourceTable == matching.sourceEntity[entity]
                ? "entity \(sourceTable) renamed to \(entity)"
                : "entity \(matching.destinationEntity[sourceTable] ?? sourceTable) now has parent \(entity)"
            synchronous.append(MigrationOperation(.renameTable(from: from, to: table), deferrable: false,
                                                  summary: "rename table \(from) to \(table) (\(why))", entity: entity))
            liveTableName[sourceTable] = table
        }
    }

    mutating func createAndCopyTables() throws(MigrationError) {
        for table in newTables.sorted() {
            freeTableName(table, for: nil)
            let layout = destinationLayout.tables[table]!
            let why = moves[table] == nil ? "new entity \(layout.rootEntity)" : "entity hierarchy of \(layout.rootEntity) moves to its own table"
            synchronous.append(MigrationOperation(.createTable(table: table, sql: destinationLayout.createTableSQL(layout)), deferrable: false,
                                                  summary: "create table \(table) (\(why))", entity: layout.rootEntity))
            guard let move = moves[table] else { continue }
            try copyRows(into: layout, from: move.sourceTable, sourceEntities: move.sourceEntities)
        }
    }

    /// `INSERT INTO new SELECT … FROM old`: rows keep their `_pk`, so references stay valid.
    mutating func copyRows(into layout: TableLayout, from sourceTable: String, sourceEntities: [String]) throws(MigrationError) {
        let sourceHasEntity = sourceLayout.tables[sourceTable]!.column(named: StorageLayout.entityColumn) != nil
        var columns: [String] = []
        var expressions: [String] = []
        var copiedColumns: Set<String> = []
        for column in layout.columns {
            columns.append(column.name)
            switch column.role {
            case .primaryKey, .version:
                expressions.append(quoteIdentifier(column.name))
            case .entityName:
                if sourceHasEntity {
                    let cases = sourceEntities.map { "WHEN \(sqlLiteral($0)) THEN \(sqlLiteral(matching.destinationEntity[$0]!))" }
                    expressions.append("CASE \(quoteIdentifier(StorageLayout.entityColumn)) \(cases.joined(separator: " ")) END")
                } else {
                    expressions.append(sqlLiteral(matching.destinationEntity[sourceEntities[0]]!))
                }
            default:
                let origin = try origin(of: column, table: layout.name)
                switch origin {
                case .source(let table, let sourceColumn, let attribute) where table == sourceTable:
                    copiedColumns.insert(sourceColumn)
                    if case .attribute(let entity, let keyPath, _) = column.role, matching.isRequired(entity: entity, keyPath: keyPath),
                        let value = defaultValue(entity: entity, keyPath: keyPath)
                    {
                        expressions.append("coalesce(\(quoteIdentifier(sourceColumn)), \(value.sqlLiteral))")
                    } else {
                        expressions.append(quoteIdentifier(sourceColumn))
                        if case .attribute(let entity, let keyPath, _) = column.role, matching.isRequired(entity: entity, keyPath: keyPath),
                           attribute?.isOptional ?? true {
                            requireValue(entity: entity, keyPath: keyPath, inSourceTable: sourceTable, sourceColumn: sourceColumn, change: "optional -> non-optional")
                        }
                    }
                case .source(let table, _, _):
                    throw matching.error(.notInferable, "'\(column.name)' would come from table '\(table)' while its rows come from '\(sourceTable)'; \(MigrationError.stagedAdvice)", entity: layout.rootEntity, property: column.name)
                case .new:
                    if case .attribute(let entity, let keyPath, _) = column.role, let value = defaultValue(entity: entity, keyPath: keyPath) {
                        expressions.append(value.sqlLiteral)
                    } else {
                        expressions.append("NULL")
                    }
                    if case .order(let entity, let relationship) = column.role { scheduleOrderFill(table: layout.name, column: column.name, entity: entity, relationship: relationship) }
                    if case .foreignKey(let entity, let relationship, _) = column.role { try planNewForeignKey(table: layout.name, column: column.name, entity: entity, relationship: relationship) }
                    if case .attribute(let entity, let keyPath, _) = column.role, defaultValue(entity: entity, keyPath: keyPath) == nil,
                        matching.isRequired(entity: entity, keyPath: keyPath) {
                        requireValue(entity: entity, keyPath: keyPath, inSourceTable: sourceTable, sourceColumn: nil, change: "add non-optional attribute")
                    }
                case .system:
                    expressions.append("NULL")
                }
            }
        }
        let filter = sourceHasEntity
            ? "\(quoteIdentifier(StorageLayout.entityColumn)) IN (\(sourceEntities.map(sqlLiteral).joined(separator: ", ")))" : nil
        let names = sourceEntities.map { matching.destinationEntity[$0]! }
        let live = liveTableName[sourceTable]!
        // Attributes of the moved objects that the new table does not take are left behind.
        var leftBehind: [String: String] = [:]
        for entity in sourceEntities {
            for stored in (sourceLayout.entity(entity)?.attributeColumns ?? [:]).values where !copiedColumns.contains(stored.column) {
                leftBehind[stored.column] = "attribute \(entity).\(stored.keyPath)"
            }
        }
        let lost = leftBehind.keys.sorted().map { DiscardedData(.values, table: sourceTable, column: $0, filter: filter, what: leftBehind[$0]!) }
        synchronous.append(MigrationOperation(.copyRows(RowCopy(fromTable: live, toTable: layout.name, entities: names, columns: columns, expressions: expressions, filter: filter)),
                                              deferrable: false,
                                              summary: "copy rows of \(names.joined(separator: ", ")) from \(live) into \(layout.name) (the entity's table changes; copied synchronously, keeping _pk)",
                                              entity: names.first, discards: lost))
    }

    // MARK: - Column origins

    enum ColumnOrigin {
        case system
        case new
        case source(table: String, column: String, attribute: Attribute?)
    }

    /// Where a destination column's values come from, checking that the change is inferable.
    func origin(of column: ColumnLayout, table: String) throws(MigrationError) -> ColumnOrigin {
        switch column.role {
        case .primaryKey, .version: return .system
        case .entityName:
            if let s = continued[table], sourceLayout.tables[s]?.column(named: column.name) != nil { return .source(table: s, column: column.name, attribute: nil) }
            return .new
        case .attribute(let entity, let keyPath, let type):
            guard let match = try matching.sourceAttributeKeyPath(entity: entity, keyPath: keyPath),
                let sourceEntity = sourceLayout.entity(match.entity), let stored = sourceEntity.attributeColumns[match.keyPath]
            else { return .new }
            let sourceType = stored.attribute.type
            if sourceType != type && !type.widens(sourceType) {
                throw matching.error(.incompatibleTypeChange, "changing the type from \(sourceType.rawValue) to \(type.rawValue) can lose or misread stored values (only widening changes such as int16 -> int32 or float -> double are inferred); \(MigrationError.stagedAdvice)", entity: entity, property: keyPath, change: "\(sourceType.rawValue) -> \(type.rawValue)")
            }
            return .source(table: sourceEntity.table, column: stored.column, attribute: stored.attribute)
        case .foreignKey(let entity, let relationship, _):
            guard let match = try matching.sourceRelationship(entity: entity, name: relationship) else { return .new }
            if match.relationship.isToMany {
                throw matching.error(.notInferable, "changing '\(match.entity).\(match.relationship.name)' from to-many to to-one can lose links; \(MigrationError.stagedAdvice)", entity: entity, property: relationship, change: "to-many -> to-one")
            }
            try checkDestination(of: match.relationship, entity: entity, relationship: relationship)
            guard case .foreignKey(let sourceColumn, _)? = sourceLayout.entity(match.entity)?.relationships[match.relationship.name] else { return .new }
            return .source(table: sourceLayout.entity(match.entity)!.table, column: sourceColumn, attribute: nil)
        case .order(let entity, let relationship):
            guard let match = try matching.sourceRelationship(entity: entity, name: relationship),
                case .inverseForeignKey(let sourceTable, _, let order?)? = sourceLayout.entity(match.entity)?.relationships[match.relationship.name]
            else { return .new }
            return .source(table: sourceTable, column: order, attribute: nil)
        }
    }

    func checkDestination(of sourceRelationship: Relationship, entity: String, relationship: String) throws(MigrationError) {
        guard let r = destination.relationship(relationship, of: entity) else { return }
        guard let mapped = matching.destinationEntity[sourceRelationship.destination],
            destination.entity(mapped, isKindOf: r.destination) || destination.entity(r.destination, isKindOf: mapped)
        else {
            throw matching.error(.notInferable, "the destination changes from '\(sourceRelationship.destination)' to '\(r.destination)', an unrelated entity; \(MigrationError.stagedAdvice)", entity: entity, property: relationship, change: "destination \(sourceRelationship.destination) -> \(r.destination)")
        }
    }

    func defaultValue(entity: String, keyPath: String) -> Value? {
        guard let attribute = destinationLayout.entity(entity)?.attributeColumns[keyPath]?.attribute,
            let value = attribute.defaultValue, !value.isNull else { return nil }
        return value.coerced(to: attribute.type) ?? value
    }

    mutating func scheduleOrderFill(table: String, column: String, entity: String, relationship: String) {
        guard let r = destination.relationship(relationship, of: entity), let inverse = r.inverse else { return }
        fills.append(MigrationOperation(.fillOrder(table: table, orderColumn: column, groupColumn: "\(inverse)_id", sortColumn: StorageLayout.primaryKeyColumn),
                                        deferrable: false,
                                        summary: "number \(entity).\(relationship) in \(table).\(column) by _pk (relationship becomes ordered)",
                                        entity: entity, property: relationship))
    }
}
