import Foundation
import GRDB

/// What the objects already in a store must satisfy for a migration hop to leave them valid:
/// a non-optional attribute without a default that existing objects do not have yet, a
/// non-optional to-one, a to-many whose `minCount` (or `maxCount`) existing objects do not
/// meet. Inference records one requirement per such change instead of refusing it outright:
/// whether the hop is refused depends on the data.
///
/// Before anything is written, a lightweight hop counts the existing objects that would fail
/// (``MigrationPlan/checkRequirements(in:)``) and is refused, naming the entity, the
/// property and how many objects, when any would. A custom stage may fill the values instead:
/// then the hop's result is validated (``StoreValidation``) before its transaction commits.
public struct ObjectRequirement: Sendable, Hashable, Codable {
    /// The rule existing objects must meet after the hop.
    public enum Rule: Sendable, Hashable, Codable {
        /// A non-optional attribute (or composite leaf) without a value.
        case requiredAttribute
        /// A non-optional to-one relationship without a related object.
        case requiredToOne
        /// A to-many relationship holding fewer than `minimum` or more than `maximum` (0:
        /// unbounded) related objects.
        case toManyCount(minimum: Int, maximum: Int)
    }

    /// The destination entity whose objects (sub-entities included) must satisfy the rule.
    public var entity: String
    /// The attribute keypath or relationship name.
    public var property: String
    /// What the objects must satisfy.
    public var rule: Rule
    /// The model change that introduces the rule (`add non-optional attribute`, `optional -> non-optional`, …).
    public var change: String
    /// An SQL query on the store **before** the hop (its source schema) answering one integer:
    /// how many existing objects would break the rule.
    public var violationCountSQL: String

    /// A requirement on `entity.property`, counted by `violationCountSQL`.
    public init(entity: String, property: String, rule: Rule, change: String, violationCountSQL: String) {
        self.entity = entity
        self.property = property
        self.rule = rule
        self.change = change
        self.violationCountSQL = violationCountSQL
    }

    /// `'Aircraft.serial': a value is required (add non-optional attribute)`.
    public var summary: String {
        "'\(entity).\(property)': \(ruleText) (\(change))"
    }

    /// What an object must have, in words.
    public var ruleText: String {
        switch rule {
        case .requiredAttribute: return "a value is required"
        case .requiredToOne: return "a related object is required"
        case .toManyCount(let minimum, let maximum):
            if maximum > 0 { return minimum > 0 ? "\(minimum)...\(maximum) related objects are required" : "at most \(maximum) related objects are allowed" }
            return "at least \(minimum) related object(s) are required"
        }
    }

    /// What an object that breaks the rule lacks, in words, for `count` objects.
    func violationText(count: Int64) -> String {
        let objects = "\(count) existing '\(entity)' object\(count == 1 ? "" : "s")"
        switch rule {
        case .requiredAttribute: return "\(objects) would have no value for non-optional '\(property)'"
        case .requiredToOne: return "\(objects) would have no related object in non-optional to-one '\(property)'"
        case .toManyCount: return "\(objects) would break the count of to-many '\(property)' (\(ruleText))"
        }
    }

    /// Counts the existing objects that would break the rule (on the hop's source schema).
    public func violationCount(in db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: violationCountSQL) ?? 0
    }
}

extension MigrationPlan {
    /// Counts, on the store before the hop, the existing objects each requirement would leave
    /// invalid, and throws for the first requirement that any object breaks. Read-only.
    ///
    /// - Throws: ``MigrationError`` (`missingDefault` for attributes, `invalidObjects` for
    ///   relationships) naming the entity, the property and how many objects, and what to do.
    public func checkRequirements(in db: Database) throws {
        for requirement in requirements {
            let count = try requirement.violationCount(in: db)
            guard count > 0 else { continue }
            let fix: String
            switch requirement.rule {
            case .requiredAttribute:
                fix = "give '\(requirement.property)' a default value, keep it optional, or add a custom stage for this hop that fills it (see docs/Migration.md)"
            case .requiredToOne:
                fix = "keep '\(requirement.property)' optional, or add a custom stage for this hop that links every object (see docs/Migration.md)"
            case .toManyCount:
                fix = "relax the count of '\(requirement.property)', or add a custom stage for this hop that fixes the links (see docs/Migration.md)"
            }
            throw MigrationError(requirement.rule == .requiredAttribute ? .missingDefault : .invalidObjects,
                                 "\(requirement.violationText(count: count)) after the migration, so the next save of any of them would fail; nothing was changed. To migrate, \(fix)",
                                 sourceVersion: sourceVersion, destinationVersion: destinationVersion,
                                 entity: requirement.entity, property: requirement.property, change: requirement.change)
        }
    }
}
