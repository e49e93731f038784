import Foundation

// The change history of io.strata.Store: the `History` and `Observe` methods (docs/History.md);
// the `Change` and `Transaction` types are generated in StrataStore+Types.swift.

extension StrataStore {
    // MARK: - Methods

    /// The transactions after token `since`, oldest first, at most `limit`; continue from
    /// `next` until it equals `latest`.
    public enum History: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = StrataStore
        /// The name on the wire.
        public static let name = "History"

        /// What the method takes.
        public struct Parameters: Codable, Sendable, Hashable {
            /// The store's name (as configured).
            public var store: String
            /// The token to read after (0: from the oldest kept).
            public var since: Int64
            /// Only transactions that changed these entities (gaps always).
            public var entities: [String]?
            /// The most transactions to return (1 to 10000).
            public var limit: Int64

            /// Memberwise initializer.
            public init(store: String, since: Int64, entities: [String]? = nil, limit: Int64) {
                self.store = store
                self.since = since
                self.entities = entities
                self.limit = limit
            }
        }

        /// What the method replies.
        public struct Reply: Codable, Sendable, Hashable {
            /// The transactions, oldest first.
            public var transactions: [Transaction]
            /// The token to pass as `since` for the next page.
            public var next: Int64
            /// The store's latest token.
            public var latest: Int64
            /// Memberwise initializer.
            public init(transactions: [Transaction], next: Int64, latest: Int64) {
                self.transactions = transactions
                self.next = next
                self.latest = latest
            }
        }
    }

    /// Streams transactions with `more`: a first reply without a transaction (where the
    /// observation starts), then each transaction after `since` as they commit.
    public enum Observe: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = StrataStore
        /// The name on the wire.
        public static let name = "Observe"

        /// What the method takes.
        public struct Parameters: Codable, Sendable, Hashable {
            /// The store's name (as configured).
            public var store: String
            /// Only changes of these entities (gaps always).
            public var entities: [String]?
            /// A predicate the changed objects must match now (exactly one entity; deletes pass).
            public var predicate: String?
            /// The token to start after (nil: from now on).
            public var since: Int64?

            /// Memberwise initializer.
            public init(store: String, entities: [String]? = nil, predicate: String? = nil, since: Int64? = nil) {
                self.store = store
                self.entities = entities
                self.predicate = predicate
                self.since = since
            }
        }

        /// What the method replies.
        public struct Reply: Codable, Sendable, Hashable {
            /// The transaction (nil in the first reply).
            public var transaction: Transaction?
            /// The token to resume from: the transaction's, or where the observation starts.
            public var token: Int64
            /// Memberwise initializer.
            public init(transaction: Transaction?, token: Int64) {
                self.transaction = transaction
                self.token = token
            }
        }
    }
}
