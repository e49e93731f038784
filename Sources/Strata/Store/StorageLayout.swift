import Foundation

/// How an ``ObjectModel`` maps to SQLite tables, columns, join tables and indexes.
///
/// - One table per root entity, named after it; sub-entities share it, and an `_entity`
///   column names each row's entity when the hierarchy has more than one entity.
/// - System columns: `_pk INTEGER PRIMARY KEY`, `_version` (optimistic locking).
/// - An attribute is a column of its name (transient attributes have none); a composite leaf is a column named by its path
///   joined with `_` (`colorScheme.primary` → `colorScheme_primary`).
/// - A to-one relationship is a column `<name>_id` holding the destination's `_pk`.
/// - A to-many relationship with a to-one inverse uses that inverse's column on the
///   destination table; when ordered, the destination also has `<inverse>_order`.
/// - Many-to-many and inverse-less to-many relationships use a join table named
///   `<Entity>_<relationship>` (of the side whose `Entity.relationship` sorts first), with
///   `source_id`, `target_id` and, when ordered, `source_order` / `target_order`.
/// - SQL columns carry no `NOT NULL`: the object layer enforces optionality.
///
/// The layout is a pure function of the model; computing it has no side effects.
public struct StorageLayout: Sendable, Hashable {
    /// The model the layout maps.
    public let model: ObjectModel
    /// Entity tables by name.
    public internal(set) var tables: [String: TableLayout] = [:]
    /// Join tables by name.
    public internal(set) var joinTables: [String: JoinTableLayout] = [:]
    /// Every index, in creation order.
    public internal(set) var indexes: [IndexLayout] = []
    /// Per entity name: the table and where each property lives.
    public internal(set) var entities: [String: EntityLayout] = [:]

    /// The integer primary key column of every table.
    public static let primaryKeyColumn = "_pk"
    /// The optimistic-locking version column of every entity table.
    public static let versionColumn = "_version"
    /// The column naming each row's entity in a table shared by a hierarchy.
    public static let entityColumn = "_entity"

