import Foundation

/// `io.strata.Store` (`varlink/io.strata.Store.varlink`): object access to hosted stores.
/// Objects are ``JSONValue`` objects: attributes by name, composite attributes as nested
/// objects, to-one relationships as the target's primary key, plus `_entity` and `_pk`.
///
/// ```swift
/// let reply = try await data.call(StrataStore.Fetch.self, .init(store: "aircraft", entity: "Aircraft",
///                                                                 predicate: "tailNumber BEGINSWITH %@", arguments: ["F-"]))
/// reply.objects.count
/// ```
public enum StrataStore: VarlinkInterfaceDefinition {
    /// The name on the wire.
    public static let name = "io.strata.Store"
    /// The interface definition (the `.varlink` file).
    public static var definition: String { InterfaceDefinitions.store }

    /// The interface's methods.
    public static let methods: [any VarlinkMethod.Type] = [
        Fetch.self, Count.self, Insert.self, Update.self, Delete.self, Batch.self, History.self, Observe.self,
    ]

    /// The interface's errors.
    public static let errors: [any VarlinkErrorParameters.Type] = [
        NoSuchStore.self, StoreUnavailable.self, StoreFailure.self, InvalidPredicate.self, ObjectError.self, ObjectNotFound.self,
        HistoryExpired.self, InvalidHistoryToken.self, ObserverOverflow.self,
    ]

    // The named type (Operation) is generated: StrataStore+Types.swift.

    // MARK: - Methods

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
            public init(objects: [JSONValue]) { self.objects = objects }
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
            public init(count: Int64) { self.count = count }
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

    /// The reply of `Insert` and `Update`: the object as saved.
    public struct ObjectReply: Codable, Sendable, Hashable {
        /// The object: its id, version and values.
        public var object: JSONValue
        /// Memberwise initializer.
        public init(object: JSONValue) { self.object = object }
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
            public init(deleted: Bool) { self.deleted = deleted }
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
            public init(results: [JSONValue]) { self.results = results }
        }
    }
}
