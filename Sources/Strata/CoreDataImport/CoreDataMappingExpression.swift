import Foundation

/// A mapping model's value expression (`NSExpression` format), parsed: the subset that
/// Strata translates — `$source.attribute`, `$source`, `$manager`, string and number
/// constants, `nil`, and `FUNCTION(target, "selector", arguments…)`.
indirect enum CoreDataMappingExpression: Sendable, Hashable {
    /// `$source.a.b`: a key path of the source object (empty: `$source` itself).
    case source([String])
    /// Another variable: `$manager`, `$entityPolicy`, `$entityMapping`…
    case variable(String)
    /// A string constant.
    case string(String)
    /// A number constant, as written.
    case number(String)
    /// `nil`.
    case null
    /// `FUNCTION(target, "selector", arguments…)`.
    case function(target: CoreDataMappingExpression, selector: String, arguments: [CoreDataMappingExpression])

    /// The longest expression read (a real one is a line).
    static let maxLength = 4096

    struct ParseError: Error { var reason: String }

    /// Parses `text`.
    static func parse(_ text: String) throws(ParseError) -> CoreDataMappingExpression {
        guard text.utf8.count <= maxLength else { throw ParseError(reason: "longer than \(maxLength) bytes") }
        var parser = Parser(characters: Array(text.unicodeScalars))
        let expression = try parser.expression(depth: 0)
        parser.skipSpaces()
        guard parser.atEnd else { throw ParseError(reason: "unexpected text at character \(parser.position + 1)") }
        return expression
    }

    private struct Parser {
        let characters: [Unicode.Scalar]
        var position = 0
        var atEnd: Bool { position >= characters.count }

        mutating func skipSpaces() {
            while !atEnd, characters[position].properties.isWhitespace { position += 1 }
        }

        mutating func identifier() -> String {
            var name = ""
            while !atEnd, characters[position].properties.isAlphabetic || ("0"..."9").contains(characters[position]) || characters[position] == "_" || characters[position] == ":" {
                name.unicodeScalars.append(characters[position]); position += 1
            }
            return name
        }

        mutating func expect(_ c: Unicode.Scalar) throws(ParseError) {
            skipSpaces()
            guard !atEnd, characters[position] == c else { throw ParseError(reason: "expected '\(c)' at character \(position + 1)") }
            position += 1
        }

        mutating func expression(depth: Int) throws(ParseError) -> CoreDataMappingExpression {
            guard depth < 32 else { throw ParseError(reason: "nested more than 32 levels") }
            skipSpaces()
            guard !atEnd else { throw ParseError(reason: "the expression ends too early") }
            let c = characters[position]
            if c == "$" {
                position += 1
                let name = identifier()
                guard !name.isEmpty else { throw ParseError(reason: "a variable without a name at character \(position)") }
                var path: [String] = []
                while !atEnd, characters[position] == "." {
                    position += 1
                    let part = identifier()
                    guard !part.isEmpty else { throw ParseError(reason: "an empty key path component at character \(position)") }
                    path.append(part)
                }
                if name == "source" { return .source(path) }
                return path.isEmpty ? .variable(name) : .variable(([name] + path).joined(separator: "."))
            }
            if c == "\"" || c == "'" {
                position += 1
                var value = ""
                while !atEnd, characters[position] != c {
                    if characters[position] == "\\", position + 1 < characters.count { position += 1 }
                    value.unicodeScalars.append(characters[position]); position += 1
                }
                guard !atEnd else { throw ParseError(reason: "a string that is not closed") }
                position += 1
                return .string(value)
            }
            if ("0"..."9").contains(c) || c == "-" {
                var number = ""
                while !atEnd, ("0"..."9").contains(characters[position]) || characters[position] == "." || characters[position] == "-" {
                    number.unicodeScalars.append(characters[position]); position += 1
                }
                guard Double(number) != nil else { throw ParseError(reason: "'\(number)' is not a number") }
                return .number(number)
            }
            let word = identifier()
            switch word.uppercased() {
            case "NIL", "NULL": return .null
            case "FUNCTION":
                try expect("(")
                let target = try expression(depth: depth + 1)
                try expect(",")
                guard case .string(let selector) = try expression(depth: depth + 1) else {
                    throw ParseError(reason: "FUNCTION's second argument must be a selector string")
                }
                var arguments: [CoreDataMappingExpression] = []
                skipSpaces()
                while !atEnd, characters[position] == "," {
                    position += 1
                    arguments.append(try expression(depth: depth + 1))
                    skipSpaces()
                }
                try expect(")")
                return .function(target: target, selector: selector, arguments: arguments)
            case "": throw ParseError(reason: "unexpected '\(c)' at character \(position + 1)")
            default: throw ParseError(reason: "'\(word)' is not supported (only $source key paths, FUNCTION(…), constants and nil)")
            }
        }
    }
}
