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
        case .string(let s): return s.jsonQuoted
        case .int(let i): return String(i)
        case .double(let d): return d.isFinite ? String(d) : String(d).jsonQuoted
        case .decimal(let d): return "\(d)".jsonQuoted
        case .bool(let b): return b ? "TRUE" : "FALSE"
        case .date(let d): return Value.isoString(d).jsonQuoted
        case .data(let d): return "<\(d.count) bytes>".jsonQuoted
        case .uuid(let u): return u.uuidString.jsonQuoted
        case .uri(let u): return u.absoluteString.jsonQuoted
        }
    }
}
