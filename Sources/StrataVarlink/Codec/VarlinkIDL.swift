import Foundation

/// A parsed Varlink interface definition (the `.varlink` IDL): its name, named types,
/// methods and errors, as <https://varlink.org/Interface-Definition> describes them.
///
/// ```swift
/// let idl = try VarlinkIDL(parsing: StrataAdmin.definition)
/// idl.methods["Pending"]?.parameters   // [("store", .optional(.string))]
/// ```
public struct VarlinkIDL: Sendable, Hashable {
    /// A type expression.
    public indirect enum TypeExpression: Sendable, Hashable, CustomStringConvertible {
        case bool, int, float, string
        /// Any JSON value (Varlink's `object`).
        case object
        case optional(TypeExpression)
        case array(TypeExpression)
        /// `[string]T`: a map from strings.
        case map(TypeExpression)
        /// `[string]()`: a set of strings.
        case set
        /// A named type of the interface.
        case named(String)
        case structure([Field])
        case enumeration([String])

        /// A description in words.
        public var description: String {
            switch self {
            case .bool: "bool"
            case .int: "int"
            case .float: "float"
            case .string: "string"
            case .object: "object"
            case .optional(let wrapped): "?\(wrapped)"
            case .array(let element): "[]\(element)"
            case .map(let value): "[string]\(value)"
            case .set: "[string]()"
            case .named(let name): name
            case .structure(let fields): "(\(fields.map { "\($0.name): \($0.type)" }.joined(separator: ", ")))"
            case .enumeration(let cases): "(\(cases.joined(separator: ", ")))"
            }
        }
    }

    /// A field of a structure, a method's parameters or reply, or an error.
    public struct Field: Sendable, Hashable {
        /// The field's name.
        public var name: String
        /// The field's type as written.
        public var type: TypeExpression

        /// Memberwise initializer.
        public init(name: String, type: TypeExpression) {
            self.name = name
            self.type = type
        }
    }

    /// A method of the interface: its name and its parameter and reply types as written.
    public struct Method: Sendable, Hashable {
        /// The method's name.
        public var name: String
        /// The parameters, as JSON.
        public var parameters: [Field]
        /// The reply's fields.
        public var reply: [Field]

        /// Memberwise initializer.
        public init(name: String, parameters: [Field], reply: [Field]) {
            self.name = name
            self.parameters = parameters
            self.reply = reply
        }
    }

    /// The qualified interface name (`io.strata.Admin`).
    public var name: String
    /// The named types (`type X (...)`), by name.
    public var types: [String: TypeExpression] = [:]
    /// The methods, by name.
    public var methods: [String: Method] = [:]
    /// Errors by name, with their fields.
    public var errors: [String: [Field]] = [:]

    /// - Throws: ``VarlinkIDLError`` with the line of the first thing that is not IDL.
    public init(parsing text: String) throws(VarlinkIDLError) {
        var parser = Parser(text)
        try parser.expectWord("interface")
        name = try parser.qualifiedName()
        while !parser.atEnd {
            let keyword = try parser.word()
            switch keyword {
            case "type":
                let typeName = try parser.word()
                types[typeName] = try parser.typeExpression()
            case "method":
                let methodName = try parser.word()
                let parameters = try parser.fields()
                try parser.expect("->")
                methods[methodName] = Method(name: methodName, parameters: parameters, reply: try parser.fields())
            case "error":
                let errorName = try parser.word()
                errors[errorName] = try parser.fields()
            default:
                throw parser.error("expected type, method or error, found '\(keyword)'")
            }
        }
    }

    /// `type` with every named type replaced by its definition (for comparing structures).
    public func resolved(_ type: TypeExpression) -> TypeExpression {
        switch type {
        case .named(let name): types[name].map(resolved) ?? type
        case .optional(let wrapped): .optional(resolved(wrapped))
        case .array(let element): .array(resolved(element))
        case .map(let value): .map(resolved(value))
        case .structure(let fields): .structure(fields.map { Field(name: $0.name, type: resolved($0.type)) })
        default: type
        }
    }
}

