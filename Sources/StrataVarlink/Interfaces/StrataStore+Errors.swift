import Foundation

// Generated from varlink/io.strata.Store.varlink and varlink/io.strata.Store.swift.json:
// the errors (`error …` in the IDL) and the typed Failure. Do not edit: change those files and run
// scripts/generate-varlink-definitions.sh (InterfaceDefinitionTests checks it was run).

extension StrataStore {
    /// The interface's errors.
    public static let errors: [any VarlinkErrorParameters.Type] = [
        NoSuchStore.self, StoreUnavailable.self, StoreFailure.self, InvalidPredicate.self, ObjectError.self, ObjectNotFound.self,
        HistoryExpired.self, InvalidHistoryToken.self, ObserverOverflow.self,
    ]

    /// `io.strata.Store.NoSuchStore`: the daemon hosts no store of that name.
    public struct NoSuchStore: VarlinkErrorParameters {
        /// The error's name on the wire.
        public static let errorName = "NoSuchStore"
        /// The store's name (as configured).
        public var store: String
        /// The names that exist.
        public var known: [String]
        /// Why, in words, and what to do.
        public var reason: String

        /// Memberwise initializer (the reason is made from the other fields).
        public init(store: String, known: [String]) {
            self.store = store
            self.known = known
            self.reason = "no store named '\(store)'; known stores: \(known.isEmpty ? "none" : known.joined(separator: ", "))"
        }
    }

    /// The store failed to open, or was closed (removed from the configuration, stopping).
    public struct StoreUnavailable: VarlinkErrorParameters {
        /// The error's name on the wire.
        public static let errorName = "StoreUnavailable"
        /// The store's name (as configured).
        public var store: String
        /// Why, in words, and what to do.
        public var reason: String

        /// Memberwise initializer.
        public init(store: String, reason: String) {
            self.store = store
            self.reason = reason
        }
    }

    /// The store refused the call: `code` is the library's `StoreError.Code`.
    public struct StoreFailure: VarlinkErrorParameters {
        /// The error's name on the wire.
        public static let errorName = "StoreFailure"
        /// The store's name (as configured).
        public var store: String
        /// The library's `StoreError.Code`.
        public var code: String
        /// Why, in words, and what to do.
        public var reason: String

        /// Memberwise initializer.
        public init(store: String, code: String, reason: String) {
            self.store = store
            self.code = code
            self.reason = reason
        }
    }

    /// A predicate or sort descriptor that does not parse: the text and where.
    public struct InvalidPredicate: VarlinkErrorParameters {
        /// The error's name on the wire.
        public static let errorName = "InvalidPredicate"
        /// The predicate or sort text that does not parse.
        public var format: String
        /// Where in `format` the problem is (0-based), when it is one place.
        public var position: Int?
        /// Why, in words, and what to do.
        public var reason: String

        /// Memberwise initializer.
        public init(format: String, position: Int?, reason: String) {
            self.format = format
            self.position = position
            self.reason = reason
        }
    }

    /// An object that cannot be created or changed: `code` is the library's
    /// `ObjectContextError.Code`; `operation` the index in a `Batch`.
    public struct ObjectError: VarlinkErrorParameters {
        /// The error's name on the wire.
        public static let errorName = "ObjectError"
        /// The library's `ObjectContextError.Code`.
        public var code: String
        /// The entity concerned.
        public var entity: String?
        /// The property concerned.
        public var property: String?
        /// Why, in words, and what to do.
        public var reason: String
        /// The index of the failing operation in a `Batch`, if the call was one.
        public var operation: Int?

        /// Memberwise initializer.
        public init(code: String, entity: String?, property: String?, reason: String, operation: Int?) {
            self.code = code
            self.entity = entity
            self.property = property
            self.reason = reason
            self.operation = operation
        }
    }

    /// `io.strata.Store.ObjectNotFound`: no object of that entity and id.
    public struct ObjectNotFound: VarlinkErrorParameters {
        /// The error's name on the wire.
        public static let errorName = "ObjectNotFound"
        /// The entity concerned.
        public var entity: String
        /// The object's id (its primary key).
        public var id: Int64
        /// The index of the failing operation in a `Batch`, if the call was one.
        public var operation: Int?

        /// Memberwise initializer.
        public init(entity: String, id: Int64, operation: Int?) {
            self.entity = entity
            self.id = id
            self.operation = operation
        }

        /// Why, in words, and what to do.
        public var reason: String { "no \(entity) with id \(id)" + (operation.map { " (operation \($0))" } ?? "") }
    }

    /// `io.strata.Store.HistoryExpired`: transactions after `since` were purged (history
    /// retention); refetch what you follow, then continue from `latest`.
    public struct HistoryExpired: VarlinkErrorParameters {
        /// The error's name on the wire.
        public static let errorName = "HistoryExpired"
        /// The store's name (as configured).
        public var store: String
        /// The token asked for.
        public var since: Int64
        /// Everything up to this token was purged.
        public var purgedThrough: Int64
        /// The store's latest token.
        public var latest: Int64
        /// Why, in words, and what to do.
        public var reason: String

