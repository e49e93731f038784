import Foundation

extension LightweightInference {
    /// Column bookkeeping of a continued table: frees names, renames, adds (O(1), with the
    /// default as a `DEFAULT` clause), fills defaults where NULL, records leftovers for the
    /// deferred rewrite.
    mutating func planColumns(of table: String) throws(MigrationError) {
        let sourceTable = continued[table]!
        let layout = destinationLayout.tables[table]!
        let sourceColumns = sourceLayout.tables[sourceTable]!.columns
        var live = sourceColumns.map { LiveColumn(name: $0.name, sqlType: $0.sqlType, defaultSQL: nil) }
        var renames: [(from: String, to: String)] = []
        var adds: [(column: ColumnLayout, defaultSQL: String?)] = []
        var claimed: [String: String] = [:]  // source column -> destination column
        var after: [MigrationOperation] = []

        for column in layout.columns {
            switch try origin(of: column, table: table) {
            case .system:
                claimed[column.name] = column.name
            case .source(let t, let sourceColumn, let attribute) where t == sourceTable:
                if let other = claimed[sourceColumn] {
                    throw matching.error(.ambiguousRename, "both '\(other)' and '\(column.name)' continue source column '\(sourceTable).\(sourceColumn)'; give only one of them that renaming identifier", entity: layout.rootEntity, property: column.name, change: "rename \(sourceColumn)")
                }
                claimed[sourceColumn] = column.name
                if sourceColumn != column.name { renames.append((sourceColumn, column.name)) }
                if case .attribute(let entity, let keyPath, let type) = column.role {
                    if let attribute, attribute.type != type {
                        let sourceSQL = attribute.type.sqlType
                        let how = sourceSQL == type.sqlType
                            ? "the \(sourceSQL) column stays; stored values are read as \(type.rawValue) at once"
                            : "stored values are read as \(type.rawValue) at once; the column's declared type becomes \(type.sqlType) (values converted) when \(table) is rewritten (deferred)"
                        synchronous.append(MigrationOperation(.widenColumn(table: table, column: column.name, from: attribute.type, to: type), deferrable: false,
                                                              summary: "widen \(entity).\(keyPath) from \(attribute.type.rawValue) to \(type.rawValue): \(how)", entity: entity, property: keyPath))
                        if sourceSQL != type.sqlType {
                            retypedColumns[table, default: []].append(column.name)
                            rewriteReasons[table, default: []].append("change the declared type of \(column.name) from \(sourceSQL) to \(type.sqlType) (\(entity).\(keyPath) widened)")
                        }
                    }
                    let wasRequired = attribute.map { !$0.isOptional } ?? false
                    if matching.isRequired(entity: entity, keyPath: keyPath) && !(wasRequired && sourceIsRequired(table: sourceTable, column: sourceColumn)) {
                        guard let value = defaultValue(entity: entity, keyPath: keyPath) else {
                            // Refused at migration time when stored objects have no value.
                            requireValue(entity: entity, keyPath: keyPath, inSourceTable: sourceTable, sourceColumn: sourceColumn, change: "optional -> non-optional")
                            continue
                        }
                        after.append(MigrationOperation(.setDefaultWhereNull(table: table, column: column.name, defaultSQL: value.sqlLiteral), deferrable: false,
                                                        summary: "set \(entity).\(keyPath) to its default \(value) where NULL (attribute becomes non-optional)", entity: entity, property: keyPath))
                    }
                }
            case .source(let t, _, _):
                throw matching.error(.notInferable, "'\(column.name)' would move from table '\(t)' to table '\(table)'; \(MigrationError.stagedAdvice)", entity: layout.rootEntity, property: column.name)
            case .new:
                adds.append((column, try newColumnDefault(column, table: table, rootEntity: layout.rootEntity)))
            }
        }

        // Free names held by leftover columns.
        let targets = Set(renames.map(\.to) + adds.map(\.column.name))
        for column in live where claimed[column.name] == nil && targets.contains(column.name) {
            var freed = "_strata_dropped_" + column.name
            while live.contains(where: { $0.name == freed }) { freed += "_" }
            synchronous.append(MigrationOperation(.renameColumn(table: table, from: column.name, to: freed), deferrable: false,
                                                  summary: "rename leftover column \(table).\(column.name) to \(freed) to free its name (dropped later)"))
            rename(&live, column.name, to: freed)
            columnRenames[table, default: [:]][column.name] = freed
        }
        // Renames, breaking cycles through temporary names.
        var pending = renames
        while !pending.isEmpty {
            if let i = pending.firstIndex(where: { r in !live.contains { $0.name == r.to } }) {
                let r = pending.remove(at: i)
                let original = columnRenames[table]?.first { $0.value == r.from }?.key ?? r.from
                let property = propertyName(ofColumn: r.to, in: layout)
                synchronous.append(MigrationOperation(.renameColumn(table: table, from: r.from, to: r.to), deferrable: false,
                                                      summary: "rename column \(table).\(r.from) to \(r.to) (\(property.map { "\($0.entity).\($0.property) renamed" } ?? "renamed"))",
                                                      entity: property?.entity, property: property?.property))
                rename(&live, r.from, to: r.to)
                columnRenames[table, default: [:]][original] = r.to
            } else {
                let r = pending.removeFirst()
                let temporary = "_strata_tmp_" + r.from
                synchronous.append(MigrationOperation(.renameColumn(table: table, from: r.from, to: temporary), deferrable: false,
                                                      summary: "rename column \(table).\(r.from) to \(temporary) (swap of names)"))
                rename(&live, r.from, to: temporary)
                columnRenames[table, default: [:]][r.from] = temporary
                pending.append((temporary, r.to))
            }
        }
        for add in adds {
            let property = propertyName(ofColumn: add.column.name, in: layout)
            let why: String
            switch add.column.role {
            case .entityName: why = "the table now holds several entities; existing rows are \(add.defaultSQL ?? "")"
            case .order(let e, let r): why = "\(e).\(r) becomes ordered"
            case .foreignKey(let e, let r, _): why = "relationship \(e).\(r) added"
            default: why = property.map { "attribute \($0.entity).\($0.property) added" + (add.defaultSQL.map { ", existing rows read the default \($0)" } ?? "") } ?? "added"
            }
            synchronous.append(MigrationOperation(.addColumn(table: table, column: add.column.name, sqlType: add.column.sqlType, defaultSQL: add.defaultSQL), deferrable: false,
                                                  summary: "add column \(table).\(add.column.name) \(add.column.sqlType) (\(why))", entity: property?.entity, property: property?.property))
            live.append(LiveColumn(name: add.column.name, sqlType: add.column.sqlType, defaultSQL: add.defaultSQL))
            if add.defaultSQL != nil { rewriteReasons[table, default: []].append("remove the ADD COLUMN default of \(add.column.name)") }
            if case .order(let entity, let relationship) = add.column.role {
                scheduleOrderFill(table: table, column: add.column.name, entity: entity, relationship: relationship)
            }
        }
        synchronous += after

        // Leftovers and shape: decide the rewrite.
        for column in live where !layout.columns.contains(where: { $0.name == column.name }) {
            let original = columnRenames[table]?.first { $0.value == column.name }?.key ?? column.name
            rewriteReasons[table, default: []].append("drop column \(original) (\(dropReason(sourceTable: sourceTable, column: original)))")
        }
        let wanted = layout.columns.map { LiveColumn(name: $0.name, sqlType: $0.sqlType, defaultSQL: $0.role == .version ? "1" : nil) }
        let current = live.map { c in LiveColumn(name: c.name, sqlType: c.sqlType, defaultSQL: c.name == StorageLayout.versionColumn ? "1" : c.defaultSQL) }
        let kept = current.filter { c in wanted.contains { $0.name == c.name } }
        if kept.map(\.name) != wanted.map(\.name) && rewriteReasons[table] == nil {
            rewriteReasons[table, default: []].append("restore the declared column order")
        }
        if current != wanted && rewriteReasons[table] == nil {
            rewriteReasons[table, default: []].append("restore the declared table definition")
        }
        liveColumns[table] = live
    }

