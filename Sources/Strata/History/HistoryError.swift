import Foundation

/// A request for change history that cannot be answered: every error names the store and
/// says what to do.
public struct HistoryError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, for programs.
    public enum Code: String, Sendable, Hashable {
        /// The `since` token is older than the retained history: transactions after it were
        /// purged. Refetch what you follow, then continue from ``HistoryError/latest``.
        case expired
        /// The token is negative, or newer than any transaction of the store.
        case invalidToken
        /// An entity filter names an entity the model does not have and the history never had.
        case unknownEntity
        /// A limit outside ``PersistentStore/historyPageLimits``.
        case limitOutOfRange
        /// The store could not be read or written (``storeError``).
        case store
    }

    /// What went wrong.
    public var code: Code
    /// The store file's path.
    public var path: String
    /// What went wrong and what to do.
    public var reason: String
    /// The token concerned, when one.
    public var token: Int64?
    /// The oldest token still retained minus one (the purge horizon), for ``Code/expired``.
    public var purgedThrough: Int64?
    /// The store's latest token, when known.
    public var latest: Int64?
    /// The entity concerned, for ``Code/unknownEntity``.
    public var entity: String?
    /// The underlying store error, for ``Code/store``.
    public var storeError: StoreError?

    /// An error about the history of the store at `path`.
    public init(_ code: Code, path: String, _ reason: String, token: Int64? = nil, purgedThrough: Int64? = nil,
                latest: Int64? = nil, entity: String? = nil, storeError: StoreError? = nil) {
        self.code = code
        self.path = path
        self.reason = reason
        self.token = token
        self.purgedThrough = purgedThrough
        self.latest = latest
        self.entity = entity
        self.storeError = storeError
    }

    /// The message: path, what is wrong, and what to do.
    public var description: String { "\(path): \(reason)" }
}
