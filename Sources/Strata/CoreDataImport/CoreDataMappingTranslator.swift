import Foundation

/// Turns a Core Data mapping model into a Strata custom stage for the hop between its two
/// versions: the hop's lightweight part carries whatever its renaming identifiers and names
/// match; the generated `didMigrate` SQL does the rest of what the mapping model says —
/// attribute values computed from the source (`$source.name`, the `FUNCTION`s listed in
/// docs/CoreDataImport.md), relationships filled through another entity mapping
/// (`$manager.destinationInstancesForEntityMappingNamed…`, both sides of a one-to-one kept in
/// step), entities renamed without a renaming identifier copied over with their primary
/// keys. Anything else — a custom `NSEntityMigrationPolicy`, an expression without an SQL
/// equivalent — is refused before anything is written.
struct CoreDataMappingTranslator {
    let mapping: CoreDataMappingModel
    let source: ObjectModel
    let destination: ObjectModel
    private let matching: ModelMatching
    private let sourceLayout: StorageLayout
    private let destinationLayout: StorageLayout
    private var file: String { mapping.url.path }

    init(mapping: CoreDataMappingModel, source: ObjectModel, destination: ObjectModel) throws(CoreDataMappingError) {
        self.mapping = mapping
        self.source = source
        self.destination = destination
        do {
            matching = try ModelMatching(source: source, destination: destination)
        } catch {
            throw CoreDataMappingError(.untranslatable, "the versions '\(source.version)' and '\(destination.version)' cannot be matched: \(error.reason)", file: mapping.url.path)
        }
        sourceLayout = StorageLayout(model: source)
        destinationLayout = StorageLayout(model: destination)
    }

    /// The SQL statements of the stage's `didMigrate`, in order (empty when the lightweight
    /// hop already does everything the mapping model says).
    func statements() throws(CoreDataMappingError) -> [String] {
        var sql: [String] = []
        for entityMapping in mapping.entityMappings {
            if let policy = entityMapping.policyClass, policy != "NSEntityMigrationPolicy" {
                throw CoreDataMappingError(.customPolicy, "it names the custom migration policy class \(policy), whose Swift or Objective-C code cannot run here; \(CoreDataMappingError.stageAdvice(from: source.version, to: destination.version))",
                                           file: file, mapping: entityMapping.name, entity: entityMapping.destinationEntity ?? entityMapping.sourceEntity)
            }
            guard let s = entityMapping.sourceEntity, let d = entityMapping.destinationEntity else { continue }  // add / remove: the lightweight hop does it
            guard source.entity(named: s) != nil else {
                throw CoreDataMappingError(.untranslatable, "the source version '\(source.version)' has no entity '\(s)'; the mapping model does not belong to this hop", file: file, mapping: entityMapping.name, entity: s)
            }
            guard destination.entity(named: d) != nil else {
                throw CoreDataMappingError(.untranslatable, "the destination version '\(destination.version)' has no entity '\(d)'; the mapping model does not belong to this hop", file: file, mapping: entityMapping.name, entity: d)
            }
            let carried = matching.sourceEntity[d] == s
            var assignments: [(column: String, value: String)] = []
            for property in entityMapping.attributeMappings {
                guard let attribute = destination.allAttributes(of: d).first(where: { $0.name == property.name }),
                      let column = destinationLayout.entity(d)?.attributeColumns[property.name]?.column else {
                    throw CoreDataMappingError(.untranslatable, "'\(d)' has no attribute '\(property.name)' in '\(destination.version)'", file: file, mapping: entityMapping.name, entity: d, property: property.name)
                }
                let expression = try parse(property, entityMapping, d)
                if carried, case .source(let path) = expression, path.count == 1, sourceAttribute(carriedTo: attribute, of: d) == path[0] { continue }
                assignments.append((column, try sqlValue(expression, sourceEntity: s, carried: carried, mapping: entityMapping, entity: d, property: property)))
            }
            var linked: [String] = []
            for property in entityMapping.relationshipMappings {
                linked += try relationshipStatements(property, mapping: entityMapping, sourceEntity: s, destinationEntity: d, carried: carried, assignments: &assignments)
            }
            let table = destinationLayout.table(forEntity: d)!.name
            let layout = destinationLayout.entity(d)!
            if carried {
                if !assignments.isEmpty {
                    let filter = layout.hasEntityColumn ? " WHERE \(quoteIdentifier(StorageLayout.entityColumn)) = \(sqlLiteral(d))" : ""
                    sql.append("UPDATE \(quoteIdentifier(table)) SET " + assignments.map { "\(quoteIdentifier($0.column)) = \($0.value)" }.joined(separator: ", ") + filter + ";")
                }
            } else {
                let sourceTable = sourceLayout.table(forEntity: s)!.name
                var columns = [StorageLayout.primaryKeyColumn, StorageLayout.versionColumn]
                var values = [StorageLayout.primaryKeyColumn, "1"]
                if layout.hasEntityColumn { columns.append(StorageLayout.entityColumn); values.append(sqlLiteral(d)) }
                for (column, value) in assignments { columns.append(column); values.append(value) }
                let filter = sourceLayout.entity(s)!.hasEntityColumn ? " WHERE \(quoteIdentifier(StorageLayout.entityColumn)) = \(sqlLiteral(s))" : ""
                sql.append("INSERT INTO \(quoteIdentifier(table)) (\(columns.map(quoteIdentifier).joined(separator: ", "))) SELECT \(values.map { $0 == StorageLayout.primaryKeyColumn ? quoteIdentifier($0) : $0 }.joined(separator: ", ")) FROM \(quoteIdentifier(sourceTable))\(filter);")
            }
            sql += linked
        }
        return sql
    }