    /// Computes the layout of `model` (a pure function of it).
    public init(model: ObjectModel) {
        self.model = model
        for root in model.rootEntities { addTable(for: root) }
        for entity in model.entities { resolveRelationships(of: entity) }
        for entity in model.entities { addIndexes(of: entity) }
        indexes.sort { $0.name < $1.name }
        for (name, var layout) in entities {
            // Invalid models (duplicate names) must not crash: validation computes this layout.
            let order = Dictionary((tables[layout.table]?.columns ?? []).enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
            layout.slots = layout.attributeColumns.values.sorted { (order[$0.column] ?? 0, $0.keyPath) < (order[$1.column] ?? 0, $1.keyPath) }
            layout.slotIndex = Dictionary(layout.slots.enumerated().map { ($1.keyPath, $0) }, uniquingKeysWith: { a, _ in a })
            layout.slotTypes = layout.slots.map(\.attribute.type)
            entities[name] = layout
        }
    }

    // MARK: - Lookup

    /// The storage of entity `name`, nil when the model has no such entity.
    public func entity(_ name: String) -> EntityLayout? { entities[name] }

    /// The table that stores entity `name` (its hierarchy's table).
    public func table(forEntity name: String) -> TableLayout? {
        entities[name].flatMap { tables[$0.table] }
    }

    /// All tables, join tables included, sorted by name.
    public var allTableNames: [String] { (Array(tables.keys) + Array(joinTables.keys)).sorted() }

    // MARK: - Building

    private mutating func addTable(for root: Entity) {
        let hierarchy = model.hierarchy(of: root.name)
        var columns: [ColumnLayout] = [
            ColumnLayout(name: Self.primaryKeyColumn, sqlType: "INTEGER", role: .primaryKey),
            ColumnLayout(name: Self.versionColumn, sqlType: "INTEGER", role: .version),
        ]
        let hasEntityColumn = hierarchy.count > 1
        if hasEntityColumn {
            columns.append(ColumnLayout(name: Self.entityColumn, sqlType: "TEXT", role: .entityName))
        }
        for entity in hierarchy {
            var layout = EntityLayout(name: entity.name, root: root.name, table: root.name,
                                      hasEntityColumn: hasEntityColumn,
                                      entityNames: model.hierarchy(of: entity.name).map(\.name))
            // Inherited properties resolve to the same columns as in the ancestor.
            if let parent = entity.parent, let parentLayout = entities[parent] {
                layout.attributeColumns = parentLayout.attributeColumns
            }
            for attribute in entity.attributes where !attribute.isTransient {
                columns.append(ColumnLayout(name: attribute.name, sqlType: attribute.type.sqlType,
                                            role: .attribute(entity: entity.name, keyPath: attribute.name, type: attribute.type)))
                layout.attributeColumns[attribute.name] = AttributeColumn(
                    column: attribute.name, keyPath: attribute.name, attribute: attribute)
            }
            for composite in entity.composites {
                for leaf in composite.leaves {
                    let keyPath = ([composite.name] + leaf.path).joined(separator: ".")
                    let column = ([composite.name] + leaf.path).joined(separator: "_")
                    columns.append(ColumnLayout(name: column, sqlType: leaf.attribute.type.sqlType,
                                                role: .attribute(entity: entity.name, keyPath: keyPath, type: leaf.attribute.type)))
                    layout.attributeColumns[keyPath] = AttributeColumn(column: column, keyPath: keyPath, attribute: leaf.attribute)
                }
            }
            entities[entity.name] = layout
        }
        tables[root.name] = TableLayout(name: root.name, rootEntity: root.name, columns: columns)
    }

    private mutating func resolveRelationships(of entity: Entity) {
        guard var layout = entities[entity.name] else { return }
        // Inherited relationships first (parents were resolved before, in declaration order of
        // ancestry), then own ones.
        for ancestor in model.ancestry(of: entity.name).reversed() {
            for relationship in ancestor.relationships {
                guard let storage = storage(of: relationship, in: ancestor) else { continue }
                layout.relationships[relationship.name] = storage
            }
        }
        entities[entity.name] = layout
    }

    private mutating func storage(of relationship: Relationship, in owner: Entity) -> RelationshipStorage? {
        guard let ownerLayout = entities[owner.name], let destination = entities[relationship.destination] else {
            return nil
        }
        let inverse = model.inverse(of: relationship)
        if !relationship.isToMany {
            let column = "\(relationship.name)_id"
            addColumnOnce(ColumnLayout(name: column, sqlType: "INTEGER",
                                       role: .foreignKey(entity: owner.name, relationship: relationship.name,
                                                         destinationTable: destination.table)),
                          to: ownerLayout.table)
            return .foreignKey(column: column, destinationTable: destination.table)
        }
        if let inverse, !inverse.isToMany {
            // One-to-many: the destination's to-one column holds the owner.
            let column = "\(inverse.name)_id"
            var orderColumn: String?
            if relationship.isOrdered {
                let order = "\(inverse.name)_order"
                addColumnOnce(ColumnLayout(name: order, sqlType: "INTEGER",
                                           role: .order(entity: owner.name, relationship: relationship.name)),
                              to: destination.table)
                orderColumn = order
            }
            return .inverseForeignKey(table: destination.table, column: column, orderColumn: orderColumn)
        }
        // Many-to-many or inverse-less to-many: a join table.
        let mine = "\(owner.name).\(relationship.name)"
        let theirs = inverse.map { "\(relationship.destination).\($0.name)" }
        let isSource = theirs == nil || mine <= theirs!
        let (sourceEntity, sourceRelationship) = isSource ? (owner.name, relationship.name)
            : (relationship.destination, inverse!.name)
        let name = "\(sourceEntity)_\(sourceRelationship)"
        let sourceTable = entities[sourceEntity]!.table
        let targetTable = isSource ? destination.table : ownerLayout.table
        var join = joinTables[name] ?? JoinTableLayout(
            name: name, sourceTable: sourceTable, targetTable: targetTable,
            sourceEntity: sourceEntity, sourceRelationship: sourceRelationship,
            targetEntity: isSource ? relationship.destination : owner.name,
            targetRelationship: isSource ? inverse?.name : relationship.name,
            sourceOrdered: false, targetOrdered: false)
        if relationship.isOrdered {
            if isSource { join.sourceOrdered = true } else { join.targetOrdered = true }
        }
        joinTables[name] = join
        return .joinTable(name: name, ownColumn: isSource ? "source_id" : "target_id",
                          otherColumn: isSource ? "target_id" : "source_id",
                          orderColumn: relationship.isOrdered ? (isSource ? "source_order" : "target_order") : nil)
    }

    private mutating func addColumnOnce(_ column: ColumnLayout, to table: String) {
        guard var t = tables[table], !t.columns.contains(where: { $0.name == column.name }) else { return }
        t.columns.append(column)
        tables[table] = t
    }

    private mutating func addIndexes(of entity: Entity) {
        guard let layout = entities[entity.name] else { return }
        for index in entity.indexes {
            let columns = index.elements.compactMap { element in
                layout.column(forKeyPath: element.keyPath).map { IndexLayout.Column(name: $0, ascending: element.ascending) }
            }
            guard columns.count == index.elements.count else { continue }
            indexes.append(IndexLayout(name: "\(layout.table)_\(index.name)", table: layout.table, columns: columns,
                                       isUnique: false, origin: .fetchIndex(entity: entity.name, name: index.name)))
        }
        for constraint in entity.uniquenessConstraints {
            let names = constraint.keyPaths.compactMap { layout.column(forKeyPath: $0) }
            guard names.count == constraint.keyPaths.count else { continue }
            indexes.append(IndexLayout(name: "\(layout.table)_unique_\(names.joined(separator: "_"))", table: layout.table,
                                       columns: names.map { IndexLayout.Column(name: $0, ascending: true) },
                                       isUnique: true, origin: .uniqueness(entity: entity.name, keyPaths: constraint.keyPaths)))
        }
        for relationship in entity.relationships where !relationship.isToMany {
            if case .foreignKey(let column, _)? = layout.relationships[relationship.name] {
                indexes.append(IndexLayout(name: "\(layout.table)_\(column)", table: layout.table,
                                           columns: [IndexLayout.Column(name: column, ascending: true)],
                                           isUnique: false, origin: .foreignKey(entity: entity.name, relationship: relationship.name)))
            }
        }
        if entity.parent == nil, let table = tables[entity.name], table.columns.contains(where: { $0.role == .entityName }) {
            indexes.append(IndexLayout(name: "\(entity.name)_\(Self.entityColumn)", table: entity.name,
                                       columns: [IndexLayout.Column(name: Self.entityColumn, ascending: true)],
                                       isUnique: false, origin: .entityColumn(table: entity.name)))
        }
        for relationship in entity.relationships {
            if case .joinTable(let name, let own, _, _)? = layout.relationships[relationship.name], own == "source_id" {
                indexes.append(IndexLayout(name: "\(name)_target_id", table: name,
                                           columns: [IndexLayout.Column(name: "target_id", ascending: true)],
                                           isUnique: false, origin: .joinTable(name: name)))
            }
        }
    }
}