    private func rename(_ live: inout [LiveColumn], _ from: String, to: String) {
        if let i = live.firstIndex(where: { $0.name == from }) { live[i].name = to }
    }

    /// Whether a source attribute column was non-optional for every entity storing it.
    private func sourceIsRequired(table: String, column: String) -> Bool {
        for entity in source.entities where sourceLayout.entity(entity.name)?.table == table {
            for (keyPath, stored) in sourceLayout.entity(entity.name)!.attributeColumns where stored.column == column {
                let parts = keyPath.split(separator: ".")
                if parts.count > 1 {
                    let declaring = source.ancestry(of: entity.name).first { $0.composite(named: String(parts[0])) != nil }
                    if declaring?.composite(named: String(parts[0]))?.isOptional ?? true { return false }
                }
                if stored.attribute.isOptional { return false }
            }
        }
        return true
    }

    /// The `DEFAULT` literal for a new column of an existing table, or an error when a
    /// non-optional attribute has none.
    mutating func newColumnDefault(_ column: ColumnLayout, table: String, rootEntity: String) throws(MigrationError) -> String? {
        switch column.role {
        case .entityName:
            let sourceRoot = continued[table].flatMap { sourceLayout.tables[$0]?.rootEntity }
            return sqlLiteral(sourceRoot.flatMap { matching.destinationEntity[$0] } ?? rootEntity)
        case .attribute(let entity, let keyPath, _):
            if let value = defaultValue(entity: entity, keyPath: keyPath) { return value.sqlLiteral }
            if matching.isRequired(entity: entity, keyPath: keyPath), let sourceTable = continued[table] {
                // Refused at migration time when the table holds objects of the entity.
                requireValue(entity: entity, keyPath: keyPath, inSourceTable: sourceTable, sourceColumn: nil, change: "add non-optional attribute")
            }
            return nil
        case .foreignKey(let entity, let relationship, _):
            try planNewForeignKey(table: table, column: column.name, entity: entity, relationship: relationship)
            return nil
        default:
            return nil
        }
    }

