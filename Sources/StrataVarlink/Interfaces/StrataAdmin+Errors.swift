import Foundation

// Generated from varlink/io.strata.Admin.varlink and varlink/io.strata.Admin.swift.json:
// the errors (`error …` in the IDL) and the typed Failure. Do not edit: change those files and run
// scripts/generate-varlink-definitions.sh (InterfaceDefinitionTests checks it was run).

extension StrataAdmin {
    /// The interface's errors.
    public static let errors: [any VarlinkErrorParameters.Type] = [
        NoSuchStore.self, StoreUnavailable.self, StoreFailure.self, UnknownSetting.self, InvalidSetting.self, AlreadyRunning.self,
        ReloadFailed.self,
    ]

    /// `io.strata.Admin.NoSuchStore`: the daemon hosts no store of that name.
    public typealias NoSuchStore = StrataStore.NoSuchStore

    /// `io.strata.Admin.StoreUnavailable`: the store is configured but failed to open or is closed.
    public typealias StoreUnavailable = StrataStore.StoreUnavailable

    /// `io.strata.Admin.StoreFailure`: the store refused the operation (the reason says why).
    public typealias StoreFailure = StrataStore.StoreFailure

    /// `io.strata.Admin.UnknownSetting`: no setting of that key; `known` lists them.
    public struct UnknownSetting: VarlinkErrorParameters {
        /// The error's name on the wire.
        public static let errorName = "UnknownSetting"
        /// The setting's key.
        public var key: String
        /// The names that exist.
        public var known: [String]
        /// Why, in words, and what to do.
        public var reason: String

        /// Memberwise initializer (the reason is made from the other fields).
        public init(key: String, known: [String]) {
            self.key = key
            self.known = known
            self.reason = "unknown setting '\(key)'; known: \(known.joined(separator: ", "))"
        }
    }

    /// `io.strata.Admin.InvalidSetting`: the value does not parse or is out of the setting's range.
    public struct InvalidSetting: VarlinkErrorParameters {
        /// The error's name on the wire.
        public static let errorName = "InvalidSetting"
        /// The setting's key.
        public var key: String
        /// The value refused.
        public var value: String
        /// Why, in words, and what to do.
        public var reason: String

        /// Memberwise initializer.
        public init(key: String, value: String, reason: String) {
            self.key = key
            self.value = value
            self.reason = reason
        }
    }

    /// `io.strata.Admin.AlreadyRunning`: deferred work already runs on the store.
    public struct AlreadyRunning: VarlinkErrorParameters {
        /// The error's name on the wire.
        public static let errorName = "AlreadyRunning"
        /// The store's name (as configured).
        public var store: String
        /// Why, in words, and what to do.
        public var reason: String

        /// Memberwise initializer.
        public init(store: String, reason: String = "deferred work already runs on this store") {
            self.store = store
            self.reason = reason
        }
    }

    /// A reload refused: the file, the key and why (the daemon keeps the previous configuration).
    public struct ReloadFailed: VarlinkErrorParameters {
        /// The error's name on the wire.
        public static let errorName = "ReloadFailed"
        /// The configuration file.
        public var file: String
        /// The setting's key.
        public var key: String
        /// Why, in words, and what to do.
        public var reason: String

        /// Memberwise initializer.
        public init(file: String, key: String, reason: String) {
            self.file = file
            self.key = key
            self.reason = reason
        }
    }

    /// An error of io.strata.Admin, typed: what the daemon throws and what a client decodes
    /// (``init(_:)``) from a ``VarlinkError``.
    public enum Failure: VarlinkErrorConvertible, Hashable, CustomStringConvertible {
        case noSuchStore(NoSuchStore)
        case storeUnavailable(StoreUnavailable)
        case storeFailure(StoreFailure)
        case unknownSetting(UnknownSetting)
        case invalidSetting(InvalidSetting)
        case alreadyRunning(AlreadyRunning)
        case reloadFailed(ReloadFailed)

        /// The error as it goes on the wire.
        public var varlinkError: VarlinkError {
            switch self {
            case .noSuchStore(let parameters): StrataAdmin.varlinkError(parameters)
            case .storeUnavailable(let parameters): StrataAdmin.varlinkError(parameters)
            case .storeFailure(let parameters): StrataAdmin.varlinkError(parameters)
            case .unknownSetting(let parameters): StrataAdmin.varlinkError(parameters)
            case .invalidSetting(let parameters): StrataAdmin.varlinkError(parameters)
            case .alreadyRunning(let parameters): StrataAdmin.varlinkError(parameters)
            case .reloadFailed(let parameters): StrataAdmin.varlinkError(parameters)
            }
        }

        /// The typed error of a reply; nil when `error` is not an io.strata.Admin error.
        public init?(_ error: VarlinkError) {
            switch error.name {
            case "io.strata.Admin.NoSuchStore":
                guard let parameters = StrataAdmin.parameters(NoSuchStore.self, of: error) else { return nil }
                self = .noSuchStore(parameters)
            case "io.strata.Admin.StoreUnavailable":
                guard let parameters = StrataAdmin.parameters(StoreUnavailable.self, of: error) else { return nil }
                self = .storeUnavailable(parameters)
            case "io.strata.Admin.StoreFailure":
                guard let parameters = StrataAdmin.parameters(StoreFailure.self, of: error) else { return nil }
                self = .storeFailure(parameters)
            case "io.strata.Admin.UnknownSetting":
                guard let parameters = StrataAdmin.parameters(UnknownSetting.self, of: error) else { return nil }
                self = .unknownSetting(parameters)
            case "io.strata.Admin.InvalidSetting":
                guard let parameters = StrataAdmin.parameters(InvalidSetting.self, of: error) else { return nil }
                self = .invalidSetting(parameters)
            case "io.strata.Admin.AlreadyRunning":
                guard let parameters = StrataAdmin.parameters(AlreadyRunning.self, of: error) else { return nil }
                self = .alreadyRunning(parameters)
            case "io.strata.Admin.ReloadFailed":
                guard let parameters = StrataAdmin.parameters(ReloadFailed.self, of: error) else { return nil }
                self = .reloadFailed(parameters)
            default: return nil
            }
        }

        /// A description in words.
        public var description: String { varlinkError.description }
    }
}
