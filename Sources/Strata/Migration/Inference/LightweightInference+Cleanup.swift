import Foundation

extension LightweightInference {
    // MARK: - Rows and entity names

    /// Rows of removed sub-entities (and of entities that moved to another table) leave their
    /// old table synchronously: fetches of the remaining entities must not see them.
    mutating func planDeletions() {
        for (sourceTable, entities) in deletions.sorted(by: { $0.key < $1.key }) {
            guard let table = continuation[sourceTable] else { continue }
            let removed = entities.filter { matching.destinationEntity[$0] == nil }
            // References to removed rows are cleared; moved rows keep their _pk and their references.
            var references: [ColumnReference] = []
            if !removed.isEmpty {
                for t in destinationLayout.tables.values.sorted(by: { $0.name < $1.name }) {
                    for c in t.columns {
                        if case .foreignKey(_, _, let destinationTable) = c.role, destinationTable == table {
                            references.append(ColumnReference(table: t.name, column: c.name))
                        }
                    }
                }
            }
            let moved = entities.filter { matching.destinationEntity[$0] != nil }
            var why: [String] = []
            if !removed.isEmpty { why.append("entity \(removed.joined(separator: ", ")) removed in \(destination.version)") }
            if !moved.isEmpty { why.append("\(moved.joined(separator: ", ")) moved to \(moved.compactMap { destinationLayout.entity(matching.destinationEntity[$0]!)?.table }.joined(separator: ", "))") }
            let lost = removed.isEmpty ? [] : [DiscardedData(.rows, table: sourceTable, filter: entityFilter(removed),
                                                             what: "objects of \(removed.joined(separator: ", "))")]
            synchronous.append(MigrationOperation(.deleteRows(RowDeletion(table: table, entityValues: entities, nullifiedReferences: references)), deferrable: false,
                                                  summary: "delete rows of \(entities.joined(separator: ", ")) from \(table) (\(why.joined(separator: "; ")))",
                                                  entity: entities.first, discards: lost))
        }
    }

    mutating func planEntityValueRenames() {
        for (table, sourceTable) in continued.sorted(by: { $0.key < $1.key }) {
            guard sourceLayout.tables[sourceTable]?.column(named: StorageLayout.entityColumn) != nil,
                destinationLayout.tables[table]?.column(named: StorageLayout.entityColumn) != nil else { continue }
            for entity in source.entities where sourceLayout.entity(entity.name)?.table == sourceTable {
                guard let d = matching.destinationEntity[entity.name], d != entity.name,
                    destinationLayout.entity(d)?.table == table else { continue }
                synchronous.append(MigrationOperation(.renameEntityValues(table: table, from: entity.name, to: d), deferrable: false,
                                                      summary: "rename entity \(entity.name) to \(d) in \(table)._entity", entity: d))
            }
        }
    }

    // MARK: - Indexes

    /// The source indexes of continued tables, with the names the synchronous part leaves.
    func liveIndexes() -> [IndexSpec] {
        var result: [IndexSpec] = []
        for index in sourceLayout.indexes {
            let table: String
            let columns: [String]
            if let t = continuation[index.table] {
                table = t
                columns = index.columns.map { columnRenames[t]?[$0.name] ?? $0.name }
            } else if let j = joinContinuation[index.table], liveTableName[index.table] == j {
                table = j
                columns = index.columns.map(\.name)
            } else {
                continue  // dropped with its table, or already dropped
            }
            result.append(IndexSpec(name: index.name, table: table, columns: columns, isUnique: index.isUnique, sql: "", entity: nil, keyPaths: []))
        }
        return result
    }

    func spec(_ index: IndexLayout, ifNotExists: Bool) -> IndexSpec {
        var entity: String?
        var keyPaths: [String] = []
        if case .uniqueness(let e, let k) = index.origin { entity = e; keyPaths = k }
        return IndexSpec(name: index.name, table: index.table, columns: index.columns.map(\.name), isUnique: index.isUnique,
                         sql: destinationLayout.createIndexSQL(index, ifNotExists: ifNotExists), entity: entity, keyPaths: keyPaths)
    }

