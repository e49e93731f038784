import Foundation
import GRDB

/// Checks the objects stored in a database against a model's rules with SQL, without loading
/// them: non-optional attributes (and composite leaves of non-optional composites) without a
/// value, non-optional to-one relationships without a related object, to-many relationships
/// outside their `minCount`…`maxCount`. Abstract entities are checked through their
/// sub-entities' rows.
///
/// A custom migration stage's result is validated this way before its transaction commits;
/// `stratactl import-coredata` reports what it finds in the imported objects.
///
/// ```swift
/// for violation in try StoreValidation.violations(of: model, in: db) {
///     print(violation)   // 3 'Aircraft' object(s) have no value for non-optional 'tailNumber'
/// }
/// ```
public enum StoreValidation {
    /// Objects of one entity that break one rule.
    public struct Violation: Sendable, Hashable, CustomStringConvertible {
        /// The entity whose objects break the rule.
        public var entity: String
        /// The property concerned.
        public var property: String
        /// The rule broken.
        public var rule: ObjectRequirement.Rule
        /// How many objects break it.
        public var count: Int64

        /// `2 'Aircraft' objects have no value for non-optional 'tailNumber'`.
        public var description: String {
            let objects = count == 1 ? "1 '\(entity)' object" : "\(count) '\(entity)' objects"
            let have = count == 1 ? "has" : "have"
            switch rule {
            case .requiredAttribute: return "\(objects) \(have) no value for non-optional '\(property)'"
            case .requiredToOne: return "\(objects) \(have) no related object in non-optional to-one '\(property)'"
            case .toManyCount(let minimum, let maximum):
                let range = maximum > 0 ? "\(minimum)...\(maximum)" : "at least \(minimum)"
                return "\(objects) \(count == 1 ? "holds" : "hold") a number of related objects outside \(range) in to-many '\(property)'"
            }
        }
    }

    /// Every rule of `model` that stored objects break, with how many objects break it; empty
    /// when every object is valid. `db` must have `model`'s storage layout (extra tables and
    /// columns are ignored).
    public static func violations(of model: ObjectModel, in db: Database) throws -> [Violation] {
        let layout = StorageLayout(model: model)
        var result: [Violation] = []
        for entity in model.entities {
            guard let entityLayout = layout.entity(entity.name), try db.tableExists(entityLayout.table) else { continue }
            let table = quoteIdentifier(entityLayout.table)
            let filter = entityLayout.hasEntityColumn
                ? "\(quoteIdentifier(StorageLayout.entityColumn)) IN (\(entityLayout.entityNames.map(sqlLiteral).joined(separator: ", ")))" : "1"
            // Attributes declared on this entity: one scan for all of them.
            let required = requiredKeyPaths(of: entity).compactMap { keyPath in entityLayout.attributeColumns[keyPath].map { (keyPath, $0.column) } }
            if !required.isEmpty {
                let sums = required.map { "coalesce(sum(\(quoteIdentifier($0.1)) IS NULL), 0)" }.joined(separator: ", ")
                if let row = try Row.fetchOne(db, sql: "SELECT \(sums) FROM \(table) WHERE \(filter)") {
                    for (i, (keyPath, _)) in required.enumerated() {
                        let count: Int64 = row[i]
                        if count > 0 { result.append(Violation(entity: entity.name, property: keyPath, rule: .requiredAttribute, count: count)) }
                    }
                }
            }
            for relationship in entity.relationships {
                guard let storage = entityLayout.relationships[relationship.name] else { continue }
                let pk = "o.\(quoteIdentifier(StorageLayout.primaryKeyColumn))"
                let links: String
                switch storage {
                case .foreignKey(let column, _): links = "(o.\(quoteIdentifier(column)) IS NOT NULL)"
                case .inverseForeignKey(let t, let column, _): links = "(SELECT count(*) FROM \(quoteIdentifier(t)) AS l WHERE l.\(quoteIdentifier(column)) = \(pk))"
                case .joinTable(let name, let own, _, _): links = "(SELECT count(*) FROM \(quoteIdentifier(name)) AS l WHERE l.\(quoteIdentifier(own)) = \(pk))"
                }
                let rule: ObjectRequirement.Rule
                let condition: String
                if !relationship.isToMany {
                    guard !relationship.isOptional else { continue }
                    rule = .requiredToOne
                    condition = "= 0"
                } else {
                    let minimum = max(relationship.minCount, relationship.isOptional ? 0 : 1)
                    guard minimum > 0 || relationship.maxCount > 0 else { continue }
                    rule = .toManyCount(minimum: minimum, maximum: relationship.maxCount)
                    condition = relationship.maxCount > 0 ? "NOT BETWEEN \(minimum) AND \(relationship.maxCount)" : "< \(minimum)"
                }
                let count = try Int64.fetchOne(db, sql: "SELECT count(*) FROM \(table) AS o WHERE \(filter) AND \(links) \(condition)") ?? 0
                if count > 0 { result.append(Violation(entity: entity.name, property: relationship.name, rule: rule, count: count)) }
            }
        }
        return result
    }

    /// Keypaths of the non-optional stored attributes declared on `entity`, and of the
    /// non-optional leaves of its non-optional composites.
    static func requiredKeyPaths(of entity: Entity) -> [String] {
        var keyPaths = entity.attributes.filter { !$0.isTransient && !$0.isOptional }.map(\.name)
        func leaves(_ composite: CompositeAttribute, path: [String]) {
            guard !composite.isOptional else { return }
            for element in composite.elements {
                switch element {
                case .attribute(let a) where !a.isOptional: keyPaths.append((path + [a.name]).joined(separator: "."))
                case .attribute: continue
                case .composite(let c): leaves(c, path: path + [c.name])
                }
            }
        }
        for composite in entity.composites { leaves(composite, path: [composite.name]) }
        return keyPaths
    }
}