    // MARK: - Expressions

    private func parse(_ property: CoreDataMappingModel.PropertyMapping, _ entityMapping: CoreDataMappingModel.EntityMapping, _ entity: String) throws(CoreDataMappingError) -> CoreDataMappingExpression {
        guard let text = property.expression else {
            if property.archivedOnly {
                throw CoreDataMappingError(.untranslatable, "its value expression is stored only archived (valueexpressiondata), which cannot be read here; \(CoreDataMappingError.stageAdvice(from: source.version, to: destination.version))",
                                           file: file, mapping: entityMapping.name, entity: entity, property: property.name)
            }
            return .source([property.name])  // Xcode's default: the source property of the same name
        }
        do {
            return try CoreDataMappingExpression.parse(text)
        } catch {
            throw CoreDataMappingError(.untranslatable, "the expression cannot be read: \(error.reason); \(CoreDataMappingError.stageAdvice(from: source.version, to: destination.version))",
                                       file: file, mapping: entityMapping.name, entity: entity, property: property.name, expression: text)
        }
    }

    /// The source attribute the lightweight hop carries into `attribute` of `entity`, if any.
    private func sourceAttribute(carriedTo attribute: Attribute, of entity: String) -> String? {
        (try? matching.sourceProperty(entity: entity, name: attribute.name, renamingIdentifier: attribute.renamingIdentifier, kind: .attribute))??.name
    }

    /// The column holding source attribute `name` of `sourceEntity` during `didMigrate`.
    private func sourceColumn(_ name: String, sourceEntity: String, carried: Bool) -> String? {
        guard let column = sourceLayout.entity(sourceEntity)?.column(forKeyPath: name) else { return nil }
        guard carried, let d = matching.destinationEntity[sourceEntity] else { return column }
        // Carried into a destination property: its column now; else still on disk under its source name.
        for attribute in destination.allAttributes(of: d) where sourceAttribute(carriedTo: attribute, of: d) == name {
            return destinationLayout.entity(d)?.attributeColumns[attribute.name]?.column ?? column
        }
        for relationship in destination.allRelationships(of: d) where !relationship.isToMany {
            if (try? matching.sourceProperty(entity: d, name: relationship.name, renamingIdentifier: relationship.renamingIdentifier, kind: .relationship))??.name == name {
                return destinationLayout.entity(d)?.column(forKeyPath: relationship.name) ?? column
            }
        }
        return column
    }

