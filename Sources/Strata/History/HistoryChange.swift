import Foundation

/// One object changed by a ``HistoryTransaction`` (Core Data's `NSPersistentHistoryChange`).
public struct HistoryChange: Sendable, Hashable {
    /// What happened to the object.
    public enum Kind: Int, Sendable, Hashable, Codable, CustomStringConvertible {
        /// The object was inserted.
        case insert = 0
        /// Attributes or relationships of the object changed.
        case update = 1
        /// The object was deleted.
        case delete = 2

        /// `insert`, `update` or `delete`.
        public var description: String {
            switch self {
            case .insert: "insert"
            case .update: "update"
            case .delete: "delete"
            }
        }
    }

    /// The object's entity, by its name in the current model (renamed with it).
    public var entity: String
    /// The object's primary key.
    public var primaryKey: Int64
    /// Insert, update or delete.
    public var kind: Kind
    /// For an update, the names of the attributes (composite attributes by their top-level
    /// name) and relationships that changed, sorted; empty for inserts and deletes.
    public var properties: [String]
    /// For a delete, the values of the attributes marked `preserveAfterDeletion`, by name.
    public var tombstone: [String: Value]?

    /// The object's identifier.
    public var objectID: ObjectID { ObjectID(entityName: entity, primaryKey: primaryKey) }

    /// Memberwise initializer.
    public init(entity: String, primaryKey: Int64, kind: Kind, properties: [String] = [], tombstone: [String: Value]? = nil) {
        self.entity = entity
        self.primaryKey = primaryKey
        self.kind = kind
        self.properties = properties
        self.tombstone = tombstone
    }
}
