import Foundation

/// Parses Apple's predicate format syntax into a ``PredicateExpression``, binding arguments.
///
/// Grammar (keywords are case-insensitive; NOT binds tighter than AND, AND tighter than OR):
///
/// ```text
/// predicate  := or EOF
/// or         := and (("OR" | "||") and)*
/// and        := not (("AND" | "&&") not)*
/// not        := ("NOT" | "!") not | primary
/// primary    := "(" or ")" | "TRUEPREDICATE" | "FALSEPREDICATE" | comparison
/// comparison := ("ANY" | "SOME" | "ALL" | "NONE")? operand operator options? operand
/// operator   := "==" | "=" | "!=" | "<>" | "<" | "<=" | "=<" | ">" | ">=" | "=>"
///             | "BETWEEN" | "IN" | "BEGINSWITH" | "ENDSWITH" | "CONTAINS" | "LIKE" | "MATCHES"
/// options    := "[" ("c" | "d" | "n")+ "]"
/// operand    := keypath | string | number | "-" number | "{" (operand ("," operand)*)? "}"
///             | "nil" | "NULL" | "TRUE" | "YES" | "FALSE" | "NO" | "%@" | "%K" | "%d" | "%f" …
/// keypath    := (identifier | "#" identifier | "SELF" | "%K") ("." (identifier | "@count" | …))*
/// ```
struct PredicateParser {
    let format: String
    private let bytes: [UInt8]
    private let arguments: [PredicateOperand]
    private let limits: PredicateLimits
    private var argumentIndex = 0
    private var tokens: [Token] = []
    private var index = 0
    /// How many `(`, `NOT` and `{` enclose the current token (bounded by ``PredicateLimits/maxNestingDepth``,
    /// so that neither this recursive parser nor anything walking the tree can exhaust the stack).
    private var depth = 0

    init(format: String, arguments: [PredicateOperand], limits: PredicateLimits = .standard) {
        self.format = format
        self.bytes = Array(format.utf8)
        self.arguments = arguments
        self.limits = limits
    }

    mutating func parse() throws(FetchPredicateError) -> PredicateExpression {
        guard bytes.count <= limits.maxFormatLength else {
            throw FetchPredicateError(
                .limitExceeded,
                "the predicate is \(bytes.count) bytes long, more than the limit of \(limits.maxFormatLength) bytes (maxFormatLength); pass long values as %@ arguments or split the fetch",
                format: String(decoding: bytes.prefix(120), as: UTF8.self) + "…", position: nil)
        }
        tokens = try lex()
        let expression = try parseOr()
        switch current.kind {
        case .end: break
        case .symbol(")"):
            throw error(.syntax, "unexpected ')' with no matching '('; remove it or add a '(' before it", at: current)
        default:
            throw error(.syntax, "expected AND, OR or the end of the predicate, found \(current.display); join comparisons with AND or OR", at: current)
        }
        if argumentIndex < arguments.count {
            let extra = arguments.count - argumentIndex
            throw FetchPredicateError(
                .extraArgument,
                "\(arguments.count) argument\(arguments.count == 1 ? "" : "s") given but the format uses \(argumentIndex); remove the \(extra) extra argument\(extra == 1 ? "" : "s") or add specifiers",
                format: format, position: bytes.count)
        }
        return expression
    }

    // MARK: - Predicates

    private mutating func parseOr() throws(FetchPredicateError) -> PredicateExpression {
        var parts = [try parseAnd()]
        while matchKeyword("OR") || matchSymbol("||") { parts.append(try parseAnd()) }
        return parts.count == 1 ? parts[0] : .or(parts)
    }