    /// A new to-one column: fill it from the inverse when the inverse stored the links.
    mutating func planNewForeignKey(table: String, column: String, entity: String, relationship: String) throws(MigrationError) {
        guard let r = destination.relationship(relationship, of: entity), let inverseName = r.inverse,
            let inverseMatch = try matching.sourceRelationship(entity: r.destination, name: inverseName),
            let storage = sourceLayout.entity(inverseMatch.entity)?.relationships[inverseMatch.relationship.name]
        else { return }
        switch storage {
        case .foreignKey:
            // One-to-one gained its second side: copy the links from the inverse's column.
            guard let inverseTable = destinationLayout.entity(r.destination)?.table,
                case .foreignKey(let inverseColumn, _)? = destinationLayout.entity(r.destination)?.relationships[inverseName]
            else { return }
            fills.append(MigrationOperation(.populateForeignKey(table: table, column: column, fromTable: inverseTable, fromColumn: inverseColumn), deferrable: false,
                                            summary: "fill \(table).\(column) from \(inverseTable).\(inverseColumn) (relationship \(entity).\(relationship) added as inverse of a to-one)",
                                            entity: entity, property: relationship))
        case .joinTable(let name, _, _, _):
            throw matching.error(.notInferable, "the links of '\(inverseMatch.entity).\(inverseMatch.relationship.name)' are stored in join table '\(name)' and would move into the to-one column '\(column)', which keeps at most one link per object; \(MigrationError.stagedAdvice)", entity: entity, property: relationship, change: "join table -> foreign key")
        case .inverseForeignKey:
            return
        }
    }

    func propertyName(ofColumn column: String, in layout: TableLayout) -> (entity: String, property: String)? {
        switch layout.column(named: column)?.role {
        case .attribute(let e, let k, _)?: return (e, k)
        case .foreignKey(let e, let r, _)?: return (e, r)
        case .order(let e, let r)?: return (e, r)
        default: return nil
        }
    }

    func dropReason(sourceTable: String, column: String) -> String {
        guard let role = sourceLayout.tables[sourceTable]?.column(named: column)?.role else { return "no longer used" }
        let version = destination.version
        switch role {
        case .attribute(let e, let k, _):
            return "attribute \(e).\(k) removed in \(version)"
        case .foreignKey(let e, let r, _):
            if let d = matching.destinationEntity[e], let rel = destination.relationship(r, of: d) ?? destination.entity(named: d)?.relationships.first(where: { $0.renamingIdentifier == r }), rel.isToMany {
                return "\(d).\(rel.name) is now to-many; its links were copied"
            }
            return "relationship \(e).\(r) removed in \(version)"
        case .order(let e, let r):
            return "ordering column: \(e).\(r) is no longer ordered in \(version)"
        case .entityName:
            return "entity column: the table holds one entity in \(version)"
        case .primaryKey, .version:
            return "no longer used"
        }
    }
}
