import Foundation

extension LightweightInference {
    /// A matched source relationship and where its links were stored.
    struct SourceLinks {
        var entity: String
        var relationship: Relationship
        var storage: RelationshipStorage
    }

    func sourceLinks(entity: String, relationship: String?) throws(MigrationError) -> SourceLinks? {
        guard let relationship, let match = try matching.sourceRelationship(entity: entity, name: relationship),
            let storage = sourceLayout.entity(match.entity)?.relationships[match.relationship.name]
        else { return nil }
        try checkDestination(of: match.relationship, entity: entity, relationship: relationship)
        return SourceLinks(entity: match.entity, relationship: match.relationship, storage: storage)
    }

    /// Join tables: continue (rename, add ordering columns), rebuild (sides swapped or tables
    /// changed), or create and populate from the foreign keys that stored the links before.
    mutating func planJoinTables() throws(MigrationError) {
        for name in destinationLayout.joinTables.keys.sorted() {
            let join = destinationLayout.joinTables[name]!
            let sideA = try sourceLinks(entity: join.sourceEntity, relationship: join.sourceRelationship)
            let sideB = try sourceLinks(entity: join.targetEntity, relationship: join.targetRelationship)
            // A continuing join table: (source join, whether its sides are swapped).
            var continuing: (table: String, swapped: Bool)?
            if case .joinTable(let j, let own, _, _)? = sideA?.storage { continuing = (j, own == "target_id") }
            else if case .joinTable(let j, let own, _, _)? = sideB?.storage { continuing = (j, own == "source_id") }
            if let c = continuing, joinContinuation[c.table] != nil { continuing = nil }

            if let c = continuing {
                let old = sourceLayout.joinTables[c.table]!
                let sourceTables = c.swapped ? (old.targetTable, old.sourceTable) : (old.sourceTable, old.targetTable)
                joinContinuation[c.table] = name
                if !c.swapped && continuation[sourceTables.0] == join.sourceTable && continuation[sourceTables.1] == join.targetTable {
                    continueJoinTable(old, as: join)
                } else {
                    rebuildJoinTable(old, as: join, swapped: c.swapped)
                }
                continue
            }
            createJoinTable(join, reason: "relationship \(join.sourceEntity).\(join.sourceRelationship) stored in a join table")
            var sources: [JoinPopulation.Source] = []
            var filled: Set<String> = []
            func add(_ links: SourceLinks?, isSourceSide: Bool) {
                guard let links else { return }
                let ownOrder = isSourceSide ? "source_order" : "target_order"
                let otherOrder = isSourceSide ? "target_order" : "source_order"
                switch links.storage {
                case .foreignKey(let column, _):
                    // The side's own to-one column: rows are this side.
                    let inverseOrder: String? = links.relationship.inverse.flatMap { inv in
                        if case .inverseForeignKey(_, _, let order?)? = sourceLayout.entity(links.relationship.destination)?.relationships[inv] { return order }
                        return nil
                    }
                    let wantsOrder = join.columnNames.contains(otherOrder) && inverseOrder != nil
                    sources.append(JoinPopulation.Source(table: liveTableName[sourceLayout.entity(links.entity)!.table]!, column: column, rowIsSource: isSourceSide,
                                                         orderColumn: wantsOrder ? inverseOrder : nil, orderIntoSource: !isSourceSide,
                                                         referencedTable: isSourceSide ? join.targetTable : join.sourceTable))
                    if wantsOrder { filled.insert(otherOrder) }
                case .inverseForeignKey(let table, let column, let order):
                    // The other side's to-one column: rows are the other side.
                    let wantsOrder = join.columnNames.contains(ownOrder) && order != nil
                    sources.append(JoinPopulation.Source(table: liveTableName[table]!, column: column, rowIsSource: !isSourceSide,
                                                         orderColumn: wantsOrder ? order : nil, orderIntoSource: isSourceSide,
                                                         referencedTable: isSourceSide ? join.sourceTable : join.targetTable))
                    if wantsOrder { filled.insert(ownOrder) }
                case .joinTable:
                    break
                }
            }
            add(sideA, isSourceSide: true)
            add(sideB, isSourceSide: false)
            var unique: [JoinPopulation.Source] = []
            for s in sources.sorted(by: { ($0.orderColumn != nil ? 0 : 1) < ($1.orderColumn != nil ? 0 : 1) })
            where !unique.contains(where: { $0.table == s.table && $0.column == s.column }) { unique.append(s) }
            guard !unique.isEmpty else { continue }
            let numbered = join.columnNames.filter { $0.hasSuffix("_order") && !filled.contains($0) }
            let from = unique.map { "\($0.table).\($0.column)" }.joined(separator: " and ")
            synchronous.append(MigrationOperation(.populateJoinTable(JoinPopulation(joinTable: name, sources: unique, numberedOrderColumns: numbered)), deferrable: false,
                                                  summary: "copy the links of \(join.sourceEntity).\(join.sourceRelationship) from \(from) into join table \(name) (relationship becomes to-many; copied synchronously)",
                                                  entity: join.sourceEntity, property: join.sourceRelationship))
        }
    }