        /// Memberwise initializer.
        public init(store: String, since: Int64, purgedThrough: Int64, latest: Int64, reason: String) {
            self.store = store
            self.since = since
            self.purgedThrough = purgedThrough
            self.latest = latest
            self.reason = reason
        }
    }

    /// `io.strata.Store.InvalidHistoryToken`: a token that is negative or newer than the
    /// store's latest (from another store, or a store that was replaced).
    public struct InvalidHistoryToken: VarlinkErrorParameters {
        /// The error's name on the wire.
        public static let errorName = "InvalidHistoryToken"
        /// The store's name (as configured).
        public var store: String
        /// The token given.
        public var token: Int64
        /// The store's latest token.
        public var latest: Int64
        /// Why, in words, and what to do.
        public var reason: String

        /// Memberwise initializer.
        public init(store: String, token: Int64, latest: Int64, reason: String) {
            self.store = store
            self.token = token
            self.latest = latest
            self.reason = reason
        }
    }

    /// `io.strata.Store.ObserverOverflow`: an observer fell more than `limit` transactions
    /// behind; the daemon closes the connection. Resume with `Observe` or `History` from `token`.
    public struct ObserverOverflow: VarlinkErrorParameters {
        /// The error's name on the wire.
        public static let errorName = "ObserverOverflow"
        /// The store's name (as configured).
        public var store: String
        /// The per-connection limit (transactions not yet delivered).
        public var limit: Int
        /// The last token delivered: resume from it.
        public var token: Int64
        /// Why, in words, and what to do.
        public var reason: String

        /// Memberwise initializer.
        public init(store: String, limit: Int, token: Int64, reason: String) {
            self.store = store
            self.limit = limit
            self.token = token
            self.reason = reason
        }
    }

    /// An error of io.strata.Store, typed: what the daemon throws and what a client decodes
    /// (``init(_:)``) from a ``VarlinkError``.
    public enum Failure: VarlinkErrorConvertible, Hashable, CustomStringConvertible {
        case noSuchStore(NoSuchStore)
        case storeUnavailable(StoreUnavailable)
        case storeFailure(StoreFailure)
        case invalidPredicate(InvalidPredicate)
        case objectError(ObjectError)
        case objectNotFound(ObjectNotFound)
        case historyExpired(HistoryExpired)
        case invalidHistoryToken(InvalidHistoryToken)
        case observerOverflow(ObserverOverflow)

        /// The error as it goes on the wire.
        public var varlinkError: VarlinkError {
            switch self {
            case .noSuchStore(let parameters): StrataStore.varlinkError(parameters)
            case .storeUnavailable(let parameters): StrataStore.varlinkError(parameters)
            case .storeFailure(let parameters): StrataStore.varlinkError(parameters)
            case .invalidPredicate(let parameters): StrataStore.varlinkError(parameters)
            case .objectError(let parameters): StrataStore.varlinkError(parameters)
            case .objectNotFound(let parameters): StrataStore.varlinkError(parameters)
            case .historyExpired(let parameters): StrataStore.varlinkError(parameters)
            case .invalidHistoryToken(let parameters): StrataStore.varlinkError(parameters)
            case .observerOverflow(let parameters): StrataStore.varlinkError(parameters)
            }
        }

        /// The typed error of a reply; nil when `error` is not an io.strata.Store error.
        public init?(_ error: VarlinkError) {
            switch error.name {
            case "io.strata.Store.NoSuchStore":
                guard let parameters = StrataStore.parameters(NoSuchStore.self, of: error) else { return nil }
                self = .noSuchStore(parameters)
            case "io.strata.Store.StoreUnavailable":
                guard let parameters = StrataStore.parameters(StoreUnavailable.self, of: error) else { return nil }
                self = .storeUnavailable(parameters)
            case "io.strata.Store.StoreFailure":
                guard let parameters = StrataStore.parameters(StoreFailure.self, of: error) else { return nil }
                self = .storeFailure(parameters)
            case "io.strata.Store.InvalidPredicate":
                guard let parameters = StrataStore.parameters(InvalidPredicate.self, of: error) else { return nil }
                self = .invalidPredicate(parameters)
            case "io.strata.Store.ObjectError":
                guard let parameters = StrataStore.parameters(ObjectError.self, of: error) else { return nil }
                self = .objectError(parameters)
            case "io.strata.Store.ObjectNotFound":
                guard let parameters = StrataStore.parameters(ObjectNotFound.self, of: error) else { return nil }
                self = .objectNotFound(parameters)
            case "io.strata.Store.HistoryExpired":
                guard let parameters = StrataStore.parameters(HistoryExpired.self, of: error) else { return nil }
                self = .historyExpired(parameters)
            case "io.strata.Store.InvalidHistoryToken":
                guard let parameters = StrataStore.parameters(InvalidHistoryToken.self, of: error) else { return nil }
                self = .invalidHistoryToken(parameters)
            case "io.strata.Store.ObserverOverflow":
                guard let parameters = StrataStore.parameters(ObserverOverflow.self, of: error) else { return nil }
                self = .observerOverflow(parameters)
            default: return nil
            }
        }

        /// A description in words.
        public var description: String { varlinkError.description }
    }
}
