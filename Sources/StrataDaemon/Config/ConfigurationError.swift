import Foundation

/// A configuration file that `stratad` refuses, naming the file, the key and the reason.
///
/// ```
/// config/stratad.yaml: stores[0].model: directory "config/models/Nope" does not exist
/// ```
public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong with the configuration.
    public enum Kind: String, Sendable, Hashable {
        /// The file cannot be read.
        case unreadable
        /// The file is not valid YAML.
        case syntax
        /// A key that stratad does not know (often a typo).
        case unknownKey
        /// A value of the wrong type (a list where a string is expected…).
        case wrongType
        /// A required key is missing.
        case missingKey
        /// A value of the right type that is not acceptable (bad duration, unknown user…).
        case invalidValue
        /// Two entries clash (same store name, same path, same socket).
        case duplicate
        /// A model directory or version that cannot be used.
        case model
        /// A store's stage file (`stages`) that cannot be used: missing, not a regular file,
        /// too large, not valid YAML, or naming versions the model directory does not have.
        case stages
    }

    /// What is wrong.
    public var kind: Kind
    /// The configuration file, or `<environment>` / `<command line>` for overrides.
    public var file: String
    /// The key path, e.g. `stores[1].path`; empty for the whole file.
    public var key: String
    /// What is wrong and what to do.
    public var reason: String
    /// 1-based line in the file, when known.
    public var line: Int?

    /// Memberwise initializer.
    public init(_ kind: Kind, file: String, key: String, _ reason: String, line: Int? = nil) {
        self.kind = kind
        self.file = file
        self.key = key
        self.reason = reason
        self.line = line
    }

    /// A description in words.
    public var description: String {
        var location = file
        if let line { location += ":\(line)" }
        return key.isEmpty ? "\(location): \(reason)" : "\(location): \(key): \(reason)"
    }
}