    private mutating func parseAnd() throws(FetchPredicateError) -> PredicateExpression {
        var parts = [try parseNot()]
        while matchKeyword("AND") || matchSymbol("&&") { parts.append(try parseNot()) }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    private mutating func parseNot() throws(FetchPredicateError) -> PredicateExpression {
        let token = current
        if matchKeyword("NOT") || matchSymbol("!") {
            try enterNesting(at: token)
            defer { depth -= 1 }
            return .not(try parseNot())
        }
        return try parsePrimary()
    }

    /// Counts one more level of nesting, refusing to go past ``PredicateLimits/maxNestingDepth``.
    private mutating func enterNesting(at token: Token) throws(FetchPredicateError) {
        depth += 1
        guard depth <= limits.maxNestingDepth else {
            throw error(.limitExceeded, "the predicate nests more than \(limits.maxNestingDepth) levels deep here (parentheses, NOT and {lists} together; maxNestingDepth); flatten it: join conditions with AND/OR, drop double NOTs, pass lists as IN %@ arguments", at: token)
        }
    }

    private mutating func parsePrimary() throws(FetchPredicateError) -> PredicateExpression {
        let open = current
        if matchSymbol("(") {
            try enterNesting(at: open)
            defer { depth -= 1 }
            let inner = try parseOr()
            guard matchSymbol(")") else {
                throw error(.syntax, "expected ')' to close the '(' at offset \(open.offset), found \(current.display)", at: current)
            }
            return inner
        }
        if matchKeyword("TRUEPREDICATE") { return .constant(true) }
        if matchKeyword("FALSEPREDICATE") { return .constant(false) }
        if current.kind == .end || current.kind == .symbol(")") {
            throw error(.syntax, "expected a predicate; write a comparison such as name == %@ or TRUEPREDICATE", at: current)
        }
        return try parseComparison()
    }

    private mutating func parseComparison() throws(FetchPredicateError) -> PredicateExpression {
        var modifier = PredicateModifier.direct
        if matchKeyword("ANY") || matchKeyword("SOME") { modifier = .any }
        else if matchKeyword("ALL") { modifier = .all }
        else if matchKeyword("NONE") { modifier = .none }

        let leftToken = current
        let left = try parseOperand(after: modifier == .direct ? nil : modifier.rawValue)
        let operatorToken = current
        let op = try parseOperator(after: leftToken)
        var options: PredicateOptions = []
        if matchSymbol("[") { options = try parseOptions() }
        let rightToken = current
        let right = try parseOperand(after: operatorToken.text)

        switch op {
        case .between:
            guard case .list(let items) = right, items.count == 2 else {
                throw error(.syntax, "BETWEEN needs a list of two values: BETWEEN {low, high}, or BETWEEN %@ with a two-element array", at: rightToken)
            }
        case .in:
            if case .value = right {
                throw error(.syntax, "IN needs a list: IN {a, b}, IN %@ with an array or set, or IN a to-many keypath", at: rightToken)
            }
        default:
            break
        }
        let source = PredicateSource(format: format, leftOffset: leftToken.offset, operatorOffset: operatorToken.offset,
                                     rightOffset: rightToken.offset)
        return .comparison(PredicateComparison(left, op, right, options: options, modifier: modifier, source: source))
    }

    private static let operatorKeywords: [String: PredicateOperator] = [
        "BETWEEN": .between, "IN": .in, "BEGINSWITH": .beginsWith, "ENDSWITH": .endsWith,
        "CONTAINS": .contains, "LIKE": .like, "MATCHES": .matches,
    ]

    private static let operatorSymbols: [String: PredicateOperator] = [
        "==": .equalTo, "=": .equalTo, "!=": .notEqualTo, "<>": .notEqualTo, "<": .lessThan,
        "<=": .lessThanOrEqualTo, "=<": .lessThanOrEqualTo, ">": .greaterThan, ">=": .greaterThanOrEqualTo,
        "=>": .greaterThanOrEqualTo,
    ]

    private static let operatorList = "==, !=, <, <=, >, >=, BETWEEN, IN, BEGINSWITH, ENDSWITH, CONTAINS, LIKE or MATCHES"

    private mutating func parseOperator(after left: Token) throws(FetchPredicateError) -> PredicateOperator {
        let token = current
        switch token.kind {
        case .symbol(let s):
            if let op = Self.operatorSymbols[s] { advance(); return op }
        case .word(let w):
            if let op = Self.operatorKeywords[w.uppercased()] { advance(); return op }
            throw error(.syntax, "unknown operator '\(w)'; use \(Self.operatorList)", at: token)
        case .end:
            throw error(.syntax, "expected an operator after '\(left.text)'; use \(Self.operatorList)", at: token)
        default:
            break
        }
        throw error(.syntax, "expected an operator, found \(token.display); use \(Self.operatorList)", at: token)
    }

    private mutating func parseOptions() throws(FetchPredicateError) -> PredicateOptions {
        let token = current
        guard case .word(let letters) = token.kind else {
            throw error(.syntax, "expected comparison options after '[': c, d or cd", at: token)
        }
        advance()
        var options: PredicateOptions = []
        for letter in letters.lowercased() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            case "n", "l": break  // normalized / locale-sensitive: hints only, accepted as in Apple's parser
            default:
                throw error(.syntax, "unknown comparison option '\(letter)'; use [c] (case-insensitive), [d] (diacritic-insensitive) or [cd]", at: token)
            }
        }
        guard matchSymbol("]") else {
            throw error(.syntax, "expected ']' to close the comparison options, found \(current.display)", at: current)
        }
        return options
    }

    // MARK: - Operands

    private static let reserved: Set<String> = [
        "AND", "OR", "NOT", "ANY", "SOME", "ALL", "NONE", "IN", "LIKE", "MATCHES", "CONTAINS", "BEGINSWITH",
        "ENDSWITH", "BETWEEN", "NULL", "NIL", "SELF", "TRUE", "YES", "FALSE", "NO", "TRUEPREDICATE",
        "FALSEPREDICATE", "FIRST", "LAST", "SIZE", "ANYKEY", "SUBQUERY", "FETCH", "CAST", "FUNCTION",
    ]

    private mutating func parseOperand(after context: String?) throws(FetchPredicateError) -> PredicateOperand {
        let token = current
        let what = context.map { "after '\($0)'" } ?? "at the start of a comparison"
        switch token.kind {
        case .end:
            throw error(.syntax, "expected a value \(what); add a literal, a %@ argument or a keypath", at: token)
        case .string(let s):
            advance()
            return .value(.string(s))
        case .number(let text):
            advance()
            return .value(try number(text, negative: false, at: token))
        case .symbol("-"):
            advance()
            guard case .number(let text) = current.kind else {
                throw error(.syntax, "expected a number after '-'", at: current)
            }
            let numberToken = current
            advance()
            return .value(try number(text, negative: true, at: numberToken))
        case .symbol("{"):
            advance()
            try enterNesting(at: token)
            defer { depth -= 1 }
            var items: [PredicateOperand] = []
            if matchSymbol("}") { return .list(items) }
            repeat {
                items.append(try parseOperand(after: items.isEmpty ? "{" : ","))
            } while matchSymbol(",")
            guard matchSymbol("}") else {
                throw error(.syntax, "expected ',' or '}' in the list opened at offset \(token.offset), found \(current.display)", at: current)
            }
            return .list(items)
        case .specifier(let spec):
            advance()
            let argument = try takeArgument(for: spec, at: token)
            if spec == "K" {
                guard case .value(.string(let keyPath)) = argument, !keyPath.isEmpty else {
                    throw error(.invalidArgument, "%K needs a non-empty String naming a keypath, got \(Self.describe(argument))", at: token)
                }
                return .keyPath(try parseKeyPathTail(keyPath))
            }
            return argument
        case .variable(let name):
            throw error(.unsupported, "variables ($\(name)) are not supported; pass the value as a %@ argument", at: token)
        case .escapedWord(let name):
            advance()
            return .keyPath(try parseKeyPathTail(name))
        case .word(let word):
            let upper = word.uppercased()
            switch upper {
            case "NIL", "NULL": advance(); return .value(.null)
            case "TRUE", "YES": advance(); return .value(.bool(true))
            case "FALSE", "NO": advance(); return .value(.bool(false))
            case "SELF":
                advance()
                let path = try parseKeyPathTail("self")
                return .keyPath(path.hasPrefix("self.") ? String(path.dropFirst(5)) : path)
            case "SUBQUERY", "FUNCTION", "FETCH", "CAST", "FIRST", "LAST", "SIZE", "ANYKEY":
                throw error(.unsupported, "\(upper) expressions are not supported; see docs/Predicates.md for the supported syntax, or escape a keypath named '\(word)' as #\(word)", at: token)
            default:
                if Self.reserved.contains(upper) {
                    throw error(.syntax, "expected a value \(what), found the keyword '\(word)'; escape a keypath named '\(word)' as #\(word)", at: token)
                }
                if word.hasPrefix("@") {
                    throw error(.syntax, "'\(word)' must follow a to-many keypath, as in items.\(word)", at: token)
                }
                advance()
                return .keyPath(try parseKeyPathTail(word))
            }
        case .symbol(let s):
            throw error(.syntax, "expected a value \(what), found '\(s)'", at: token)
        }
    }

    /// Continues a keypath with `.component` parts.
    private mutating func parseKeyPathTail(_ head: String) throws(FetchPredicateError) -> String {
        var path = head
        while case .symbol(".") = current.kind {
            advance()
            switch current.kind {
            case .word(let w), .escapedWord(let w):
                path += "." + w
                advance()
            default:
                throw error(.syntax, "expected a property name after '.' in '\(path).', found \(current.display)", at: current)
            }
        }
        return path
    }

    private mutating func takeArgument(for spec: String, at token: Token) throws(FetchPredicateError) -> PredicateOperand {
        guard argumentIndex < arguments.count else {
            throw error(.missingArgument, "no argument for %\(spec) (argument \(argumentIndex + 1)); pass \(argumentIndex + 1) argument\(argumentIndex == 0 ? "" : "s") or remove the specifier", at: token)
        }
        let argument = arguments[argumentIndex]
        argumentIndex += 1
        switch spec {
        case "@", "K":
            return argument
        case "f", "lf", "g", "e":
            switch argument {
            case .value(.int(let i)): return .value(.double(Double(i)))
            case .value(.double), .value(.decimal): return argument
            default: throw error(.invalidArgument, "%\(spec) needs a number, got \(Self.describe(argument)); use %@ for other values", at: token)
            }
        default:
            switch argument {
            case .value(.int): return argument
            case .value(.bool(let b)): return .value(.int(b ? 1 : 0))
            case .value(.double(let d)) where d.rounded() == d && abs(d) < 9.2e18: return .value(.int(Int64(d)))
            default: throw error(.invalidArgument, "%\(spec) needs an integer, got \(Self.describe(argument)); use %@ for other values", at: token)
            }
        }
    }

    private static func describe(_ operand: PredicateOperand) -> String {
        switch operand {
        case .value(let v): return PredicateCompiler.article(v.kindName)
        case .list: return "a list"
        case .keyPath: return "a keypath"
        }
    }

    private func number(_ text: String, negative: Bool, at token: Token) throws(FetchPredicateError) -> Value {
        let lower = text.lowercased()
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where lower.hasPrefix(prefix) {
            guard let magnitude = UInt64(lower.dropFirst(2), radix: radix),
                  let value = negative ? (magnitude == UInt64(Int64.max) + 1 ? Int64.min : Int64(exactly: magnitude).map { -$0 })
                                       : Int64(exactly: magnitude)
            else {
                throw error(.syntax, "the number \(text) is not a valid 64-bit integer", at: token)
            }
            return .int(value)
        }
        guard lower.allSatisfy({ $0.isNumber || $0 == "." || $0 == "e" || $0 == "+" || $0 == "-" }) else {
            throw error(.syntax, "'\(text)' is not a valid number; separate names from numbers with a space or an operator", at: token)
        }
        if !lower.contains(where: { $0 == "." || $0 == "e" }) {
            guard let value = Int64((negative ? "-" : "") + text) else {
                throw error(.syntax, "the number \(negative ? "-" : "")\(text) does not fit in a 64-bit integer; write it as a decimal with a '.' or pass it as %@", at: token)
            }
            return .int(value)
        }
        guard let value = Double((negative ? "-" : "") + text) else {
            throw error(.syntax, "'\(text)' is not a valid number", at: token)
        }
        return .double(value)
    }

    // MARK: - Tokens

    private var current: Token { tokens[index] }

    private mutating func advance() {
        if index < tokens.count - 1 { index += 1 }
    }

    private mutating func matchSymbol(_ symbol: String) -> Bool {
        if case .symbol(let s) = current.kind, s == symbol { advance(); return true }
        return false
    }

    private mutating func matchKeyword(_ keyword: String) -> Bool {
        if case .word(let w) = current.kind, w.uppercased() == keyword { advance(); return true }
        return false
    }

    private func error(_ code: FetchPredicateError.Code, _ reason: String, at token: Token) -> FetchPredicateError {
        FetchPredicateError(code, reason, format: format, position: token.offset)
    }
}

