import Foundation

/// A filter over an entity's objects, written in Apple's predicate format syntax and compiled
/// to parameterized SQL over the store's tables (see ``FetchQuery``).
///
/// ```swift
/// let p = try Predicate(format: "tailNumber BEGINSWITH[c] %@ AND flightHours > %d", "f-g", 100)
/// let q = try Predicate(format: "colorScheme.primary == %@ AND owner.name == %@", "red", "Air Lorraine")
/// let r = try Predicate(format: "ANY crew.name ==[cd] %@ OR crew.@count == 0", "Zoé")
/// ```
///
/// Parsing checks the syntax and binds the arguments; keypaths, types and operators are
/// checked when the predicate is compiled for an entity, which throws a ``PredicateError``
/// naming the entity and the keypath. See `docs/Predicates.md` for the full grammar.
///
/// Two predicates are equal when their trees are equal, whatever their spacing or spelling
/// (`&&` or `AND`, `=` or `==`).
public struct Predicate: Sendable, Hashable, CustomStringConvertible {
    /// The boolean tree.
    public var expression: PredicateExpression

    /// Wraps an expression tree built in code.
    public init(_ expression: PredicateExpression) {
        self.expression = expression
    }

    /// Parses `format`, substituting `arguments` for its `%@`, `%K`, `%d`, `%i`, `%ld`, `%f`,
    /// `%lf` specifiers in order.
    ///
    /// - Throws: ``PredicateError`` with the offset of the problem: a syntax error, a missing
    ///   argument, an extra argument, or an argument that does not fit its specifier.
    public init(format: String, _ arguments: any PredicateArgument...) throws(PredicateError) {
        try self.init(format: format, arguments: arguments)
    }

    /// Parses `format` with an array of arguments.
    public init(format: String, arguments: [any PredicateArgument]) throws(PredicateError) {
        var parser = PredicateParser(format: format, arguments: arguments.map(\.predicateOperand))
        self.expression = try parser.parse()
    }

    /// The predicate that matches every object (`TRUEPREDICATE`).
    public static let `true` = Predicate(.constant(true))
    /// The predicate that matches no object (`FALSEPREDICATE`).
    public static let `false` = Predicate(.constant(false))

    /// The predicate in format syntax with its arguments inlined, like NSPredicate's
    /// `predicateFormat`: `name ==[c] "Café" AND ANY tags.name IN {"a", "b"}`.
    public var description: String { expression.description }

    /// A single comparison built in code, without parsing.
    ///
    /// ```swift
    /// Predicate.comparison("owner.name", .equalTo, "Air Lorraine")
    /// ```
    public static func comparison(
        _ keyPath: String, _ op: PredicateOperator, _ value: any PredicateArgument, options: PredicateOptions = [],
        modifier: PredicateModifier = .direct
    ) -> Predicate {
        Predicate(.comparison(PredicateComparison(.keyPath(keyPath), op, value.predicateOperand, options: options,
                                                  modifier: modifier)))
    }

    // MARK: - Combinators

    /// All of `predicates` (`TRUEPREDICATE` when empty). Nested ANDs are flattened and
    /// `TRUEPREDICATE` operands dropped.
    public static func and(_ predicates: [Predicate]) -> Predicate {
        var parts: [PredicateExpression] = []
        for p in predicates {
            switch p.expression {
            case .constant(true): continue
            case .and(let inner): parts += inner
            default: parts.append(p.expression)
            }
        }
        if parts.contains(.constant(false)) { return .false }
        switch parts.count {
        case 0: return .true
        case 1: return Predicate(parts[0])
        default: return Predicate(.and(parts))
        }
    }

    /// Any of `predicates` (`FALSEPREDICATE` when empty). Nested ORs are flattened and
    /// `FALSEPREDICATE` operands dropped.
    public static func or(_ predicates: [Predicate]) -> Predicate {
        var parts: [PredicateExpression] = []
        for p in predicates {
            switch p.expression {
            case .constant(false): continue
            case .or(let inner): parts += inner
            default: parts.append(p.expression)
            }
        }
        if parts.contains(.constant(true)) { return .true }
        switch parts.count {
        case 0: return .false
        case 1: return Predicate(parts[0])
        default: return Predicate(.or(parts))
        }
    }

    /// The negation of `predicate`.
    public static func not(_ predicate: Predicate) -> Predicate {
        switch predicate.expression {
        case .constant(let b): return Predicate(.constant(!b))
        case .not(let inner): return Predicate(inner)
        default: return Predicate(.not(predicate.expression))
        }
    }

    /// `self AND other`.
    public func and(_ other: Predicate) -> Predicate { .and([self, other]) }
    /// `self OR other`.
    public func or(_ other: Predicate) -> Predicate { .or([self, other]) }
    /// `NOT self`.
    public var negated: Predicate { .not(self) }

    public static func && (lhs: Predicate, rhs: Predicate) -> Predicate { lhs.and(rhs) }
    public static func || (lhs: Predicate, rhs: Predicate) -> Predicate { lhs.or(rhs) }
    public static prefix func ! (predicate: Predicate) -> Predicate { predicate.negated }
}
