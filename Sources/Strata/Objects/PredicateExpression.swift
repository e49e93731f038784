import Foundation

/// The boolean tree of a ``FetchPredicate`` (NSPredicate's compound and comparison predicates).
public indirect enum PredicateExpression: Sendable, Hashable {
    /// `TRUEPREDICATE` / `FALSEPREDICATE`.
    case constant(Bool)
    /// `left op right`, with an optional ANY/ALL/NONE modifier.
    case comparison(PredicateComparison)
    /// `NOT p` / `!p`.
    case not(PredicateExpression)
    /// `p AND q AND …` / `&&`.
    case and([PredicateExpression])
    /// `p OR q OR …` / `||`.
    case or([PredicateExpression])
}

/// One side of a comparison (NSExpression's constant, keypath and aggregate expressions).
public indirect enum PredicateOperand: Sendable, Hashable {
    /// A keypath: `name`, `colorScheme.primary`, `owner.name`, `tags.@count`, `self`.
    case keyPath(String)
    /// A constant: a literal or a `%@`/`%d`/`%f` argument.
    case value(Value)
    /// A list: `{1, 2, 3}` or an array/set argument, for `IN` and `BETWEEN`.
    case list([PredicateOperand])
}

/// The operator of a comparison.
public enum PredicateOperator: String, Sendable, Hashable, CaseIterable {
    /// `==`, `=`: equal (`nil` compiles to `IS NULL`).
    case equalTo = "=="
    /// `!=`, `<>`: not equal, null-safe (`IS NOT`).
    case notEqualTo = "!="
    /// `<`
    case lessThan = "<"
    /// `<=`, `=<`
    case lessThanOrEqualTo = "<="
    /// `>`
    case greaterThan = ">"
    /// `>=`, `=>`
    case greaterThanOrEqualTo = ">="
    /// `BETWEEN {low, high}`: inclusive range.
    case between = "BETWEEN"
    /// `IN {…}`, `IN %@`, or `value IN toManyKeyPath`.
    case `in` = "IN"
    /// `BEGINSWITH`: string prefix.
    case beginsWith = "BEGINSWITH"
    /// `ENDSWITH`: string suffix.
    case endsWith = "ENDSWITH"
    /// `CONTAINS`: substring, or (on a to-many relationship) a related object's primary key.
    case contains = "CONTAINS"
    /// `LIKE`: whole-string wildcard match with `*` and `?`.
    case like = "LIKE"
    /// `MATCHES`: whole-string ICU regular expression match.
    case matches = "MATCHES"

    /// Whether the operator compares strings (and needs string operands).
    public var isStringOperator: Bool {
        switch self {
        case .beginsWith, .endsWith, .contains, .like, .matches: return true
        default: return false
        }
    }

    /// The operator that gives the same result with the operands swapped, if any.
    var swapped: PredicateOperator? {
        switch self {
        case .equalTo, .notEqualTo: return self
        case .lessThan: return .greaterThan
        case .lessThanOrEqualTo: return .greaterThanOrEqualTo
        case .greaterThan: return .lessThan
        case .greaterThanOrEqualTo: return .lessThanOrEqualTo
        default: return nil
        }
    }
}

/// String comparison options: `[c]`, `[d]`, `[cd]`.
public struct PredicateOptions: OptionSet, Sendable, Hashable {
    /// The option bits.
    public let rawValue: Int
    /// Options from their bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `[c]`: case-insensitive (Unicode case folding, not just ASCII).
    public static let caseInsensitive = PredicateOptions(rawValue: 1)
    /// `[d]`: diacritic-insensitive (`"Café" ==[d] "Cafe"`).
    public static let diacriticInsensitive = PredicateOptions(rawValue: 2)

    /// `[c]`, `[d]`, `[cd]` or an empty string.
    public var formatSuffix: String {
        let letters = (contains(.caseInsensitive) ? "c" : "") + (contains(.diacriticInsensitive) ? "d" : "")
        return letters.isEmpty ? "" : "[\(letters)]"
    }
}

/// `ANY`/`SOME`, `ALL`, `NONE` before a comparison.
public enum PredicateModifier: String, Sendable, Hashable {
    /// No modifier. A to-many keypath on the left is implicitly `ANY`, like Core Data's SQL store.
    case direct = ""
    case any = "ANY"
    case all = "ALL"
    case none = "NONE"
}

