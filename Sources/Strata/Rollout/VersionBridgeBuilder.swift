import Foundation

/// Builds a ``VersionBridge`` from where the hops left the served version's storage
/// (``HopTracker``) and the store's schema: the served model and its layout on the store's
/// tables, the leftovers, the insert constants and refusals, and the names both ways — or the
/// first reason the version cannot be served.
struct VersionBridgeBuilder {
    let tracker: HopTracker
    let current: ObjectModel
    let currentLayout: StorageLayout
    let schema: PhysicalSchema

    private(set) var servedModel: ObjectModel
    private(set) var leftovers = VersionBridge.Leftovers()
    private(set) var insertRefusals: [String: String] = [:]
    private(set) var currentEntity: [String: String] = [:]
    private(set) var servedEntity: [String: String] = [:]
    private(set) var currentProperty: [String: [String: String]] = [:]
    private(set) var servedProperty: [String: [String: String]] = [:]
    private(set) var layout: StorageLayout

    init(tracker: HopTracker, current: ObjectModel, schema: PhysicalSchema,
         refuse: (String) -> VersionBridgeError) throws(VersionBridgeError) {
        self.tracker = tracker
        self.current = current
        self.currentLayout = StorageLayout(model: current)
        self.schema = schema
        self.servedModel = tracker.served
        self.layout = tracker.servedLayout
        if let problem = tracker.problems.first { throw refuse(problem) }
        if let problem = checkPlaces() { throw refuse(problem) }
        relaxModel()
        layout = StorageLayout(model: servedModel)
        if let problem = mapLayout() { throw refuse(problem) }
        mapNames()
        planInserts()
    }

    func bridge(schemaVersion: Int) -> VersionBridge {
        VersionBridge(version: tracker.served.version, currentVersion: current.version, servedModel: servedModel, layout: layout,
                      leftovers: leftovers, insertRefusals: insertRefusals, currentEntity: currentEntity, servedEntity: servedEntity,
                      currentProperty: currentProperty, servedProperty: servedProperty,
                      caches: VersionBridge.Caches(schemaVersion: schemaVersion))
    }

    // MARK: - Places

    /// The store's name of a served table.
    private func table(_ name: String) -> String { tracker.tables[name]?.name ?? name }

    /// The store's name of a served column.
    private func column(_ table: String, _ column: String) -> String {
        tracker.columns[ServedColumn(table: table, column: column)]?.name ?? column
    }

    private func place(_ table: String, _ column: String) -> StoragePlace? {
        tracker.columns[ServedColumn(table: table, column: column)]
    }

    /// What the served layout describes, in words (`attribute Aircraft.photo`).
    private func describe(_ role: ColumnLayout.Role, table: String, column: String) -> String {
        switch role {
        case .attribute(let e, let k, _): return "attribute \(e).\(k)"
        case .foreignKey(let e, let r, _): return "relationship \(e).\(r)"
        case .order(let e, let r): return "the order of \(e).\(r)"
        case .entityName: return "the entity column of \(table)"
        case .primaryKey, .version: return "column \(table).\(column)"
        }
    }

    /// Every table and column the served layout uses must still hold its data: the first
    /// reason one does not.
    private mutating func checkPlaces() -> String? {
        let served = tracker.servedLayout
        for name in served.allTableNames {
            switch tracker.tables[name] {
            case .gone(let why)?: return why
            case .leftover(let physical, let since)?:
                guard schema.columns[physical] != nil else {
                    return "table \(physical) (\(served.tables[name].map { "entity \($0.rootEntity)" } ?? "join table \(name)"), removed in '\(since)') was dropped by the deferred cleanup"
                }
                leftovers.tables.insert(physical)
            default: break
            }
        }
        for (name, tableLayout) in served.tables {
            let physicalTable = table(name)
            for columnLayout in tableLayout.columns {
                let what = describe(columnLayout.role, table: name, column: columnLayout.name)
                switch place(name, columnLayout.name) {
                case .gone(let why)?: return "\(what): \(why)"
                case .leftover(let physical, let since)?:
                    guard schema.columns[physicalTable]?.contains(physical) ?? false else {
                        return "\(what) (column \(physicalTable).\(physical), removed in '\(since)') was dropped by the deferred cleanup"
                    }
                    if !leftovers.tables.contains(physicalTable) { leftovers.columns[physicalTable, default: []].insert(physical) }
                case .live(let physical)?:
                    guard schema.columns[physicalTable]?.contains(physical) ?? false else {
                        return "\(what) (column \(physicalTable).\(physical)) is not in the store"
                    }
                case nil: break
                }
            }
        }
        for (name, join) in served.joinTables {
            let physicalTable = table(name)
            for columnName in join.columnNames {
                guard let physical = place(name, columnName)?.name, schema.columns[physicalTable]?.contains(physical) ?? false else {
                    return "join table \(name) of \(join.sourceEntity).\(join.sourceRelationship): column \(columnName) is not in the store"
                }
            }
        }
        for entity in tracker.served.entities {
            switch tracker.entities[entity.name] {
            case .gone(let why)?: return why
            case .live(let now)?:
                guard let servedTable = served.entity(entity.name)?.table, let currentTable = currentLayout.entity(now)?.table,
                      case .live(let physical)? = tracker.tables[servedTable], physical == currentTable else {
                    return "entity \(entity.name) (now \(now)) is not stored in the table it had in '\(tracker.served.version)'"
                }
                if served.entity(entity.name)?.hasEntityColumn ?? false, now != entity.name {
                    return "entity \(entity.name) was renamed to \(now) in a table shared by its hierarchy: its rows are marked '\(now)' in the _entity column, which a client of '\(tracker.served.version)' would not recognize"
                }
            case .leftover(let stored, _)?:
                if served.entity(entity.name)?.hasEntityColumn ?? false, stored != entity.name {
                    return "entity \(entity.name) was renamed to \(stored) in a table shared by its hierarchy before it was removed"
                }
            case nil: break
            }
            for relationship in entity.relationships {
                if let problem = checkRelationship(relationship, of: entity.name) { return problem }
            }
        }
        return nil
    }

