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
    public static let name = "io.strata.Store"
    public static var definition: String { InterfaceDefinitions.store }

    public static let methods: [any VarlinkMethod.Type] = [
        Fetch.self, Count.self, Insert.self, Update.self, Delete.self, Batch.self,
    ]

    public static let errors: [any VarlinkErrorParameters.Type] = [
        NoSuchStore.self, StoreUnavailable.self, StoreFailure.self, InvalidPredicate.self, ObjectError.self, ObjectNotFound.self,
    ]

    // MARK: - Types

    /// One operation of a `Batch`: `id` for update and delete, `values` for insert and update.
    public struct Operation: Codable, Sendable, Hashable {
        public enum Kind: String, VarlinkStringEnum {
            case insert, update, delete
        }

        public var op: Kind
        public var entity: String
        public var id: Int64?
        public var values: JSONValue?

        public init(op: Kind, entity: String, id: Int64? = nil, values: JSONValue? = nil) {
            self.op = op
            self.entity = entity
            self.id = id
            self.values = values
        }
    }

    // MARK: - Methods

    /// Objects of an entity matching a predicate (NSPredicate-style format with `%@`
    /// arguments), sorted by `key` or `key:desc` descriptors.
    public enum Fetch: VarlinkMethod {
        public typealias Interface = StrataStore
        public static let name = "Fetch"

        public struct Parameters: Codable, Sendable, Hashable {
            public var store: String
            public var entity: String
            public var predicate: String?
            public var arguments: [JSONValue]?
            public var sort: [String]?
            public var limit: Int64?
            public var offset: Int64?

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

        public struct Reply: Codable, Sendable, Hashable {
            public var objects: [JSONValue]
            public init(objects: [JSONValue]) { self.objects = objects }
        }
    }

    public enum Count: VarlinkMethod {
        public typealias Interface = StrataStore
        public static let name = "Count"

        public struct Parameters: Codable, Sendable, Hashable {
            public var store: String
            public var entity: String
            public var predicate: String?
            public var arguments: [JSONValue]?

            public init(store: String, entity: String, predicate: String? = nil, arguments: [JSONValue]? = nil) {
                self.store = store
                self.entity = entity
                self.predicate = predicate
                self.arguments = arguments
            }
        }

        public struct Reply: Codable, Sendable, Hashable {
            public var count: Int64
            public init(count: Int64) { self.count = count }
        }
    }

    /// Inserts an object and returns it with its primary key.
    public enum Insert: VarlinkMethod {
        public typealias Interface = StrataStore
        public static let name = "Insert"

        public struct Parameters: Codable, Sendable, Hashable {
            public var store: String
            public var entity: String
            public var values: JSONValue

            public init(store: String, entity: String, values: JSONValue) {
                self.store = store
                self.entity = entity
                self.values = values
            }
        }

        public typealias Reply = ObjectReply
    }

    /// Changes attributes of the object with primary key `id`.
    public enum Update: VarlinkMethod {
        public typealias Interface = StrataStore
        public static let name = "Update"

        public struct Parameters: Codable, Sendable, Hashable {
            public var store: String
            public var entity: String
            public var id: Int64
            public var values: JSONValue

            public init(store: String, entity: String, id: Int64, values: JSONValue) {
                self.store = store
                self.entity = entity
                self.id = id
                self.values = values
            }
        }

        public typealias Reply = ObjectReply
    }

    /// The reply of `Insert` and `Update`: the object as saved.
    public struct ObjectReply: Codable, Sendable, Hashable {
        public var object: JSONValue
        public init(object: JSONValue) { self.object = object }
    }

    public enum Delete: VarlinkMethod {
        public typealias Interface = StrataStore
        public static let name = "Delete"

        public struct Parameters: Codable, Sendable, Hashable {
            public var store: String
            public var entity: String
            public var id: Int64

            public init(store: String, entity: String, id: Int64) {
                self.store = store
                self.entity = entity
                self.id = id
            }
        }

        public struct Reply: Codable, Sendable, Hashable {
            public var deleted: Bool
            public init(deleted: Bool) { self.deleted = deleted }
        }
    }

    /// Runs the operations in one transaction: all or none. `results[i]` is the object
    /// inserted or updated by `operations[i]` (empty for a delete).
    public enum Batch: VarlinkMethod {
        public typealias Interface = StrataStore
        public static let name = "Batch"

        public struct Parameters: Codable, Sendable, Hashable {
            public var store: String
            public var operations: [Operation]

            public init(store: String, operations: [Operation]) {
                self.store = store
                self.operations = operations
            }
        }

        public struct Reply: Codable, Sendable, Hashable {
            public var results: [JSONValue]
            public init(results: [JSONValue]) { self.results = results }
        }
    }
}