    func describe(_ index: IndexLayout) -> String {
        switch index.origin {
        case .fetchIndex(let e, let n): return "fetch index \(e).\(n)"
        case .uniqueness(let e, let k): return "uniqueness constraint \(e) (\(k.joined(separator: ", ")))"
        case .foreignKey(let e, let r): return "relationship \(e).\(r)"
        case .joinTable(let n): return "join table \(n)"
        case .entityColumn(let t): return "entity column of \(t)"
        }
    }

    /// Unique indexes change synchronously (constraints); indexes of new tables are built at
    /// once (the tables are empty or just copied); other non-unique indexes are deferred.
    mutating func planIndexes() {
        let live = liveIndexes()
        var matchedLive: Set<String> = []
        for index in destinationLayout.indexes {
            let isNewTable = newTables.contains(index.table) || newJoinTables.contains(index.table)
            let same = live.first { $0.name == index.name }
            if let same, same.table == index.table, same.columns == index.columns.map(\.name), same.isUnique == index.isUnique,
                !isNewTable {
                matchedLive.insert(same.name)
                continue
            }
            // A live index with the same definition under another name (table renamed).
            let renamed = live.first { l in l.table == index.table && l.columns == index.columns.map(\.name) && l.isUnique == index.isUnique && !matchedLive.contains(l.name) && !destinationLayout.indexes.contains(where: { d in d.name == l.name }) }
            if let same, !isNewTable {
                matchedLive.insert(same.name)
                if same.isUnique || index.isUnique || rewriteReasons[index.table] != nil {
                    synchronous.append(MigrationOperation(.dropIndex(name: same.name, table: same.table), deferrable: same.isUnique ? false : true,
                                                          summary: "drop index \(same.name) (its definition changes)"))
                }
            }
            if index.isUnique || isNewTable {
                let op = MigrationOperation(.createIndex(spec(index, ifNotExists: false)), deferrable: false,
                                            summary: "create \(index.isUnique ? "unique " : "")index \(index.name) on \(index.table) (\(describe(index))\(index.isUnique && !isNewTable ? "; fails if stored rows have duplicates" : ""))")
                synchronous.append(op)
                if let renamed { matchedLive.insert(renamed.name); dropStale(renamed) }
            } else if rewriteReasons[index.table] != nil {
                if let renamed { matchedLive.insert(renamed.name) }
                rewriteReasons[index.table, default: []].append("build index \(index.name) (\(describe(index)))")
            } else if let renamed {
                matchedLive.insert(renamed.name)
                deferred.append(MigrationOperation(.rebuildIndex(oldName: renamed.name, spec(index, ifNotExists: true)), deferrable: true,
                                                   summary: "rebuild index \(renamed.name) as \(index.name) on \(index.table) (\(describe(index)); renamed)"))
            } else if let same {
                deferred.append(MigrationOperation(.rebuildIndex(oldName: same.name, spec(index, ifNotExists: false)), deferrable: true,
                                                   summary: "rebuild index \(index.name) on \(index.table) (\(describe(index)) changed)"))
            } else {
                deferred.append(MigrationOperation(.createIndex(spec(index, ifNotExists: true)), deferrable: true,
                                                   summary: "build index \(index.name) on \(index.table) (\(describe(index)) added)"))
            }
        }
        for index in live where !matchedLive.contains(index.name) { dropStale(index) }
        // Move the synchronous drops recorded as deferrable (non-unique, definition changed) to the deferred list.
        let drops = synchronous.filter(\.isDeferrable)
        synchronous.removeAll(where: \.isDeferrable)
        deferred = drops + deferred
    }

