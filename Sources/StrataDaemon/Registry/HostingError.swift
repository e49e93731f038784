/// Why the daemon cannot serve a call on a store: the name is unknown, or the store is not
/// serving (it failed to open, or was closed). The interfaces turn it into their
/// `NoSuchStore` and `StoreUnavailable` errors.
public enum HostingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No store of that name; `known` lists the configured ones.
    case noSuchStore(name: String, known: [String])
    /// The store failed to open or was closed; `reason` says which and why.
    case unavailable(store: String, reason: String)

    static let closedReason = "the store was closed (removed from the configuration or stopping)"

    /// A description in words.
    public var description: String {
        switch self {
        case .noSuchStore(let name, let known):
            "no store named '\(name)'; known stores: \(known.isEmpty ? "none" : known.joined(separator: ", "))"
        case .unavailable(let store, let reason):
            "store '\(store)' is unavailable: \(reason)"
        }
    }
}