    private func sqlValue(_ expression: CoreDataMappingExpression, sourceEntity: String, carried: Bool, mapping: CoreDataMappingModel.EntityMapping,
                          entity: String, property: CoreDataMappingModel.PropertyMapping) throws(CoreDataMappingError) -> String {
        func refuse(_ why: String) -> CoreDataMappingError {
            CoreDataMappingError(.untranslatable, "\(why); Strata translates $source.<attribute>, constants, nil and FUNCTION with uppercaseString, lowercaseString, stringByAppendingString:, valueForKey:, description, stringValue, integerValue, doubleValue, boolValue (docs/CoreDataImport.md) — \(CoreDataMappingError.stageAdvice(from: source.version, to: destination.version))",
                                 file: file, mapping: mapping.name, entity: entity, property: property.name, expression: property.expression ?? "$source.\(property.name)")
        }
        func column(_ name: String) throws(CoreDataMappingError) -> String {
            guard let column = sourceColumn(name, sourceEntity: sourceEntity, carried: carried) else {
                throw refuse("the source entity '\(sourceEntity)' of '\(source.version)' has no attribute '\(name)'")
            }
            return quoteIdentifier(column)
        }
        func value(_ e: CoreDataMappingExpression) throws(CoreDataMappingError) -> String {
            switch e {
            case .source(let path):
                guard path.count == 1 else { throw refuse(path.isEmpty ? "$source alone is an object, not a value" : "the key path $source.\(path.joined(separator: ".")) goes through a relationship") }
                return try column(path[0])
            case .string(let s): return sqlLiteral(s)
            case .number(let n): return n
            case .null: return "NULL"
            case .variable(let name): throw refuse("$\(name) is a migration-manager or policy variable")
            case .function(let target, let selector, let arguments):
                if case .source([]) = target, selector == "valueForKey:" || selector == "valueForKeyPath:", arguments.count == 1, case .string(let key) = arguments[0] {
                    return try value(.source(key.split(separator: ".").map(String.init)))
                }
                let t = try value(target)
                switch (selector, arguments.count) {
                case ("uppercaseString", 0): return "upper(\(t))"
                case ("lowercaseString", 0): return "lower(\(t))"
                case ("stringByAppendingString:", 1): return "(\(t) || \(try value(arguments[0])))"
                case ("description", 0), ("stringValue", 0): return "CAST(\(t) AS TEXT)"
                case ("integerValue", 0), ("intValue", 0), ("longLongValue", 0): return "CAST(\(t) AS INTEGER)"
                case ("doubleValue", 0), ("floatValue", 0): return "CAST(\(t) AS REAL)"
                case ("boolValue", 0): return "(CASE WHEN \(t) IS NULL THEN NULL WHEN \(t) THEN 1 ELSE 0 END)"
                default: throw refuse("FUNCTION(…, \"\(selector)\") has no SQL equivalent here")
                }
            }
        }
        return try value(expression)
    }

