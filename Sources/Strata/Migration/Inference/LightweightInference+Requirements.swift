import Foundation

extension LightweightInference {
    // MARK: - Rows that exist before the hop

    /// The `WHERE` condition selecting, in source table `table`, the rows that become objects of
    /// destination entity `name` or its sub-entities; nil when the table holds none of them.
    func existingRowFilter(in table: String, forDestinationEntity name: String) -> String? {
        let wanted = Set(destination.hierarchy(of: name).map(\.name))
        let sources = source.entities.map(\.name).filter { s in
            sourceLayout.entity(s)?.table == table && matching.destinationEntity[s].map(wanted.contains) == true
        }
        guard !sources.isEmpty else { return nil }
        guard sourceLayout.tables[table]?.column(named: StorageLayout.entityColumn) != nil else { return "1" }
        return "\(quoteIdentifier(StorageLayout.entityColumn)) IN (\(sources.sorted().map(sqlLiteral).joined(separator: ", ")))"
    }

    /// The source tables holding rows that become objects of destination entity `name`.
    func existingRowTables(forDestinationEntity name: String) -> [(table: String, filter: String)] {
        sourceLayout.tables.keys.sorted().compactMap { table in
            existingRowFilter(in: table, forDestinationEntity: name).map { (table, $0) }
        }
    }

    // MARK: - Attributes

    /// Records that the rows of `entity` in source table `table` must have a value for
    /// `keyPath` after the hop: all of them when the attribute is new (`sourceColumn` nil),
    /// those whose `sourceColumn` is NULL otherwise.
    mutating func requireValue(entity: String, keyPath: String, inSourceTable table: String, sourceColumn: String?, change: String) {
        guard let filter = existingRowFilter(in: table, forDestinationEntity: entity) else { return }
        let null = sourceColumn.map { " AND \(quoteIdentifier($0)) IS NULL" } ?? ""
        requirements.append(ObjectRequirement(
            entity: entity, property: keyPath, rule: .requiredAttribute, change: change,
            violationCountSQL: "SELECT count(*) FROM \(quoteIdentifier(table)) WHERE \(filter)\(null)"))
    }

    // MARK: - Relationships

    /// Requirements of the destination's non-optional to-one relationships and counted to-many
    /// relationships on objects that exist before the hop.
    mutating func planRelationshipRequirements() throws(MigrationError) {
        for entity in destination.entities {
            let tables = existingRowTables(forDestinationEntity: entity.name)
            guard !tables.isEmpty else { continue }
            for relationship in entity.relationships {
                let match = try matching.sourceRelationship(entity: entity.name, name: relationship.name)
                let condition: String
                let rule: ObjectRequirement.Rule
                let change: String
                if !relationship.isToMany {
                    guard !relationship.isOptional else { continue }
                    if let match, !match.relationship.isToMany, !match.relationship.isOptional { continue }
                    rule = .requiredToOne
                    condition = "= 0"
                    change = match == nil ? "add non-optional to-one" : "to-one becomes non-optional"
                } else {
                    let minimum = max(relationship.minCount, relationship.isOptional ? 0 : 1)
                    let maximum = relationship.maxCount
                    guard minimum > 0 || maximum > 0 else { continue }
                    if let match, match.relationship.isToMany {
                        let sourceMinimum = max(match.relationship.minCount, match.relationship.isOptional ? 0 : 1)
                        let sourceMaximum = match.relationship.maxCount
                        if sourceMinimum >= minimum && (maximum == 0 || (sourceMaximum > 0 && sourceMaximum <= maximum)) { continue }
                    }
                    rule = .toManyCount(minimum: minimum, maximum: maximum)
                    condition = maximum > 0 ? "NOT BETWEEN \(minimum) AND \(maximum)" : "< \(minimum)"
                    change = match == nil ? "add to-many with minCount \(minimum)" : "to-many count \(minimum)...\(maximum == 0 ? "" : String(maximum))"
                }
                let counts = tables.map { table, filter in
                    let links = linkCountExpression(entity: entity.name, relationship: relationship, match: match, rowTable: table)
                    return "(SELECT count(*) FROM \(quoteIdentifier(table)) AS o WHERE \(filter) AND \(links) \(condition))"
                }
                requirements.append(ObjectRequirement(entity: entity.name, property: relationship.name, rule: rule, change: change,
                                                      violationCountSQL: "SELECT " + counts.joined(separator: " + ")))
            }
        }
    }

    /// An SQL expression, over a row `o` of source table `rowTable`, counting the links the
    /// destination relationship will hold for that object: from the matched source
    /// relationship's storage, else from the matched inverse's, else none.
    func linkCountExpression(entity: String, relationship: Relationship, match: (entity: String, relationship: Relationship)?, rowTable: String) -> String {
        let pk = "o.\(quoteIdentifier(StorageLayout.primaryKeyColumn))"
        func count(_ table: String, _ column: String) -> String {
            "(SELECT count(*) FROM \(quoteIdentifier(table)) AS l WHERE l.\(quoteIdentifier(column)) = \(pk))"
        }
        func present(_ column: String, in table: String) -> String {
            table == rowTable ? "(CASE WHEN o.\(quoteIdentifier(column)) IS NULL THEN 0 ELSE 1 END)" : "0"
        }
        if let match, let storage = sourceLayout.entity(match.entity)?.relationships[match.relationship.name] {
            switch storage {
            case .foreignKey(let column, _): return present(column, in: sourceLayout.entity(match.entity)!.table)
            case .inverseForeignKey(let table, let column, _): return count(table, column)
            case .joinTable(let name, let own, _, _): return count(name, own)
            }
        }
        if let inverseName = relationship.inverse,
           let inverse = try? matching.sourceRelationship(entity: relationship.destination, name: inverseName),
           let storage = sourceLayout.entity(inverse.entity)?.relationships[inverse.relationship.name] {
            switch storage {
            case .foreignKey(let column, _): return count(sourceLayout.entity(inverse.entity)!.table, column)
            case .inverseForeignKey(let table, let column, _): return present(column, in: table)
            case .joinTable(let name, _, let other, _): return count(name, other)
            }
        }
        return "0"
    }
}
