import Foundation

/// Why a model version cannot be served beside the version a store is at (``VersionBridge``).
///
/// ```swift
/// do {
///     let bridge = try VersionBridge.resolve(store: store, directory: models, version: "Fleet 1")
/// } catch {
///     print(error.code, error.reason)   // notServable: hop 'Fleet 1' -> 'Fleet 2' …
/// }
/// ```
public struct VersionBridgeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of refusal.
    public enum Code: String, Sendable, Hashable {
        /// The version is not in the model directory.
        case unknownVersion
        /// The version comes after the store's: the store has not been moved to it yet.
        case newerVersion
        /// An older version whose shape cannot be served beside the store's (a custom stage, a
        /// type change, a table or column the cleanup dropped, …): ``reason`` says which.
        case notServable
    }

    /// What kind of refusal.
    public var code: Code
    /// The version asked for.
    public var version: String
    /// The version the store is at.
    public var current: String
    /// What is missing and where (the hop, the entity, the property), and what to do.
    public var reason: String

    /// An error.
    public init(_ code: Code, version: String, current: String, reason: String) {
        self.code = code
        self.version = version
        self.current = current
        self.reason = reason
    }

    /// `version 'Fleet 1' cannot be served beside 'Fleet 3': …`.
    public var description: String {
        "version '\(version)' cannot be served beside '\(current)' (\(code.rawValue)): \(reason)"
    }
}