// MARK: - Lexer

extension PredicateParser {
    struct Token {
        enum Kind: Equatable {
            case word(String)
            case escapedWord(String)
            case string(String)
            case number(String)
            case specifier(String)
            case variable(String)
            case symbol(String)
            case end
        }
        var kind: Kind
        /// UTF-8 offset in the format.
        var offset: Int
        /// The token's text as written.
        var text: String

        var display: String {
            switch kind {
            case .end: return "the end of the predicate"
            case .string: return "the string \(text)"
            default: return "'\(text)'"
            }
        }
    }

    private static func isIdentifierStart(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F || b >= 0x80
    }

    private static func isIdentifierPart(_ b: UInt8) -> Bool {
        isIdentifierStart(b) || (b >= 0x30 && b <= 0x39)
    }

    private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    private func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }

    private func lexError(_ reason: String, at offset: Int) -> FetchPredicateError {
        FetchPredicateError(.syntax, reason, format: format, position: offset)
    }

    private func lex() throws(FetchPredicateError) -> [Token] {
        var tokens: [Token] = []
        var i = 0
        let n = bytes.count
        func identifierEnd(from start: Int) -> Int {
            var j = start
            while j < n, Self.isIdentifierPart(bytes[j]) { j += 1 }
            return j
        }
        while i < n {
            let b = bytes[i]
            let start = i
            switch b {
            case 0x20, 0x09, 0x0A, 0x0D:
                i += 1
            case _ where Self.isIdentifierStart(b):
                i = identifierEnd(from: i)
                tokens.append(Token(kind: .word(text(start..<i)), offset: start, text: text(start..<i)))
            case UInt8(ascii: "@"), UInt8(ascii: "#"), UInt8(ascii: "$"):
                let end = identifierEnd(from: i + 1)
                guard end > i + 1, Self.isIdentifierStart(bytes[i + 1]) else {
                    throw lexError("'\(Character(UnicodeScalar(b)))' must be followed by a name", at: start)
                }
                let name = text(i + 1..<end)
                let kind: Token.Kind = b == UInt8(ascii: "@") ? .word("@" + name)
                    : b == UInt8(ascii: "#") ? .escapedWord(name) : .variable(name)
                tokens.append(Token(kind: kind, offset: start, text: text(start..<end)))
                i = end
            case _ where Self.isDigit(b):
                i = lexNumber(from: i)
                tokens.append(Token(kind: .number(text(start..<i)), offset: start, text: text(start..<i)))
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                let (value, end) = try lexString(from: i)
                tokens.append(Token(kind: .string(value), offset: start, text: text(start..<end)))
                i = end
            case UInt8(ascii: "%"):
                let known: Set<String> = ["@", "K", "d", "i", "u", "ld", "li", "lu", "lld", "lli", "llu", "f", "lf", "g", "e"]
                var spec = ""
                for length in [3, 2, 1] where spec.isEmpty && i + 1 + length <= n {
                    let candidate = text(i + 1..<i + 1 + length)
                    if known.contains(candidate) { spec = candidate }
                }
                guard !spec.isEmpty else {
                    let shown = i + 1 < n ? String(text(i + 1..<n).prefix(1)) : ""
                    throw lexError("unknown format specifier '%\(shown)'; use %@ (value), %K (keypath), %d (integer) or %f (number)", at: start)
                }
                let j = i + 1 + spec.utf8.count
                tokens.append(Token(kind: .specifier(spec), offset: start, text: text(start..<j)))
                i = j
            default:
                let two = i + 1 < n ? text(i..<i + 2) : ""
                let symbols2: Set<String> = ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||"]
                if symbols2.contains(two) {
                    tokens.append(Token(kind: .symbol(two), offset: start, text: two))
                    i += 2
                    continue
                }
                let one = String(UnicodeScalar(b))
                if "()[]{},.=<>!-".contains(one) {
                    tokens.append(Token(kind: .symbol(one), offset: start, text: one))
                    i += 1
                    continue
                }
                switch one {
                case "&": throw lexError("unexpected '&'; use && or AND", at: start)
                case "|": throw lexError("unexpected '|'; use || or OR", at: start)
                case "+", "*", "/", "^":
                    throw lexError("arithmetic ('\(one)') is not supported in predicates; compute the value and pass it as %@", at: start)
                default:
                    let character = String(decoding: bytes[i..<min(n, i + 4)], as: UTF8.self).first.map(String.init) ?? one
                    throw lexError("unexpected character '\(character)'", at: start)
                }
            }
        }
        tokens.append(Token(kind: .end, offset: n, text: ""))
        return tokens
    }

    private func lexNumber(from start: Int) -> Int {
        let n = bytes.count
        var i = start
        if bytes[i] == UInt8(ascii: "0"), i + 1 < n, [UInt8(ascii: "x"), UInt8(ascii: "X"), UInt8(ascii: "o"), UInt8(ascii: "O"),
                                                     UInt8(ascii: "b"), UInt8(ascii: "B")].contains(bytes[i + 1]) {
            i += 2
            while i < n, Self.isIdentifierPart(bytes[i]) { i += 1 }
            return i
        }
        while i < n, Self.isDigit(bytes[i]) { i += 1 }
        if i + 1 < n, bytes[i] == UInt8(ascii: "."), Self.isDigit(bytes[i + 1]) {
            i += 1
            while i < n, Self.isDigit(bytes[i]) { i += 1 }
        }
        if i < n, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            var j = i + 1
            if j < n, bytes[j] == UInt8(ascii: "+") || bytes[j] == UInt8(ascii: "-") { j += 1 }
            if j < n, Self.isDigit(bytes[j]) {
                i = j
                while i < n, Self.isDigit(bytes[i]) { i += 1 }
            }
        }
        // A number glued to letters (12abc) is lexed whole and rejected by the number parser.
        while i < n, Self.isIdentifierPart(bytes[i]) { i += 1 }
        return i
    }

    private func lexString(from start: Int) throws(FetchPredicateError) -> (String, Int) {
        let quote = bytes[start]
        var out: [UInt8] = []
        var i = start + 1
        let n = bytes.count
        while i < n {
            let b = bytes[i]
            if b == quote { return (String(decoding: out, as: UTF8.self), i + 1) }
            if b == UInt8(ascii: "\\"), i + 1 < n {
                let e = bytes[i + 1]
                i += 2
                switch e {
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "0"): out.append(0x00)
                case UInt8(ascii: "\\"), UInt8(ascii: "'"), UInt8(ascii: "\""): out.append(e)
                case UInt8(ascii: "u"):
                    guard i + 4 <= n, let code = UInt32(text(i..<i + 4), radix: 16), let scalar = UnicodeScalar(code) else {
                        throw lexError("invalid \\u escape: write \\u followed by four hex digits", at: i - 2)
                    }
                    out += Array(String(scalar).utf8)
                    i += 4
                default:
                    // Unknown escapes stay as written, so that LIKE and MATCHES patterns keep theirs (\*, \d).
                    out += [UInt8(ascii: "\\"), e]
                }
                continue
            }
            out.append(b)
            i += 1
        }
        throw lexError("unterminated string; close it with \(Character(UnicodeScalar(quote)))", at: start)
    }
}

// MARK: - Rendering keypaths

extension PredicateParser {
    /// A keypath as it must be written in a format: reserved words and odd names escaped with `#`.
    static func renderKeyPath(_ keyPath: String) -> String {
        keyPath.split(separator: ".", omittingEmptySubsequences: false).enumerated().map { i, part -> String in
            let s = String(part)
            if s == "self" && i == 0 { return "SELF" }
            if s.hasPrefix("@") { return s }
            let bytes = Array(s.utf8)
            let plain = !bytes.isEmpty && isIdentifierStart(bytes[0]) && bytes.allSatisfy(isIdentifierPart)
            return plain && !reserved.contains(s.uppercased()) ? s : "#" + s
        }.joined(separator: ".")
    }
}
