import Foundation

/// The syntax tree of a model file, common to JSON and YAML.
///
/// Readers keep scalars close to their source form so that the decoder can interpret each one
/// by what it expects there (a name, a flag, a default of a given attribute type), instead of
/// guessing types the way a generic YAML loader does (`name: no` stays the string `"no"`).
struct ModelFileNode: Sendable {
    enum Content: Sendable {
        case null
        case bool(Bool)
        /// A JSON number, or a number the encoder writes, as its literal text.
        case number(String)
        /// A quoted string (any JSON string, a quoted or block YAML scalar).
        case string(String)
        /// A plain (unquoted) YAML scalar, to be interpreted by the decoder.
        case plain(String)
        case array([ModelFileNode])
        /// Key–value pairs in source order.
        case object([(key: String, value: ModelFileNode)])
    }

    var content: Content
    /// The 1-based line the node starts on, when the reader knows it.
    var line: Int?

    init(_ content: Content, line: Int? = nil) {
        self.content = content
        self.line = line
    }

    static func string(_ s: String) -> ModelFileNode { ModelFileNode(.string(s)) }
    static func bool(_ b: Bool) -> ModelFileNode { ModelFileNode(.bool(b)) }
    static func int(_ i: Int) -> ModelFileNode { ModelFileNode(.number(String(i))) }
    static func array(_ a: [ModelFileNode]) -> ModelFileNode { ModelFileNode(.array(a)) }
    static func object(_ pairs: [(key: String, value: ModelFileNode)]) -> ModelFileNode { ModelFileNode(.object(pairs)) }

    /// Whether the node is a null: JSON `null`, or a YAML plain `null`, `~` or empty scalar.
    var isNull: Bool {
        switch content {
        case .null: return true
        case .plain(let s): return Self.nullWords.contains(s)
        default: return false
        }
    }

    static let nullWords: Set<String> = ["", "~", "null", "Null", "NULL"]

    /// A short name of the node's kind for messages: "a list", "a number", …
    var kindDescription: String {
        switch content {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .plain(let s): return isNull ? "null" : "'\(s)'"
        case .array: return "a list"
        case .object: return "a mapping"
        }
    }
}

// MARK: - Errors while reading

/// A syntax error found by a reader, before any model-level meaning is known.
struct ModelFileSyntaxError: Error {
    var message: String
    var line: Int?
}