    // MARK: - Relationships

    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "Name", $source.rel)`.
    private func relationshipStatements(_ property: CoreDataMappingModel.PropertyMapping, mapping entityMapping: CoreDataMappingModel.EntityMapping,
                                        sourceEntity s: String, destinationEntity d: String, carried: Bool,
                                        assignments: inout [(column: String, value: String)]) throws(CoreDataMappingError) -> [String] {
        let text = property.expression
        func refuse(_ why: String) -> CoreDataMappingError {
            CoreDataMappingError(.untranslatable, "\(why); \(CoreDataMappingError.stageAdvice(from: source.version, to: destination.version))",
                                 file: file, mapping: entityMapping.name, entity: d, property: property.name, expression: text)
        }
        guard let relationship = destination.allRelationships(of: d).first(where: { $0.name == property.name }) else {
            throw refuse("'\(d)' has no relationship '\(property.name)' in '\(destination.version)'")
        }
        var sourceName = property.name
        var through: String?
        if text != nil {
            let expression = try parse(property, entityMapping, d)
            guard case .function(.variable("manager"), let selector, let arguments) = expression,
                  selector == "destinationInstancesForEntityMappingNamed:sourceInstances:", arguments.count == 2,
                  case .string(let name) = arguments[0], case .source(let path) = arguments[1], path.count == 1 else {
                throw refuse("a relationship is translated only from FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"<mapping>\", $source.<relationship>)")
            }
            sourceName = path[0]
            through = name
        }
        guard let sourceRelationship = source.allRelationships(of: s).first(where: { $0.name == sourceName }) else {
            throw refuse("the source entity '\(s)' of '\(source.version)' has no relationship '\(sourceName)'")
        }
        if let through {
            guard let other = mapping.entityMappings.first(where: { $0.name == through }) else {
                throw refuse("the mapping model has no entity mapping named '\(through)'")
            }
            guard other.destinationEntity == relationship.destination || destination.ancestry(of: relationship.destination).contains(where: { $0.name == other.destinationEntity }) || destination.hierarchy(of: relationship.destination).contains(where: { $0.name == other.destinationEntity }) else {
                throw refuse("entity mapping '\(through)' maps to '\(other.destinationEntity ?? "nothing")', not to '\(relationship.destination)', the destination of '\(d).\(property.name)'")
            }
        }
        // Already carried by the lightweight hop?
        if carried, (try? matching.sourceProperty(entity: d, name: relationship.name, renamingIdentifier: relationship.renamingIdentifier, kind: .relationship))??.name == sourceName {
            return []
        }
        let inverse = destination.inverse(of: relationship)
        switch (relationship.isToMany, sourceRelationship.isToMany) {
        case (false, false):
            guard let from = sourceColumn(sourceName, sourceEntity: s, carried: carried), let to = destinationLayout.entity(d)?.column(forKeyPath: relationship.name) else {
                throw refuse("the to-one '\(s).\(sourceName)' has no column")
            }
            assignments.append((to, quoteIdentifier(from)))
            guard let inverse, !inverse.isToMany,
                  let inverseColumn = destinationLayout.entity(relationship.destination)?.column(forKeyPath: inverse.name),
                  let inverseTable = destinationLayout.table(forEntity: relationship.destination)?.name,
                  let table = destinationLayout.table(forEntity: d)?.name else { return [] }
            // A one-to-one: the other side follows.
            return ["UPDATE \(quoteIdentifier(inverseTable)) SET \(quoteIdentifier(inverseColumn)) = (SELECT o.\(quoteIdentifier(StorageLayout.primaryKeyColumn)) FROM \(quoteIdentifier(table)) o WHERE o.\(quoteIdentifier(to)) = \(quoteIdentifier(inverseTable)).\(quoteIdentifier(StorageLayout.primaryKeyColumn)) ORDER BY o.\(quoteIdentifier(StorageLayout.primaryKeyColumn)) LIMIT 1);"]
        case (true, true):
            // A to-many kept on the other side's to-one: fill that to-one from the source's.
            guard let inverse, !inverse.isToMany, let sourceInverse = source.inverse(of: sourceRelationship), !sourceInverse.isToMany,
                  let to = destinationLayout.entity(relationship.destination)?.column(forKeyPath: inverse.name),
                  let table = destinationLayout.table(forEntity: relationship.destination)?.name else {
                throw refuse("a many-to-many (or inverse-less to-many) relationship is not translated")
            }
            let sourceDestination = matching.destinationEntity[sourceRelationship.destination] == relationship.destination
            guard let from = sourceColumn(sourceInverse.name, sourceEntity: sourceRelationship.destination, carried: sourceDestination) else {
                throw refuse("the to-one '\(sourceRelationship.destination).\(sourceInverse.name)' has no column")
            }
            if from == to { return [] }
            return ["UPDATE \(quoteIdentifier(table)) SET \(quoteIdentifier(to)) = \(quoteIdentifier(from));"]
        default:
            throw refuse("'\(d).\(property.name)' and '\(s).\(sourceName)' differ in cardinality (to-one and to-many)")
        }
    }
}