    private mutating func dropStale(_ index: IndexSpec) {
        if index.isUnique {
            synchronous.append(MigrationOperation(.dropIndex(name: index.name, table: index.table), deferrable: false,
                                                  summary: "drop unique index \(index.name) on \(index.table) (uniqueness constraint removed or changed)"))
        } else if rewriteReasons[index.table] != nil {
            rewriteReasons[index.table, default: []].append("drop index \(index.name) (no longer in the model)")
        } else {
            deferred.insert(MigrationOperation(.dropIndex(name: index.name, table: index.table), deferrable: true,
                                               summary: "drop index \(index.name) on \(index.table) (no longer in the model)"), at: 0)
        }
    }

    // MARK: - Drops and rewrites

    mutating func planDrops() {
        // Join tables first: they reference entity tables.
        var drops: [MigrationOperation] = []
        for name in sourceLayout.joinTables.keys.sorted() {
            let live = liveTableName[name]!
            guard joinContinuation[name] == nil || live != joinContinuation[name] else { continue }
            let join = sourceLayout.joinTables[name]!
            let why = joinContinuation[name] != nil ? "replaced by \(joinContinuation[name]!)" : "relationship \(join.sourceEntity).\(join.sourceRelationship) removed or no longer stored in a join table in \(destination.version)"
            let lost = joinContinuation[name] != nil ? [] : [DiscardedData(.rows, table: name, what: "links of \(join.sourceEntity).\(join.sourceRelationship)")]
            drops.append(MigrationOperation(.dropTable(live), deferrable: true, summary: "drop join table \(live) (\(why))",
                                            entity: join.sourceEntity, property: join.sourceRelationship, discards: lost))
        }
        for name in sourceLayout.tables.keys.sorted() where continuation[name] == nil {
            let live = liveTableName[name]!
            let moved = moves.values.contains { $0.sourceTable == name }
            let removed = source.entities.map(\.name).filter { sourceLayout.entity($0)?.table == name && matching.destinationEntity[$0] == nil }
            var lost: [DiscardedData] = []
            if !removed.isEmpty {
                let hasEntityColumn = sourceLayout.tables[name]?.column(named: StorageLayout.entityColumn) != nil
                lost.append(DiscardedData(.rows, table: name, filter: hasEntityColumn && moved ? entityFilter(removed) : nil,
                                          what: "objects of \(removed.joined(separator: ", "))"))
            }
            drops.append(MigrationOperation(.dropTable(live), deferrable: true,
                                            summary: "drop table \(live) (entity \(name) removed in \(destination.version)\(moved ? "; its remaining rows were copied to their new table" : ""))",
                                            entity: name, discards: lost))
        }
        deferred += drops
    }

    mutating func planRewrites() {
        var rewrites: [MigrationOperation] = []
        for table in rewriteReasons.keys.sorted() {
            let reasons = rewriteReasons[table]!
            let isJoin = destinationLayout.joinTables[table] != nil
            let finalSQL: String
            let shadowSQL: String
            let columns: [String]
            let shadow = "_strata_rewrite_" + table
            if let join = destinationLayout.joinTables[table] {
                finalSQL = destinationLayout.createJoinTableSQL(join)
                shadowSQL = destinationLayout.createJoinTableSQL(join, name: shadow)
                columns = join.columnNames
            } else {
                let layout = destinationLayout.tables[table]!
                finalSQL = destinationLayout.createTableSQL(layout)
                shadowSQL = destinationLayout.createTableSQL(layout, name: shadow)
                columns = layout.columns.map(\.name)
            }
            let dropped = (liveColumns[table] ?? []).map(\.name).filter { !columns.contains($0) }
            let indexSQL = destinationLayout.indexes.filter { $0.table == table }.map { destinationLayout.createIndexSQL($0, ifNotExists: true) }
            let rewrite = TableRewrite(table: table, shadowTable: shadow, createShadowSQL: shadowSQL, finalCreateSQL: finalSQL, columns: columns,
                                       droppedColumns: dropped, retypedColumns: retypedColumns[table] ?? [], indexSQL: indexSQL, reasons: reasons)
            let entity = destinationLayout.tables[table]?.rootEntity ?? destinationLayout.joinTables[table]?.sourceEntity
            rewrites.append(MigrationOperation(isJoin ? .rewriteJoinTable(rewrite) : .rewriteTable(rewrite), deferrable: true,
                                               summary: "rewrite \(isJoin ? "join table" : "table") \(table): \(reasons.joined(separator: "; "))", entity: entity,
                                               discards: droppedData(table: table, droppedColumns: dropped)))
        }
        deferred += rewrites
        if deferred.contains(where: { if case .dropTable = $0.kind { return true }; if case .rewriteTable = $0.kind { return true }; if case .rewriteJoinTable = $0.kind { return true }; return false }) {
            deferred.append(MigrationOperation(.incrementalVacuum, deferrable: true, summary: "reclaim free pages (PRAGMA incremental_vacuum)"))
        }
    }

