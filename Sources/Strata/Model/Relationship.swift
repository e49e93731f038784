import Foundation

/// What happens to related objects when an object is deleted (Core Data's delete rules).
public enum DeleteRule: String, Sendable, Hashable, Codable, CaseIterable {
    /// Remove the deleted object from the inverse relationship of its related objects.
    case nullify
    /// Delete the related objects too.
    case cascade
    /// Refuse to delete while the relationship is not empty.
    case deny
    /// Leave related objects alone; the inverse is not maintained.
    case noAction

    /// The rule named as model files write it (`nullify`, `cascade`, `deny`, `noAction`).
    public init?(modelName: String) {
        switch modelName.lowercased().replacingOccurrences(of: " ", with: "") {
        case "nullify": self = .nullify
        case "cascade": self = .cascade
        case "deny": self = .deny
        case "noaction", "no_action": self = .noAction
        default: return nil
        }
    }
}

/// A relationship from one entity to another: to-one or to-many, ordered or not, with an
/// optional inverse.
///
/// Storage (see the storage mapping article):
/// - a to-one relationship is a column `<name>_id` on its entity's table;
/// - a to-many relationship whose inverse is to-one uses the inverse's column on the
///   destination table; when ordered, the destination table also keeps `<inverse>_order`;
/// - a many-to-many relationship, or a to-many with no inverse, uses a join table with
///   `source_id`, `target_id` and, when ordered, `source_order` / `target_order`.
public struct Relationship: Sendable, Hashable {
    /// The relationship's name.
    public var name: String
    /// The destination entity's name.
    public var destination: String
    /// The inverse relationship's name on the destination entity.
    public var inverse: String?
    /// Whether it relates to many objects.
    public var isToMany: Bool
    /// Whether a to-many keeps its order.
    public var isOrdered: Bool
    /// Whether it may be empty (nil for a to-one).
    public var isOptional: Bool
    /// What deleting the owner does to the related objects.
    public var deleteRule: DeleteRule
    /// Minimum number of related objects (to-many), 0 for none.
    public var minCount: Int
    /// Maximum number of related objects (to-many), 0 for unbounded.
    public var maxCount: Int
    /// The name it had in an earlier version, for migration.
    public var renamingIdentifier: String?
    /// Free-form metadata (not part of the checksum).
    public var userInfo: [String: String]

    /// A relationship to `destination`; to-one, optional, nullify unless told otherwise.
    public init(
        _ name: String, destination: String, inverse: String? = nil, toMany: Bool = false,
        ordered: Bool = false, isOptional: Bool = true, deleteRule: DeleteRule = .nullify,
        minCount: Int = 0, maxCount: Int = 0, renamingIdentifier: String? = nil,
        userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.destination = destination
        self.inverse = inverse
        self.isToMany = toMany
        self.isOrdered = ordered
        self.isOptional = isOptional
        self.deleteRule = deleteRule
        self.minCount = minCount
        self.maxCount = maxCount
        self.renamingIdentifier = renamingIdentifier
        self.userInfo = userInfo
    }
}
