import Foundation

// The errors of io.strata.Admin (`error …` in the IDL).

extension StrataAdmin {
    public typealias NoSuchStore = StrataStore.NoSuchStore
    public typealias StoreUnavailable = StrataStore.StoreUnavailable
    public typealias StoreFailure = StrataStore.StoreFailure

    public struct UnknownSetting: VarlinkErrorParameters {
        public static let errorName = "UnknownSetting"
        public var key: String
        public var known: [String]
        public var reason: String

        public init(key: String, known: [String]) {
            self.key = key
            self.known = known
            self.reason = "unknown setting '\(key)'; known: \(known.joined(separator: ", "))"
        }
    }

    public struct InvalidSetting: VarlinkErrorParameters {
        public static let errorName = "InvalidSetting"
        public var key: String
        public var value: String
        public var reason: String

        public init(key: String, value: String, reason: String) {
            self.key = key
            self.value = value
            self.reason = reason
        }
    }

    public struct AlreadyRunning: VarlinkErrorParameters {
        public static let errorName = "AlreadyRunning"
        public var store: String
        public var reason: String

        public init(store: String, reason: String = "deferred work already runs on this store") {
            self.store = store
            self.reason = reason
        }
    }

    /// A reload refused: the file, the key and why (the daemon keeps the previous configuration).
    public struct ReloadFailed: VarlinkErrorParameters {
        public static let errorName = "ReloadFailed"
        public var file: String
        public var key: String
        public var reason: String

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
            if let parameters = StrataAdmin.parameters(NoSuchStore.self, of: error) { self = .noSuchStore(parameters) }
            else if let parameters = StrataAdmin.parameters(StoreUnavailable.self, of: error) { self = .storeUnavailable(parameters) }
            else if let parameters = StrataAdmin.parameters(StoreFailure.self, of: error) { self = .storeFailure(parameters) }
            else if let parameters = StrataAdmin.parameters(UnknownSetting.self, of: error) { self = .unknownSetting(parameters) }
            else if let parameters = StrataAdmin.parameters(InvalidSetting.self, of: error) { self = .invalidSetting(parameters) }
            else if let parameters = StrataAdmin.parameters(AlreadyRunning.self, of: error) { self = .alreadyRunning(parameters) }
            else if let parameters = StrataAdmin.parameters(ReloadFailed.self, of: error) { self = .reloadFailed(parameters) }
            else { return nil }
        }

        public var description: String { varlinkError.description }
    }
}