    /// `"_entity" IN ('A', 'B')`.
    func entityFilter(_ entities: [String]) -> String {
        "\(quoteIdentifier(StorageLayout.entityColumn)) IN (\(entities.sorted().map(sqlLiteral).joined(separator: ", ")))"
    }

    /// What the columns a rewrite leaves behind held, named by their source table and column:
    /// removed attributes, links of removed to-one relationships, orders of relationships that
    /// are no longer ordered. Leftovers of earlier migrations and moved links are not data.
    func droppedData(table: String, droppedColumns: [String]) -> [DiscardedData] {
        if destinationLayout.joinTables[table] != nil {
            guard let old = joinContinuation.first(where: { $0.value == table })?.key, let join = sourceLayout.joinTables[old] else { return [] }
            return droppedColumns.filter { join.columnNames.contains($0) && $0.hasSuffix("_order") }.map { column in
                let side = column == "source_order" ? "\(join.sourceEntity).\(join.sourceRelationship)" : "\(join.targetEntity).\(join.targetRelationship ?? "?")"
                return DiscardedData(.values, table: old, column: column, what: "order column of \(side)")
            }
        }
        guard let sourceTable = continued[table], let layout = sourceLayout.tables[sourceTable] else { return [] }
        var result: [DiscardedData] = []
        for live in droppedColumns {
            let original = columnRenames[table]?.first { $0.value == live }?.key ?? live
            switch layout.column(named: original)?.role {
            case .attribute(let e, let k, _)?:
                result.append(DiscardedData(.values, table: sourceTable, column: original, what: "attribute \(e).\(k)"))
            case .foreignKey(let e, let r, _)?:
                if let d = matching.destinationEntity[e],
                   let relationship = destination.relationship(r, of: d) ?? destination.entity(named: d)?.relationships.first(where: { $0.renamingIdentifier == r }),
                   relationship.isToMany { continue }  // its links were copied into the new storage
                result.append(DiscardedData(.values, table: sourceTable, column: original, what: "to-one relationship \(e).\(r)"))
            case .order(let e, let r)?:
                result.append(DiscardedData(.values, table: sourceTable, column: original, what: "order column of \(e).\(r)"))
            default:
                continue
            }
        }
        return result
    }

    /// Deferred order: drop stale indexes, drop tables, rewrite tables, build indexes, vacuum.
    func orderedDeferred() -> [MigrationOperation] {
        func rank(_ op: MigrationOperation) -> Int {
            switch op.kind {
            case .dropIndex: return 0
            case .dropTable: return 1
            case .rewriteTable, .rewriteJoinTable: return 2
            case .createIndex, .rebuildIndex: return 3
            case .incrementalVacuum: return 5
            default: return 4
            }
        }
        return deferred.enumerated().sorted { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) }.map(\.element)
    }
}