/// `modifier left op[options] right`.
public struct PredicateComparison: Sendable, Hashable {
    /// `ANY`, `ALL`, `NONE` or direct.
    public var modifier: PredicateModifier
    /// The left operand (usually a key path).
    public var left: PredicateOperand
    /// The comparison.
    public var `operator`: PredicateOperator
    /// `[c]`, `[d]`: case and diacritic insensitivity.
    public var options: PredicateOptions
    /// The right operand.
    public var right: PredicateOperand
    /// Where the comparison came from, for error messages. Not part of equality.
    public var source: PredicateSource

    /// A comparison of `left` and `right`.
    public init(
        _ left: PredicateOperand, _ op: PredicateOperator, _ right: PredicateOperand, options: PredicateOptions = [],
        modifier: PredicateModifier = .direct, source: PredicateSource = PredicateSource()
    ) {
        self.modifier = modifier
        self.left = left
        self.operator = op
        self.options = options
        self.right = right
        self.source = source
    }
}

/// The format a comparison was parsed from and the UTF-8 offsets of its parts, so that a
/// semantic error found at compile time can point into the original format.
///
/// Two sources always compare equal and hash alike: a predicate's identity is its tree, not
/// the text it was written in.
public struct PredicateSource: Sendable, Hashable {
    /// The predicate's format text.
    public var format: String
    /// Where the left operand starts in ``format``.
    public var leftOffset: Int?
    /// Where the operator starts in ``format``.
    public var operatorOffset: Int?
    /// Where the right operand starts in ``format``.
    public var rightOffset: Int?

    /// A position in a predicate's format (for error messages).
    public init(format: String = "", leftOffset: Int? = nil, operatorOffset: Int? = nil, rightOffset: Int? = nil) {
        self.format = format
        self.leftOffset = leftOffset
        self.operatorOffset = operatorOffset
        self.rightOffset = rightOffset
    }

    /// Always equal: where a comparison came from does not change what it means.
    public static func == (lhs: PredicateSource, rhs: PredicateSource) -> Bool { true }
    /// Hashes nothing (see `==`).
    public func hash(into hasher: inout Hasher) {}
}

// MARK: - Format rendering

extension PredicateExpression: CustomStringConvertible {
    /// The expression in predicate format syntax, parseable again (dates, UUIDs and URIs as
    /// strings, which are coerced back to the attribute's type; data as a byte count).
    public var description: String { render(parentPrecedence: 0) }

    private var precedence: Int {
        switch self {
        case .or: return 1
        case .and: return 2
        case .not: return 3
        case .constant, .comparison: return 4
        }
    }

    private func render(parentPrecedence: Int) -> String {
        let text: String
        switch self {
        case .constant(let b): text = b ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .comparison(let c): text = c.description
        case .not(let e): text = "NOT " + e.render(parentPrecedence: 3)
        case .and(let es): text = es.map { $0.render(parentPrecedence: 2) }.joined(separator: " AND ")
        case .or(let es): text = es.map { $0.render(parentPrecedence: 1) }.joined(separator: " OR ")
        }
        return precedence < parentPrecedence ? "(\(text))" : text
    }
}

extension PredicateComparison: CustomStringConvertible {
    /// The operator as the format writes it.
    public var description: String {
        let prefix = modifier == .direct ? "" : modifier.rawValue + " "
        return "\(prefix)\(left) \(self.operator.rawValue)\(options.formatSuffix) \(right)"
    }
}

extension PredicateOperand: CustomStringConvertible {
    /// The expression in the predicate format.
    public var description: String {
        switch self {
        case .keyPath(let k): return PredicateParser.renderKeyPath(k)
        case .value(let v): return PredicateOperand.render(v)
        case .list(let items): return "{" + items.map(\.description).joined(separator: ", ") + "}"
        }
    }

    static func render(_ value: Value) -> String {
        switch value {
        case .null: return "nil"
        case .string(let s): return quote(s)
        case .int(let i): return String(i)
        case .double(let d): return d.isFinite ? String(d) : quote(String(d))
        case .decimal(let d): return quote("\(d)")
        case .bool(let b): return b ? "TRUE" : "FALSE"
        case .date(let d): return quote(Value.isoString(d))
        case .data(let d): return quote("<\(d.count) bytes>")
        case .uuid(let u): return quote(u.uuidString)
        case .uri(let u): return quote(u.absoluteString)
        }
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