    /// A relationship the store's version continues must be stored where it was (links written
    /// by either version are then seen by both); one it removed is served from its leftovers.
    private func checkRelationship(_ relationship: Relationship, of entity: String) -> String? {
        let served = tracker.servedLayout
        guard let storage = served.entity(entity)?.relationships[relationship.name] else { return nil }
        let ownTable = served.entity(entity)!.table
        var places: [StoragePlace?] = []
        var orderColumns: [(served: String, place: StoragePlace?)] = []
        switch storage {
        case .foreignKey(let columnName, _):
            places.append(place(ownTable, columnName))
        case .inverseForeignKey(let table, let columnName, let order):
            places.append(place(table, columnName))
            if let order { orderColumns.append((order, place(table, order))) }
        case .joinTable(let name, _, _, _):
            places.append(tracker.tables[name])
        }
        let continued: Bool
        if case .live? = tracker.relationships[ServedRelationship(entity: entity, name: relationship.name)] { continued = true } else { continued = false }
        if continued, places.contains(where: { if case .leftover? = $0 { return true }; return false }) {
            return "relationship \(entity).\(relationship.name) is stored differently in '\(current.version)' (its links were copied into a new shape): links written by one version would not be seen by the other"
        }
        // The order column of a to-one whose inverse is ordered is named after the relationship.
        for order in orderColumns {
            if let name = order.place?.name, name != order.served {
                return "the order of relationship \(entity).\(relationship.name) is kept in column \(name), not \(order.served)"
            }
        }
        return nil
    }

    // MARK: - Model

    /// A removed attribute becomes optional (rows the newer version inserts have no value), an
    /// attribute the newer version requires is required here too, with its default when the
    /// served version has none.
    private mutating func relaxModel() {
        let served = tracker.servedLayout
        for (index, entity) in servedModel.entities.enumerated() {
            guard let entityLayout = served.entity(entity.name) else { continue }
            var changed = entity
            for (position, attribute) in entity.attributes.enumerated() where !attribute.isTransient {
                guard let stored = entityLayout.attributeColumns[attribute.name] else { continue }
                switch place(entityLayout.table, stored.column) {
                case .leftover?:
                    changed.attributes[position].isOptional = true
                case .live(let physical)?:
                    guard case .live(let now)? = tracker.entities[entity.name],
                          let currentAttribute = currentLayout.entity(now)?.attributeColumns.values.first(where: { $0.column == physical })?.attribute
                    else { continue }
                    if !currentAttribute.isOptional {
                        changed.attributes[position].isOptional = false
                        if attribute.defaultValue == nil { changed.attributes[position].defaultValue = currentAttribute.defaultValue }
                    }
                default: break
                }
            }
            for (position, relationship) in entity.relationships.enumerated() {
                if case .leftover? = tracker.relationships[ServedRelationship(entity: entity.name, name: relationship.name)] {
                    changed.relationships[position].isOptional = true
                }
            }
            servedModel.entities[index] = changed
        }
    }

    // MARK: - Layout

