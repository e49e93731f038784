import Foundation
import GRDB

/// Checks that both sides of every one-to-one relationship agree. Strata stores a one-to-one
/// on both sides (`Pet.owner_id` and `User.pet_id`); the object layer keeps them in step, but
/// SQL written by hand (a custom stage, a repair) may set one side only, which leaves the
/// other side's objects seeing nil or another object. `stratactl inspect --check` reports
/// such mismatches, and a custom stage that leaves one is rolled back.
public enum InverseConsistency {
    /// Objects of one side of a one-to-one whose related object does not point back.
    public struct Mismatch: Sendable, Hashable, CustomStringConvertible {
        /// The entity declaring the relationship, and the relationship.
        public var entity: String
        /// The relationship whose values disagree with its inverse.
        public var relationship: String
        /// The destination entity and its inverse relationship.
        public var inverseEntity: String
        /// The inverse relationship.
        public var inverse: String
        /// Objects of `entity` whose `relationship` names an object whose `inverse` is not them.
        public var count: Int64

        /// `2 Pet object(s) have an owner whose pet is not them (one-to-one Pet.owner ↔ User.pet disagrees)`.
        public var description: String {
            "\(count) \(entity) object(s) have a \(relationship) whose \(inverse) is not them (the two sides of the one-to-one \(entity).\(relationship) ↔ \(inverseEntity).\(inverse) disagree; set both sides)"
        }
    }

    /// Every one-to-one of `model` whose sides disagree in `db`, with counts (both directions).
    public static func mismatches(of model: ObjectModel, in db: Database) throws -> [Mismatch] {
        let layout = StorageLayout(model: model)
        let pk = quoteIdentifier(StorageLayout.primaryKeyColumn)
        var result: [Mismatch] = []
        for entity in model.entities.sorted(by: { $0.name < $1.name }) {
            for relationship in entity.relationships where !relationship.isToMany {
                guard let inverse = model.inverse(of: relationship), !inverse.isToMany,
                      let own = layout.entity(entity.name), let column = own.column(forKeyPath: relationship.name),
                      let other = layout.entity(relationship.destination), let inverseColumn = other.column(forKeyPath: inverse.name),
                      try db.tableExists(own.table), try db.tableExists(other.table) else { continue }
                var filter = ""
                if own.hasEntityColumn {
                    filter = " AND e.\(quoteIdentifier(StorageLayout.entityColumn)) IN (\(own.entityNames.map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" }.joined(separator: ", ")))"
                }
                let sql = """
                    SELECT count(*) FROM \(quoteIdentifier(own.table)) e WHERE e.\(quoteIdentifier(column)) IS NOT NULL\(filter)
                    AND NOT EXISTS (SELECT 1 FROM \(quoteIdentifier(other.table)) o WHERE o.\(pk) = e.\(quoteIdentifier(column)) AND o.\(quoteIdentifier(inverseColumn)) = e.\(pk))
                    """
                let count = try Int64.fetchOne(db, sql: sql) ?? 0
                if count > 0 {
                    result.append(Mismatch(entity: entity.name, relationship: relationship.name, inverseEntity: relationship.destination, inverse: inverse.name, count: count))
                }
            }
        }
        return result
    }
}
