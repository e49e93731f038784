import Foundation

/// A store's change-history settings (`history:` in a store's entry of stratad.yaml):
///
/// ```yaml
/// history: {keep: 7d, max_transactions: 100000}
/// ```
///
/// The idle scheduler purges what is older than `keep` or beyond the newest
/// `max_transactions`, in bounded batches (``batchSize`` changes per write transaction).
public struct HistoryRetention: Sendable, Hashable {
    /// Whether saves record history (`record`, default true).
    public var record: Bool
    /// How long transactions are kept (`keep`); nil keeps them regardless of age.
    public var keep: Duration?
    /// How many of the newest transactions are kept (`max_transactions`); nil keeps any number.
    public var maxTransactions: Int?

    /// The accepted `keep`: one minute to ten years.
    public static let keepRange: ClosedRange<Duration> = .seconds(60) ... .seconds(10 * 365 * 86_400)
    /// The accepted `max_transactions`.
    public static let maxTransactionsRange: ClosedRange<Int> = 1...1_000_000_000
    /// Changes (and transactions) one purge batch removes under the write lock.
    public static let batchSize = 1_000

    /// Whether anything is ever purged.
    public var purges: Bool { keep != nil || maxTransactions != nil }

    /// Memberwise initializer: record, keep everything.
    public init(record: Bool = true, keep: Duration? = nil, maxTransactions: Int? = nil) {
        self.record = record
        self.keep = keep
        self.maxTransactions = maxTransactions
    }
}
