import Foundation

/// Where a table, a column, an entity or a relationship of a served (older) version is, after
/// some hops of the version graph.
enum StoragePlace: Hashable, Sendable {
    /// In the layout the hops reached, under this name.
    case live(String)
    /// Left behind by a hop — a removed attribute's column, a removed entity's table — under
    /// this name, until the deferred cleanup drops it; `since` is the version that removed it.
    case leftover(String, since: String)
    /// No longer holds the served version's data, and why.
    case gone(String)

    var name: String? {
        switch self {
        case .live(let name), .leftover(let name, _): return name
        case .gone: return nil
        }
    }
}

/// A column of the served version's layout: its table and its name there.
struct ServedColumn: Hashable, Sendable {
    var table: String
    var column: String
}

/// A relationship of the served version: the entity that declares it and its name.
struct ServedRelationship: Hashable, Sendable {
    var entity: String
    var name: String
}

/// Follows every table, column, entity and relationship of a served version through the
/// lightweight hops from it to the store's version, as the migration at open ran them
/// (``LightweightInference``): renamed with their entity or property, left behind when the
/// hop removed them (named as the hop left them: a freed name becomes `_strata_dropped_…`),
/// or gone (rows deleted or copied elsewhere, a join table rebuilt) — then the served shape
/// can be mapped onto the physical schema, or refused with the hop that broke it.
struct HopTracker {
    let served: ObjectModel
    let servedLayout: StorageLayout
    private(set) var tables: [String: StoragePlace] = [:]
    private(set) var columns: [ServedColumn: StoragePlace] = [:]
    private(set) var entities: [String: StoragePlace] = [:]
    private(set) var relationships: [ServedRelationship: StoragePlace] = [:]
    /// What makes the version unservable, one sentence each.
    private(set) var problems: [String] = []

    init(served: ObjectModel) {
        self.served = served
        servedLayout = StorageLayout(model: served)
        for (name, table) in servedLayout.tables {
            tables[name] = .live(name)
            for column in table.columns { columns[ServedColumn(table: name, column: column.name)] = .live(column.name) }
        }
        for (name, join) in servedLayout.joinTables {
            tables[name] = .live(name)
            for column in join.columnNames { columns[ServedColumn(table: name, column: column)] = .live(column) }
        }
        for entity in served.entities {
            entities[entity.name] = .live(entity.name)
            for relationship in entity.relationships {
                relationships[ServedRelationship(entity: entity.name, name: relationship.name)] = .live(relationship.name)
            }
        }
    }

