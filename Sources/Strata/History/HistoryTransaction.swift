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
