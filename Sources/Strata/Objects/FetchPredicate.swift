import Foundation

/// A filter over an entity's objects, written in Apple's predicate format syntax and compiled
/// to parameterized SQL over the store's tables (see ``FetchQuery``).
///
/// ```swift
/// let p = try FetchPredicate(format: "tailNumber BEGINSWITH[c] %@ AND flightHours > %d", "f-g", 100)
/// let q = try FetchPredicate(format: "colorScheme.primary == %@ AND owner.name == %@", "red", "Air Lorraine")
/// let r = try FetchPredicate(format: "ANY crew.name ==[cd] %@ OR crew.@count == 0", "Zoé")
/// ```
///
/// Parsing checks the syntax and binds the arguments; keypaths, types and operators are
/// checked when the predicate is compiled for an entity, which throws a ``FetchPredicateError``
/// naming the entity and the keypath. See `docs/Predicates.md` for the full grammar.
///
/// Two predicates are equal when their trees are equal, whatever their spacing or spelling
/// (`&&` or `AND`, `=` or `==`).
public struct FetchPredicate: Sendable, Hashable, CustomStringConvertible {
    /// The boolean tree.
    public var expression: PredicateExpression

    /// Wraps an expression tree built in code.
    public init(_ expression: PredicateExpression) {
        self.expression = expression
    }

    /// Parses `format`, substituting `arguments` for its `%@`, `%K`, `%d`, `%i`, `%ld`, `%f`,
    /// `%lf` specifiers in order.
    ///
    /// - Throws: ``FetchPredicateError`` with the offset of the problem: a syntax error, a missing
    ///   argument, an extra argument, or an argument that does not fit its specifier.
    public init(format: String, _ arguments: any PredicateArgument...) throws(FetchPredicateError) {
        try self.init(format: format, arguments: arguments)
    }

    /// Parses `format` with an array of arguments.
    ///
    /// A format longer than ``PredicateLimits/maxFormatLength`` or nested deeper than
    /// ``PredicateLimits/maxNestingDepth`` is refused (code ``FetchPredicateError/Code/limitExceeded``).
    public init(format: String, arguments: [any PredicateArgument]) throws(FetchPredicateError) {
        // Parsed once per shape of format and arguments (``PredicateParseCache``).
        self.expression = try PredicateParseCache.parse(format, arguments: arguments.map(\.predicateOperand))
    }

    /// Parses `format` under other limits (benchmarks and tests).
    package init(format: String, arguments: [any PredicateArgument], limits: PredicateLimits) throws(FetchPredicateError) {
        var parser = PredicateParser(format: format, arguments: arguments.map(\.predicateOperand), limits: limits)
        self.expression = try parser.parse()
    }

    /// The predicate that matches every object (`TRUEPREDICATE`).
    public static let `true` = FetchPredicate(.constant(true))
    /// The predicate that matches no object (`FALSEPREDICATE`).
    public static let `false` = FetchPredicate(.constant(false))

    /// The predicate in format syntax with its arguments inlined, like NSPredicate's
    /// `predicateFormat`: `name ==[c] "Café" AND ANY tags.name IN {"a", "b"}`.
    public var description: String { expression.description }

    /// A single comparison built in code, without parsing.
    ///
    /// ```swift
    /// FetchPredicate.comparison("owner.name", .equalTo, "Air Lorraine")
    /// ```
    public static func comparison(
        _ keyPath: String, _ op: PredicateOperator, _ value: any PredicateArgument, options: PredicateOptions = [],
        modifier: PredicateModifier = .direct
    ) -> FetchPredicate {
        FetchPredicate(.comparison(PredicateComparison(.keyPath(keyPath), op, value.predicateOperand, options: options,
                                                  modifier: modifier)))
    }

    // MARK: - Combinators

    /// All of `predicates` (`TRUEPREDICATE` when empty). Nested ANDs are flattened and
    /// `TRUEPREDICATE` operands dropped.
    public static func and(_ predicates: [FetchPredicate]) -> FetchPredicate {
        combine(predicates, identity: true, nested: { if case .and(let inner) = $0 { inner } else { nil } }, PredicateExpression.and)
    }

    /// Any of `predicates` (`FALSEPREDICATE` when empty). Nested ORs are flattened and
    /// `FALSEPREDICATE` operands dropped.
    public static func or(_ predicates: [FetchPredicate]) -> FetchPredicate {
        combine(predicates, identity: false, nested: { if case .or(let inner) = $0 { inner } else { nil } }, PredicateExpression.or)
    }

    /// AND (`identity` true) or OR (false): operands equal to the identity dropped, the
    /// operands of `nested` ones lifted, and the whole the other constant when one operand is.
    private static func combine(_ predicates: [FetchPredicate], identity: Bool, nested: (PredicateExpression) -> [PredicateExpression]?,
                                _ make: ([PredicateExpression]) -> PredicateExpression) -> FetchPredicate {
        var parts: [PredicateExpression] = []
        for p in predicates where p.expression != .constant(identity) {
            parts += nested(p.expression) ?? [p.expression]
        }
        if parts.contains(.constant(!identity)) { return FetchPredicate(.constant(!identity)) }
        switch parts.count {
        case 0: return FetchPredicate(.constant(identity))
        case 1: return FetchPredicate(parts[0])
        default: return FetchPredicate(make(parts))
        }
    }

    /// The negation of `predicate`.
    public static func not(_ predicate: FetchPredicate) -> FetchPredicate {
        switch predicate.expression {
        case .constant(let b): return FetchPredicate(.constant(!b))
        case .not(let inner): return FetchPredicate(inner)
        default: return FetchPredicate(.not(predicate.expression))
        }
    }

    /// `self AND other`.
    public func and(_ other: FetchPredicate) -> FetchPredicate { .and([self, other]) }
    /// `self OR other`.
    public func or(_ other: FetchPredicate) -> FetchPredicate { .or([self, other]) }
    /// `NOT self`.
    public var negated: FetchPredicate { .not(self) }

    /// Both predicates (`AND`).
    public static func && (lhs: FetchPredicate, rhs: FetchPredicate) -> FetchPredicate { lhs.and(rhs) }
    /// Either predicate (`OR`).
    public static func || (lhs: FetchPredicate, rhs: FetchPredicate) -> FetchPredicate { lhs.or(rhs) }
    public static prefix func ! (predicate: FetchPredicate) -> FetchPredicate { predicate.negated }
}