    /// Follows one lightweight hop from `source` to `destination`.
    ///
    /// - Throws: the hop's own ``MigrationError`` when it cannot be inferred (it cannot have
    ///   run as a lightweight hop then).
    mutating func apply(from source: ObjectModel, to destination: ObjectModel) throws(MigrationError) {
        guard source.checksum != destination.checksum else {
            // Same storage: only names that the checksum does not cover can differ (none that
            // reach a table or column).
            return
        }
        var inference = try LightweightInference(source: source, destination: destination)
        _ = try inference.plan()
        let hop = "'\(source.version)' -> '\(destination.version)'"
        let sourceLayout = inference.sourceLayout
        let destinationLayout = inference.destinationLayout

        // Tables.
        var tableChange: [String: (before: StoragePlace, after: StoragePlace)] = [:]
        for (name, place) in tables {
            guard case .live(let table) = place else { continue }
            let after: StoragePlace
            if sourceLayout.tables[table] != nil {
                if let next = inference.continuation[table], inference.liveTableName[table] == next {
                    after = .live(next)
                } else if inference.moves.values.contains(where: { $0.sourceTable == table }) {
                    after = .gone("the rows of table \(table) were copied into new tables by the hop \(hop)")
                } else {
                    after = .leftover(inference.liveTableName[table] ?? table, since: destination.version)
                }
            } else if sourceLayout.joinTables[table] != nil {
                if let next = inference.joinContinuation[table] {
                    after = inference.liveTableName[table] == next
                        ? .live(next) : .gone("join table \(table) was rebuilt as \(next) by the hop \(hop)")
                } else {
                    after = .leftover(inference.liveTableName[table] ?? table, since: destination.version)
                }
            } else {
                after = .gone("table \(table) is not in '\(source.version)'")
            }
            tables[name] = after
            tableChange[name] = (place, after)
        }

        // Columns, with their table.
        for (key, place) in columns {
            guard let change = tableChange[key.table] else {
                // The table was left behind or gone before this hop: its columns stay as they are.
                continue
            }
            switch (place, change.after) {
            case (_, .gone(let why)):
                columns[key] = .gone(why)
            case (.live(let column), .leftover(_, let since)):
                columns[key] = .leftover(column, since: since)
            case (.live(let column), .live(let table)):
                guard case .live(let oldTable) = change.before else { continue }
                if let layout = destinationLayout.tables[table] {
                    let renamed = inference.columnRenames[table]?[column] ?? column
                    if let destinationColumn = layout.column(named: renamed) {
                        columns[key] = .live(renamed)
                        checkType(of: key, from: sourceLayout.tables[oldTable]?.column(named: column), to: destinationColumn, hop: hop)
                    } else {
                        columns[key] = .leftover(renamed, since: destination.version)
                    }
                } else if let join = destinationLayout.joinTables[table] {
                    columns[key] = join.columnNames.contains(column) ? .live(column) : .leftover(column, since: destination.version)
                }
            case (.leftover, _), (.gone, _):
                continue
            }
        }

        // Entities.
        for (name, place) in entities {
            guard case .live(let entity) = place else { continue }
            let table = sourceLayout.entity(entity)?.table
            if let next = inference.matching.destinationEntity[entity] {
                let nextTable = destinationLayout.entity(next)?.table
                if let table, let nextTable, inference.continuation[table] != nextTable {
                    entities[name] = .gone("entity \(entity) moved from table \(table) to \(nextTable) in the hop \(hop) (its rows were copied)")
                } else {
                    entities[name] = .live(next)
                }
            } else if let table, inference.continuation[table] != nil {
                entities[name] = .gone("entity \(entity) was removed by the hop \(hop) and its rows were deleted from table \(table)")
            } else {
                entities[name] = .leftover(entity, since: destination.version)
            }
        }

        // Relationships: which destination relationship continues each source one.
        var continues: [ServedRelationship: String] = [:]
        for entity in destination.entities {
            for relationship in entity.relationships {
                if let match = try inference.matching.sourceRelationship(entity: entity.name, name: relationship.name) {
                    continues[ServedRelationship(entity: match.entity, name: match.relationship.name)] = relationship.name
                }
            }
        }
        for (key, place) in relationships {
            guard case .live(let name) = place else { continue }
            // Keyed by the declaring entity's name before this hop.
            let owner = ownerNames[key.entity] ?? key.entity
            relationships[key] = continues[ServedRelationship(entity: owner, name: name)].map { .live($0) }
                ?? .leftover(name, since: destination.version)
        }
        // The entities' names after the hop, for the next one.
        ownerNames = entities.compactMapValues { place in
            if case .live(let name) = place { return name }
            return nil
        }
    }

    /// Each served entity's name in the source of the next hop (absent: its own).
    private var ownerNames: [String: String] = [:]

    /// A column that keeps holding an attribute must keep its type: the served version's
    /// values would otherwise be read and written as another type.
    private mutating func checkType(of key: ServedColumn, from old: ColumnLayout?, to new: ColumnLayout, hop: String) {
        guard case .attribute(_, _, let oldType)? = old?.role, case .attribute(let entity, let newKeyPath, let newType) = new.role,
              oldType != newType else { return }
        let servedName = servedLayout.tables[key.table]?.column(named: key.column).flatMap { column -> String? in
            if case .attribute(let e, let k, _) = column.role { return "\(e).\(k)" }
            return nil
        } ?? "\(key.table).\(key.column)"
        problems.append("attribute \(servedName) changes type from \(oldType.rawValue) to \(newType.rawValue) in the hop \(hop) (\(entity).\(newKeyPath)); its values would be read as another type")
    }
}
