import Foundation

// Generated from varlink/io.strata.Store.varlink and varlink/io.strata.Store.swift.json:
// the named types (`type …` in the IDL). Do not edit: change those files and run
// scripts/generate-varlink-definitions.sh (InterfaceDefinitionTests checks it was run).

extension StrataStore {
    /// One operation of a `Batch`: `id` for update and delete, `values` for insert and update.
    public struct Operation: Codable, Sendable, Hashable {
        /// What a change does to an object.
        public enum Kind: String, VarlinkStringEnum {
            case insert, update, delete
        }

        /// Insert, update or delete.
        public var op: Kind
        /// The entity concerned.
        public var entity: String
        /// The object's id (nil for an insert).
        public var id: Int64?
        /// The values, by property name.
        public var values: JSONValue?

        /// Memberwise initializer.
        public init(op: Kind, entity: String, id: Int64? = nil, values: JSONValue? = nil) {
            self.op = op
            self.entity = entity
            self.id = id
            self.values = values
        }
    }

    /// One object changed by a history transaction.
    public struct Change: Codable, Sendable, Hashable {
        /// What happened to the object.
        public enum Kind: String, VarlinkStringEnum {
            case insert, update, delete
        }

        /// The entity concerned.
        public var entity: String
        /// The object's id (its primary key).
        public var id: Int64
        /// Insert, update or delete.
        public var kind: Kind
        /// The attributes and relationships an update changed (empty otherwise).
        public var properties: [String]
        /// A deleted object's `preserveAfterDeletion` attributes, by name.
        public var tombstone: JSONValue?

        /// Memberwise initializer.
        public init(entity: String, id: Int64, kind: Kind, properties: [String] = [], tombstone: JSONValue? = nil) {
            self.entity = entity
            self.id = id
            self.kind = kind
            self.properties = properties
            self.tombstone = tombstone
        }
    }

    /// One committed transaction of the change history.
    public struct Transaction: Codable, Sendable, Hashable {
        /// Objects, or a gap (another process wrote the store without history).
        public enum Kind: String, VarlinkStringEnum {
            case objects, gap
        }

        /// The transaction's token: grows with every transaction, never reused.
        public var token: Int64
        /// When it committed (ISO 8601).
        public var time: String
        /// Objects or gap.
        public var kind: Kind
        /// The user that wrote it, when known.
        public var user: String?
        /// The name the writer gave, when any.
        public var author: String?
        /// The objects changed.
        public var changes: [Change]

        /// Memberwise initializer.
        public init(token: Int64, time: String, kind: Kind, user: String? = nil, author: String? = nil, changes: [Change] = []) {
            self.token = token
            self.time = time
            self.kind = kind
            self.user = user
            self.author = author
            self.changes = changes
        }
    }
}
