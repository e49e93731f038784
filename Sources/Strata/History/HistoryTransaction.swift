import Foundation

/// One committed transaction of a store's change history (Core Data's
/// `NSPersistentHistoryTransaction`): its token, when, who, and the objects it changed.
///
/// ```swift
/// for transaction in try store.history(since: lastToken).transactions {
///     for change in transaction.changes where change.entity == "Aircraft" { refresh(change.objectID) }
///     lastToken = transaction.token
/// }
/// ```
public struct HistoryTransaction: Sendable, Hashable {
    /// What a history transaction records.
    public enum Kind: Int, Sendable, Hashable, Codable {
        /// A save of objects: ``changes`` lists them.
        case objects = 0
        /// Another process wrote the store without recording history (raw SQL, an old Strata):
        /// what changed is unknown. A follower that sees a gap refetches what it caches.
        case gap = 1
    }

    /// The transaction's token: grows with every transaction, never reused.
    public var token: Int64
    /// When it committed.
    public var date: Date
    /// Objects or gap.
    public var kind: Kind
    /// The operating-system user that wrote it (a daemon client's peer user), when known.
    public var user: String?
    /// The name the writer gave (``ObjectContext/transactionAuthor``), when any.
    public var author: String?
    /// The objects changed, in the order the save wrote them (deletes, inserts, updates).
    public var changes: [HistoryChange]

    /// Memberwise initializer.
    public init(token: Int64, date: Date, kind: Kind, user: String?, author: String?, changes: [HistoryChange]) {
        self.token = token
        self.date = date
        self.kind = kind
        self.user = user
        self.author = author
        self.changes = changes
    }
}

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

/// A page of history: the transactions, and the token to continue from.
public struct HistoryPage: Sendable, Hashable {
    /// The transactions after the `since` token, oldest first.
    public var transactions: [HistoryTransaction]
    /// The token to pass as `since` for the next page: the last transaction read (matching a
    /// filter or not); the `since` given when nothing followed.
    public var next: Int64
    /// The store's latest token when the page was read.
    public var latest: Int64
}
