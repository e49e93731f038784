import Foundation

/// A field's type as the `.varlink` file spells it: a name (`string`, `StoreInfo`), `?T`,
/// `[]T`, `[string]T` or an inline enum `(a, b, c)`.
indirect enum IDLType: Equatable {
    case name(String)
    case optional(IDLType)
    case array(IDLType)
    case map(IDLType)
    case enumeration([String])

    /// The IDL spelling: `?[]string`, `(a, b)`.
    var text: String {
        switch self {
        case .name(let name): name
        case .optional(let inner): "?" + inner.text
        case .array(let inner): "[]" + inner.text
        case .map(let inner): "[string]" + inner.text
        case .enumeration(let cases): "(\(cases.joined(separator: ", ")))"
        }
    }

    /// The cases of the enum inside the type (`?[](a, b)`), or nil.
    var enumCases: [String]? {
        switch self {
        case .enumeration(let cases): cases
        case .optional(let inner), .array(let inner), .map(let inner): inner.enumCases
        case .name: nil
        }
    }
}

/// One `name: type` of a structure.
struct IDLField: Equatable {
    var name: String
    var type: IDLType
}

/// A `.varlink` file read for generation: its `type`, `method` and `error` declarations in the
/// order they are declared. Comments (`#` to the end of the line) are dropped.
struct IDLFile {
    var name = ""
    var types: [(name: String, fields: [IDLField])] = []
    var methods: [(name: String, parameters: [IDLField], reply: [IDLField])] = []
    var errors: [(name: String, fields: [IDLField])] = []

    private let file: String
    private var tokens: [String] = []
    private var index = 0

    /// Reads `text`; `file` names the file in errors.
    init(text: String, file: String) throws {
        self.file = file
        let source = text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? "" }
            .joined(separator: "\n")
        tokens = try Self.tokens(of: source, file: file)
        try expect("interface")
        name = try next()
        while index < tokens.count {
            let keyword = try next(), declared = try next()
            switch keyword {
            case "type":
                types.append((declared, try structure("type \(declared)")))
            case "method":
                let parameters = try structure("method \(declared)")
                try expect("->")
                methods.append((declared, parameters, try structure("method \(declared) reply")))
            case "error":
                errors.append((declared, try structure("error \(declared)")))
            default:
                throw CodegenError("\(file): '\(keyword)' where a type, method or error was expected")
            }
        }
    }

    /// `->`, `[string]`, `[]`, one of `(),:?`, or a name (letters, digits, `_` and `.`).
    private static func tokens(of text: String, file: String) throws -> [String] {
        let characters = Array(text)
        var tokens: [String] = []
        var position = 0
        func isNameStart(_ c: Character) -> Bool { c == "_" || (c.isASCII && c.isLetter) }
        func isName(_ c: Character) -> Bool { isNameStart(c) || c == "." || (c.isASCII && c.isNumber) }
        while true {
            while position < characters.count, characters[position].isWhitespace { position += 1 }
            guard position < characters.count else { break }
            let rest = characters[position...]
            if rest.starts(with: "->") {
                tokens.append("->")
            } else if rest.starts(with: "[string]") {
                tokens.append("[string]")
            } else if rest.starts(with: "[]") {
                tokens.append("[]")
            } else if "(),:?".contains(characters[position]) {
                tokens.append(String(characters[position]))
            } else if isNameStart(characters[position]) {
                tokens.append(String(rest.prefix { isName($0) }))
            } else {
                let shown = String(rest.prefix(30)).split(separator: "\n", omittingEmptySubsequences: false).first ?? ""
                throw CodegenError("\(file): cannot read '\(shown)'")
            }
            position += tokens[tokens.count - 1].count
        }
        return tokens
    }

    private mutating func next() throws -> String {
        guard index < tokens.count else { throw CodegenError("\(file): the file ends early") }
        index += 1
        return tokens[index - 1]
    }

    private func peek(_ offset: Int = 0) -> String? {
        index + offset < tokens.count ? tokens[index + offset] : nil
    }

    private mutating func expect(_ token: String) throws {
        let found = try next()
        if found != token { throw CodegenError("\(file): '\(token)' expected, found '\(found)'") }
    }

    /// `(name: type, …)`.
    private mutating func structure(_ at: String) throws -> [IDLField] {
        try expect("(")
        var fields: [IDLField] = []
        while peek() != ")" {
            let field = try next()
            guard peek() == ":" else {
                throw CodegenError("\(file): \(at): '\(field)' has no type (a named enum type is not supported here: declare the enum on the field)")
            }
            _ = try next()
            fields.append(IDLField(name: field, type: try typeExpression("\(at).\(field)")))
            if peek() == "," { _ = try next() }
        }
        _ = try next()
        return fields
    }

    private mutating func typeExpression(_ at: String) throws -> IDLType {
        let token = try next()
        switch token {
        case "?": return .optional(try typeExpression(at))
        case "[]": return .array(try typeExpression(at))
        case "[string]":
            if peek() == "(" { throw CodegenError("\(file): \(at): a set `[string]()` has no Swift spelling here") }
            return .map(try typeExpression(at))
        case "(":
            if peek(1) == ":" || peek() == ")" {
                throw CodegenError("\(file): \(at): an inline structure has no Swift spelling here; declare a named type")
            }
            var cases = [try next()]
            while peek() == "," {
                _ = try next()
                cases.append(try next())
            }
            try expect(")")
            return .enumeration(cases)
        default:
            return .name(token)
        }
    }
}