    mutating func createJoinTable(_ join: JoinTableLayout, reason: String) {
        freeTableName(join.name, for: nil)
        synchronous.append(MigrationOperation(.createJoinTable(table: join.name, sql: destinationLayout.createJoinTableSQL(join)), deferrable: false,
                                              summary: "create join table \(join.name) (\(reason))", entity: join.sourceEntity, property: join.sourceRelationship))
        newJoinTables.insert(join.name)
    }

    /// Same sides, same tables: rename if needed, add missing ordering columns, leave extra ones
    /// for a deferred rewrite.
    mutating func continueJoinTable(_ old: JoinTableLayout, as join: JoinTableLayout) {
        if liveTableName[old.name] != join.name {
            freeTableName(join.name, for: old.name)
            let from = liveTableName[old.name]!
            synchronous.append(MigrationOperation(.renameTable(from: from, to: join.name), deferrable: false,
                                                  summary: "rename join table \(from) to \(join.name) (entity or relationship renamed)", entity: join.sourceEntity, property: join.sourceRelationship))
            liveTableName[old.name] = join.name
        }
        var live = old.columnNames
        for column in join.columnNames where !live.contains(column) {
            let side = column == "source_order" ? (join.sourceEntity, join.sourceRelationship) : (join.targetEntity, join.targetRelationship ?? "")
            synchronous.append(MigrationOperation(.addColumn(table: join.name, column: column, sqlType: "INTEGER", defaultSQL: nil), deferrable: false,
                                                  summary: "add column \(join.name).\(column) (\(side.0).\(side.1) becomes ordered)", entity: side.0, property: side.1))
            let group = column == "source_order" ? "source_id" : "target_id"
            let sort = column == "source_order" ? "target_id" : "source_id"
            synchronous.append(MigrationOperation(.fillOrder(table: join.name, orderColumn: column, groupColumn: group, sortColumn: sort), deferrable: false,
                                                  summary: "number \(side.0).\(side.1) in \(join.name).\(column) by \(sort) (relationship becomes ordered)", entity: side.0, property: side.1))
            live.append(column)
            rewriteReasons[join.name, default: []].append("restore the declared definition after adding \(column)")
        }
        for column in live where !join.columnNames.contains(column) {
            let side = column == "source_order" ? (old.sourceEntity, old.sourceRelationship) : (old.targetEntity, old.targetRelationship ?? "")
            rewriteReasons[join.name, default: []].append("drop ordering column \(column) (\(side.0).\(side.1) is no longer ordered in \(destination.version))")
        }
        liveColumns[join.name] = live.map { LiveColumn(name: $0, sqlType: "INTEGER", defaultSQL: nil) }
    }

    /// Sides swapped or a side's table changed: move the old join table aside, create the new
    /// one and copy the links synchronously (the old one is dropped later).
    mutating func rebuildJoinTable(_ old: JoinTableLayout, as join: JoinTableLayout, swapped: Bool) {
        let live = liveTableName[old.name]!
        var aside = "_strata_old_" + old.name
        while liveHolder(of: aside) != nil { aside += "_" }
        synchronous.append(MigrationOperation(.renameTable(from: live, to: aside), deferrable: false,
                                              summary: "move join table \(live) aside to \(aside) (rebuilt below, dropped later)"))
        liveTableName[old.name] = aside
        for index in sourceLayout.indexes where index.table == old.name {
            synchronous.append(MigrationOperation(.dropIndex(name: index.name, table: aside), deferrable: false,
                                                  summary: "drop index \(index.name) of \(aside) (its join table is rebuilt)"))
        }
        createJoinTable(join, reason: "links of \(join.sourceEntity).\(join.sourceRelationship) move to a new shape")
        var columns: [String] = []
        var expressions: [String] = []
        var numbered: [String] = []
        for column in join.columnNames {
            let from: String
            switch column {
            case "source_id": from = swapped ? "target_id" : "source_id"
            case "target_id": from = swapped ? "source_id" : "target_id"
            case "source_order": from = swapped ? "target_order" : "source_order"
            default: from = swapped ? "source_order" : "target_order"
            }
            columns.append(column)
            if old.columnNames.contains(from) { expressions.append(quoteIdentifier(from)) } else {
                expressions.append("NULL")
                numbered.append(column)
            }
        }
        synchronous.append(MigrationOperation(.copyRows(RowCopy(fromTable: aside, toTable: join.name, entities: [join.sourceEntity], columns: columns, expressions: expressions, filter: nil)), deferrable: false,
                                              summary: "copy the links of \(join.sourceEntity).\(join.sourceRelationship) from \(aside) into \(join.name)\(swapped ? " (sides swapped)" : "")",
                                              entity: join.sourceEntity, property: join.sourceRelationship))
        for column in numbered {
            let group = column == "source_order" ? "source_id" : "target_id"
            let sort = column == "source_order" ? "target_id" : "source_id"
            synchronous.append(MigrationOperation(.fillOrder(table: join.name, orderColumn: column, groupColumn: group, sortColumn: sort), deferrable: false,
                                                  summary: "number \(join.name).\(column) by \(sort) (relationship becomes ordered)"))
        }
    }
}