/// A definition that is not valid Varlink IDL.
public struct VarlinkIDLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The line of the definition where parsing failed (1-based).
    public var line: Int
    /// Why, in words, and what to do.
    public var reason: String
    /// A description in words.
    public var description: String { "line \(line): \(reason)" }
}

// MARK: - Parser

private struct Parser {
    private let characters: [Character]
    private var index = 0

    init(_ text: String) {
        characters = Array(text)
        skipSpace()
    }

    var atEnd: Bool { index >= characters.count }

    func error(_ reason: String) -> VarlinkIDLError {
        VarlinkIDLError(line: characters[..<min(index, characters.count)].filter { $0 == "\n" }.count + 1, reason: reason)
    }

    /// Skips white space and `#` comments.
    private mutating func skipSpace() {
        while index < characters.count {
            if characters[index].isWhitespace {
                index += 1
            } else if characters[index] == "#" {
                while index < characters.count, characters[index] != "\n" { index += 1 }
            } else {
                return
            }
        }
    }

    private func peek(_ text: String) -> Bool {
        let wanted = Array(text)
        guard index + wanted.count <= characters.count else { return false }
        return Array(characters[index..<index + wanted.count]) == wanted
    }

    mutating func expect(_ text: String) throws(VarlinkIDLError) {
        guard peek(text) else { throw error("expected '\(text)'") }
        index += text.count
        skipSpace()
    }

    private mutating func accept(_ text: String) -> Bool {
        guard peek(text) else { return false }
        index += text.count
        skipSpace()
        return true
    }

    mutating func word() throws(VarlinkIDLError) -> String {
        let start = index
        while index < characters.count, characters[index].isLetter || characters[index].isNumber || characters[index] == "_" { index += 1 }
        guard index > start else { throw error("expected a name") }
        let word = String(characters[start..<index])
        skipSpace()
        return word
    }

    mutating func expectWord(_ keyword: String) throws(VarlinkIDLError) {
        let found = try word()
        guard found == keyword else { throw error("expected '\(keyword)', found '\(found)'") }
    }

    mutating func qualifiedName() throws(VarlinkIDLError) -> String {
        var parts = [try word()]
        while peek(".") {
            index += 1
            parts.append(try word())
        }
        return parts.joined(separator: ".")
    }

    /// `(name: type, …)`.
    mutating func fields() throws(VarlinkIDLError) -> [VarlinkIDL.Field] {
        guard case .structure(let fields) = try typeExpression(), true else { throw error("expected a list of fields") }
        return fields
    }

    mutating func typeExpression() throws(VarlinkIDLError) -> VarlinkIDL.TypeExpression {
        if accept("?") { return .optional(try typeExpression()) }
        if accept("[]") { return .array(try typeExpression()) }
        if accept("[string]") {
            if peek("()") {
                try expect("()")
                return .set
            }
            return .map(try typeExpression())
        }
        if accept("(") { return try structureOrEnumeration() }
        let name = try word()
        switch name {
        case "bool": return .bool
        case "int": return .int
        case "float": return .float
        case "string": return .string
        case "object": return .object
        default: return .named(name)
        }
    }

    /// After `(`: `a: int, b: string)` or `one, two)`; `()` is an empty structure.
    private mutating func structureOrEnumeration() throws(VarlinkIDLError) -> VarlinkIDL.TypeExpression {
        var fields: [VarlinkIDL.Field] = []
        var cases: [String] = []
        while !accept(")") {
            if !fields.isEmpty || !cases.isEmpty { try expect(",") }
            let name = try word()
            if accept(":") {
                guard cases.isEmpty else { throw error("an enum cannot have typed fields") }
                fields.append(VarlinkIDL.Field(name: name, type: try typeExpression()))
            } else {
                guard fields.isEmpty else { throw error("expected ':' after '\(name)'") }
                cases.append(name)
            }
        }
        return cases.isEmpty ? .structure(fields) : .enumeration(cases)
    }
}