    /// The served layout on the store's names: tables, columns, relationships' storage; no
    /// indexes (the served version never creates any).
    private mutating func mapLayout() -> String? {
        let original = layout
        var tables: [String: TableLayout] = [:]
        for (name, var tableLayout) in original.tables {
            tableLayout.name = table(name)
            tableLayout.columns = tableLayout.columns.map { columnLayout in
                var mapped = columnLayout
                mapped.name = column(name, columnLayout.name)
                if case .foreignKey(let e, let r, let destination) = columnLayout.role {
                    mapped.role = .foreignKey(entity: e, relationship: r, destinationTable: table(destination))
                }
                return mapped
            }
            tables[tableLayout.name] = tableLayout
        }
        var joinTables: [String: JoinTableLayout] = [:]
        for (name, var join) in original.joinTables {
            join.name = table(name)
            join.sourceTable = table(join.sourceTable)
            join.targetTable = table(join.targetTable)
            joinTables[join.name] = join
        }
        var entities: [String: EntityLayout] = [:]
        for (name, var entityLayout) in original.entities {
            let own = entityLayout.table
            entityLayout.table = table(own)
            entityLayout.attributeColumns = entityLayout.attributeColumns.mapValues { stored in
                var mapped = stored
                mapped.column = column(own, stored.column)
                return mapped
            }
            entityLayout.slots = entityLayout.slots.map { stored in
                var mapped = stored
                mapped.column = column(own, stored.column)
                return mapped
            }
            entityLayout.relationships = entityLayout.relationships.mapValues { storage in
                switch storage {
                case .foreignKey(let c, let destination):
                    return .foreignKey(column: column(own, c), destinationTable: table(destination))
                case .inverseForeignKey(let t, let c, let order):
                    return .inverseForeignKey(table: table(t), column: column(t, c), orderColumn: order.map { column(t, $0) })
                case .joinTable(let t, let ownColumn, let other, let order):
                    return .joinTable(name: table(t), ownColumn: column(t, ownColumn), otherColumn: column(t, other), orderColumn: order.map { column(t, $0) })
                }
            }
            entities[name] = entityLayout
        }
        layout.tables = tables
        layout.joinTables = joinTables
        layout.entities = entities
        layout.indexes = []
        return nil
    }

    // MARK: - Names

    /// Entity and property names both ways, for the change history.
    private mutating func mapNames() {
        for entity in servedModel.entities {
            guard let place = tracker.entities[entity.name] else { continue }
            switch place {
            case .live(let now):
                currentEntity[entity.name] = now
                servedEntity[now] = entity.name
            default:
                continue
            }
            guard case .live(let now)? = tracker.entities[entity.name], let servedLayout = layout.entity(entity.name),
                  let currentEntityLayout = currentLayout.entity(now) else { continue }
            var toCurrent: [String: String] = [:]
            for stored in servedLayout.attributeColumns.values {
                guard let currentStored = currentEntityLayout.attributeColumns.values.first(where: { $0.column == stored.column }) else { continue }
                toCurrent[Self.topLevel(stored.keyPath)] = Self.topLevel(currentStored.keyPath)
            }
            for relationship in servedModel.allRelationships(of: entity.name) {
                let declaring = servedModel.ancestry(of: entity.name).first { $0.relationship(named: relationship.name) != nil }?.name ?? entity.name
                if case .live(let name)? = tracker.relationships[ServedRelationship(entity: declaring, name: relationship.name)] {
                    toCurrent[relationship.name] = name
                }
            }
            currentProperty[entity.name] = toCurrent
            servedProperty[now] = Dictionary(toCurrent.map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        }
    }

    static func topLevel(_ keyPath: String) -> String {
        keyPath.firstIndex(of: ".").map { String(keyPath[..<$0]) } ?? keyPath
    }

    // MARK: - Inserts

    /// What the store's version needs in a row that the served version does not write: the
    /// defaults of attributes it added, the entity column it added; an entity whose newer
    /// shape requires a value the served version cannot give is refused for inserts.
    private mutating func planInserts() {
        for entity in servedModel.entities where !entity.isAbstract {
            guard case .live(let now)? = tracker.entities[entity.name], var servedLayout = layout.entity(entity.name),
                  let currentEntityLayout = currentLayout.entity(now) else { continue }
            var written: Set<String> = [StorageLayout.primaryKeyColumn, StorageLayout.versionColumn]
            if servedLayout.hasEntityColumn { written.insert(StorageLayout.entityColumn) }
            written.formUnion(servedLayout.slots.map(\.column))
            for storage in servedLayout.relationships.values {
                if case .foreignKey(let c, _) = storage { written.insert(c) }
            }
            if let table = layout.tables[servedLayout.table] {
                for columnLayout in table.columns {
                    if case .order = columnLayout.role { written.insert(columnLayout.name) }
                }
            }
            var constants: [String: String] = [:]
            var missing: [String] = []
            for slot in currentEntityLayout.slots where !written.contains(slot.column) {
                if let value = slot.attribute.defaultValue, !value.isNull {
                    constants[slot.column] = (value.coerced(to: slot.attribute.type) ?? value).sqlLiteral
                } else if !slot.attribute.isOptional {
                    missing.append("attribute \(now).\(slot.keyPath)")
                }
            }
            for relationship in current.allRelationships(of: now) where !relationship.isToMany && !relationship.isOptional {
                if case .foreignKey(let c, _)? = currentEntityLayout.relationships[relationship.name], !written.contains(c) {
                    missing.append("relationship \(now).\(relationship.name)")
                }
            }
            if currentEntityLayout.hasEntityColumn && !written.contains(StorageLayout.entityColumn) {
                constants[StorageLayout.entityColumn] = sqlLiteral(now)
            }
            if !missing.isEmpty {
                insertRefusals[entity.name] = "'\(current.version)' requires \(missing.joined(separator: ", ")), which '\(tracker.served.version)' does not have and which has no default: a client of '\(tracker.served.version)' cannot insert \(entity.name) objects (fetches, updates and deletes are served)"
            }
            servedLayout.insertConstants = constants
            layout.entities[entity.name] = servedLayout
        }
    }
}
