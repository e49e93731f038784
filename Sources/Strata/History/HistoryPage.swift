import Foundation

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
