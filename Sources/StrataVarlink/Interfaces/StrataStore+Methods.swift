import Foundation

// Generated from varlink/io.strata.Store.varlink and varlink/io.strata.Store.swift.json:
// the methods (`method …` in the IDL), each with its Parameters and Reply. Do not edit: change those files and run
// scripts/generate-varlink-definitions.sh (InterfaceDefinitionTests checks it was run).

extension StrataStore {
    /// The interface's methods.
    public static let methods: [any VarlinkMethod.Type] = [
        Fetch.self, Count.self, Insert.self, Update.self, Delete.self, Batch.self, History.self, Observe.self,
    ]

    /// Objects of an entity matching a predicate (NSPredicate-style format with `%@`
    /// arguments), sorted by `key` or `key:desc` descriptors.
    public enum Fetch: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = StrataStore
        /// The name on the wire.
        public static let name = "Fetch"

        /// What the method takes.
        public struct Parameters: Codable, Sendable, Hashable {
            /// The store's name (as configured).
            public var store: String
            /// The entity concerned.
            public var entity: String
            /// A predicate in the NSPredicate-style format (docs/Predicates.md).
            public var predicate: String?
            /// The values of the `%@` placeholders, in order.
            public var arguments: [JSONValue]?
            /// Sort descriptors: `key` or `-key` (descending).
            public var sort: [String]?
            /// The most objects to return.
            public var limit: Int64?
            /// Objects to skip.
            public var offset: Int64?

            /// Memberwise initializer.
            public init(store: String, entity: String, predicate: String? = nil, arguments: [JSONValue]? = nil, sort: [String]? = nil,
                        limit: Int64? = nil, offset: Int64? = nil) {
                self.store = store
                self.entity = entity
                self.predicate = predicate
                self.arguments = arguments
                self.sort = sort
                self.limit = limit
                self.offset = offset
            }
        }

        /// What the method replies.
        public struct Reply: Codable, Sendable, Hashable {
            /// The objects.
            public var objects: [JSONValue]

            /// Memberwise initializer.
            public init(objects: [JSONValue]) {
                self.objects = objects
            }
        }
    }

    /// Counts the objects of an entity matching a predicate.
    public enum Count: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = StrataStore
        /// The name on the wire.
        public static let name = "Count"

        /// What the method takes.
        public struct Parameters: Codable, Sendable, Hashable {
            /// The store's name (as configured).
            public var store: String
            /// The entity concerned.
            public var entity: String
            /// A predicate in the NSPredicate-style format (docs/Predicates.md).
            public var predicate: String?
            /// The values of the `%@` placeholders, in order.
            public var arguments: [JSONValue]?

            /// Memberwise initializer.
            public init(store: String, entity: String, predicate: String? = nil, arguments: [JSONValue]? = nil) {
                self.store = store
                self.entity = entity
                self.predicate = predicate
                self.arguments = arguments
            }
        }

        /// What the method replies.
        public struct Reply: Codable, Sendable, Hashable {
            /// The number of objects.
            public var count: Int64

            /// Memberwise initializer.
            public init(count: Int64) {
                self.count = count
            }
        }
    }

    /// Inserts an object and returns it with its primary key.
    public enum Insert: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = StrataStore
        /// The name on the wire.
        public static let name = "Insert"

        /// What the method takes.
        public struct Parameters: Codable, Sendable, Hashable {
            /// The store's name (as configured).
            public var store: String
            /// The entity concerned.
            public var entity: String
            /// The values, by property name.
            public var values: JSONValue
            /// The name recorded as the change's author in the history (beside the peer's user).
            public var author: String?

            /// Memberwise initializer.
            public init(store: String, entity: String, values: JSONValue, author: String? = nil) {
                self.store = store
                self.entity = entity
                self.values = values
                self.author = author
            }
        }

        /// What the method replies.
        public typealias Reply = ObjectReply
    }

    /// Changes attributes of the object with primary key `id`.
    public enum Update: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = StrataStore
        /// The name on the wire.
        public static let name = "Update"

        /// What the method takes.
        public struct Parameters: Codable, Sendable, Hashable {
            /// The store's name (as configured).
            public var store: String
            /// The entity concerned.
            public var entity: String
            /// The deleted object's id.
            public var id: Int64
            /// The values, by property name.
            public var values: JSONValue
            /// The name recorded as the change's author in the history (beside the peer's user).
            public var author: String?

            /// Memberwise initializer.
            public init(store: String, entity: String, id: Int64, values: JSONValue, author: String? = nil) {
                self.store = store
                self.entity = entity
                self.id = id
                self.values = values
                self.author = author
            }
        }

        /// What the method replies.
        public typealias Reply = ObjectReply
    }

    /// Deletes one object.
    public enum Delete: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = StrataStore
        /// The name on the wire.
        public static let name = "Delete"

        /// What the method takes.
        public struct Parameters: Codable, Sendable, Hashable {
            /// The store's name (as configured).
            public var store: String
            /// The entity concerned.
            public var entity: String
            /// The new object's id.
            public var id: Int64
            /// The name recorded as the change's author in the history (beside the peer's user).
            public var author: String?

            /// Memberwise initializer.
            public init(store: String, entity: String, id: Int64, author: String? = nil) {
                self.store = store
                self.entity = entity
                self.id = id
                self.author = author
            }
        }

        /// What the method replies.
        public struct Reply: Codable, Sendable, Hashable {
            /// Whether the object was deleted.
            public var deleted: Bool

            /// Memberwise initializer.
            public init(deleted: Bool) {
                self.deleted = deleted
            }
        }
    }

    /// Runs the operations in one transaction: all or none. `results[i]` is the object
    /// inserted or updated by `operations[i]` (empty for a delete).
    public enum Batch: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = StrataStore
        /// The name on the wire.
        public static let name = "Batch"

        /// What the method takes.
        public struct Parameters: Codable, Sendable, Hashable {
            /// The store's name (as configured).
            public var store: String
            /// The operations.
            public var operations: [Operation]
            /// The name recorded as the changes' author in the history (beside the peer's user).
            public var author: String?

            /// Memberwise initializer.
            public init(store: String, operations: [Operation], author: String? = nil) {
                self.store = store
                self.operations = operations
                self.author = author
            }
        }

        /// What the method replies.
        public struct Reply: Codable, Sendable, Hashable {
            /// One result per store worked on.
            public var results: [JSONValue]

            /// Memberwise initializer.
            public init(results: [JSONValue]) {
                self.results = results
            }
        }
    }

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
