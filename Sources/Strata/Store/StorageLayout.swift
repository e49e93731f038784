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
    public private(set) var tables: [String: TableLayout] = [:]
    /// Join tables by name.
    public private(set) var joinTables: [String: JoinTableLayout] = [:]
    /// Every index, in creation order.
    public private(set) var indexes: [IndexLayout] = []
    /// Per entity name: the table and where each property lives.
    public private(set) var entities: [String: EntityLayout] = [:]

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

// MARK: - Layout parts

/// A table holding one entity hierarchy.
public struct TableLayout: Sendable, Hashable {
    /// The table's name (the root entity's).
    public var name: String
    /// The root entity of the hierarchy stored here.
    public var rootEntity: String
    /// The columns, system columns first.
    public var columns: [ColumnLayout]

    /// The column named `name`, if any.
    public func column(named name: String) -> ColumnLayout? { columns.first { $0.name == name } }
}

/// One column of an entity table.
public struct ColumnLayout: Sendable, Hashable {
    /// What a column stores.
    public enum Role: Sendable, Hashable {
        case primaryKey
        case version
        case entityName
        case attribute(entity: String, keyPath: String, type: AttributeType)
        case foreignKey(entity: String, relationship: String, destinationTable: String)
        case order(entity: String, relationship: String)
    }
    /// The column's name.
    public var name: String
    /// The declared SQL type (`TEXT`, `INTEGER`, `REAL`, `BLOB`, `NUMERIC`).
    public var sqlType: String
    /// What the column stores.
    public var role: Role
}

/// A join table for a many-to-many or an inverse-less to-many relationship.
public struct JoinTableLayout: Sendable, Hashable {
    /// The join table's name: `<Entity>_<relationship>`.
    public var name: String
    /// The table of the source entity.
    public var sourceTable: String
    /// The table of the target entity.
    public var targetTable: String
    /// The entity whose relationship names the table.
    public var sourceEntity: String
    /// The relationship of `sourceEntity` stored here.
    public var sourceRelationship: String
    /// The entity at the other end.
    public var targetEntity: String
    /// The inverse relationship, if there is one.
    public var targetRelationship: String?
    /// Whether the source side is ordered (a `source_order` column).
    public var sourceOrdered: Bool
    /// Whether the target side is ordered (a `target_order` column).
    public var targetOrdered: Bool

    /// Column names, in order.
    public var columnNames: [String] {
        ["source_id", "target_id"] + (sourceOrdered ? ["source_order"] : []) + (targetOrdered ? ["target_order"] : [])
    }
}

/// A SQL index derived from a fetch index, a uniqueness constraint, a to-one relationship,
/// a join table or an entity hierarchy.
public struct IndexLayout: Sendable, Hashable {
    /// One indexed column and its direction.
    public struct Column: Sendable, Hashable {
        /// The column's name.
        public var name: String
        /// Whether the column sorts ascending (`DESC` otherwise).
        public var ascending: Bool
    }
    /// What in the model asks for the index.
    public enum Origin: Sendable, Hashable {
        case fetchIndex(entity: String, name: String)
        case uniqueness(entity: String, keyPaths: [String])
        case foreignKey(entity: String, relationship: String)
        case joinTable(name: String)
        case entityColumn(table: String)
    }
    /// The index's name.
    public var name: String
    /// The table it indexes.
    public var table: String
    /// The indexed columns, in order.
    public var columns: [Column]
    /// Whether it is a `UNIQUE` index (a uniqueness constraint).
    public var isUnique: Bool
    /// What in the model asks for it.
    public var origin: Origin
}

/// Where an attribute or composite leaf of an entity is stored.
public struct AttributeColumn: Sendable, Hashable {
    /// The column's name.
    public var column: String
    /// `tailNumber` or `colorScheme.primary`.
    public var keyPath: String
    /// The attribute (for a composite leaf: the leaf element as an attribute).
    public var attribute: Attribute
}

/// Where a relationship's links are stored.
public enum RelationshipStorage: Sendable, Hashable {
    /// A to-one relationship: a column on the owner's table.
    case foreignKey(column: String, destinationTable: String)
    /// A to-many relationship whose inverse is to-one: the inverse's column on the destination's table.
    case inverseForeignKey(table: String, column: String, orderColumn: String?)
    /// A join table: the owner's id is in `ownColumn`, the related object's in `otherColumn`.
    case joinTable(name: String, ownColumn: String, otherColumn: String, orderColumn: String?)
}

/// The storage of one entity: its table and where each property lives.
public struct EntityLayout: Sendable, Hashable {
    /// The entity's name.
    public var name: String
    /// The root of its hierarchy.
    public var root: String
    /// The table that stores it.
    public var table: String
    /// Whether the table has an `_entity` column (the hierarchy has several entities).
    public var hasEntityColumn: Bool
    /// This entity and its sub-entities: the `_entity` values a fetch of this entity matches.
    public var entityNames: [String]
    /// Keyed by keypath (`tailNumber`, `colorScheme.primary`), inherited ones included.
    public var attributeColumns: [String: AttributeColumn] = [:]
    /// Keyed by relationship name, inherited ones included.
    public var relationships: [String: RelationshipStorage] = [:]
    /// Every attribute column of the entity in table-column order: an object keeps its values
    /// in this order ("slots"), so that reading a row and binding an insert need no lookups.
    public var slots: [AttributeColumn] = []
    /// Slot number by keypath.
    public var slotIndex: [String: Int] = [:]
    /// The attribute type of each slot.
    public var slotTypes: [AttributeType] = []

    /// The column for an attribute keypath, a composite leaf, or a to-one relationship.
    public func column(forKeyPath keyPath: String) -> String? {
        if let a = attributeColumns[keyPath] { return a.column }
        if case .foreignKey(let column, _)? = relationships[keyPath] { return column }
        return nil
    }
}
