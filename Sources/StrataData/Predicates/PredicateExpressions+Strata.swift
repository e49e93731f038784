import Foundation

/// One `PredicateExpressions` node type's translation (see ``PredicateTranslator``).
protocol StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm
}

// MARK: - Leaves

extension PredicateExpressions.Variable: StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        guard let path = translator.bindings[key] else { throw translator.unsupported(self, "a variable from outside the predicate") }
        return .path(path)
    }
}

extension PredicateExpressions.Value: StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm { .constant(value) }
}

extension PredicateExpressions.NilLiteral: StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm { .constant(nil) }
}

extension PredicateExpressions.KeyPath: StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        guard case .path(let base) = try translator.term(root) else {
            throw translator.unsupported(self, "\(keyPath) is applied to something that is not a model, composite or relationship")
        }
        if case .toMany = base.target, let collection = Root.Output.self as? any StrataToManyCollection.Type {
            if keyPath == collection.strataCountKeyPath {
                return .path(PredicatePath(segments: base.segments + ["@count"], target: .count))
            }
            if keyPath == collection.strataIsEmptyKeyPath {
                return .condition(.comparison(PredicateComparison(.keyPath(base.keyPath + ".@count"), .equalTo, .value(.int(0)))))
            }
        }
        return .path(try base.appending(keyPath, model: translator.modelName))
    }
}

/// `[Model]`'s `count` and `isEmpty`, recognised on to-many relationships.
protocol StrataToManyCollection {
    static var strataCountKeyPath: AnyKeyPath { get }
    static var strataIsEmptyKeyPath: AnyKeyPath { get }
}

extension Array: StrataToManyCollection where Element: PersistentModel {
    static var strataCountKeyPath: AnyKeyPath { \[Element].count }
    static var strataIsEmptyKeyPath: AnyKeyPath { \[Element].isEmpty }
}

// MARK: - Logic

extension PredicateExpressions.Conjunction: StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        .condition(FetchPredicate.and([FetchPredicate(try translator.condition(lhs)), FetchPredicate(try translator.condition(rhs))]).expression)
    }
}

extension PredicateExpressions.Disjunction: StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        .condition(FetchPredicate.or([FetchPredicate(try translator.condition(lhs)), FetchPredicate(try translator.condition(rhs))]).expression)
    }
}

extension PredicateExpressions.Negation: StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        .condition(FetchPredicate.not(FetchPredicate(try translator.condition(wrapped))).expression)
    }
}

// MARK: - Comparisons

extension PredicateExpressions.Equal: StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        try translator.compare(lhs, .equalTo, rhs, node: self)
    }
}

extension PredicateExpressions.NotEqual: StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        try translator.compare(lhs, .notEqualTo, rhs, node: self)
    }
}

extension PredicateExpressions.Comparison: StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let strataOperator: PredicateOperator
        switch op {
        case .lessThan: strataOperator = .lessThan
        case .lessThanOrEqual: strataOperator = .lessThanOrEqualTo
        case .greaterThan: strataOperator = .greaterThan
        case .greaterThanOrEqual: strataOperator = .greaterThanOrEqualTo
        @unknown default: throw translator.unsupported(self)
        }
        return try translator.compare(lhs, strataOperator, rhs, node: self)
    }
}

// MARK: - Optionals

extension PredicateExpressions.OptionalFlatMap: StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        guard case .path(let base) = try translator.term(wrapped) else {
            throw translator.unsupported(self, "optional chaining applies to a to-one relationship or an optional composite")
        }
        translator.bindings[variable.key] = base
        defer { translator.bindings[variable.key] = nil }
        return try translator.term(transform)
    }
}

extension PredicateExpressions.ForcedUnwrap: StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm { try translator.term(inner) }
}

extension PredicateExpressions.NilCoalesce: StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        guard case .path(let path) = try translator.term(lhs), path.isAttribute else {
            throw translator.unsupported(self, "the left side of ?? must be an optional attribute")
        }
        guard case .constant(let fallback) = try translator.term(rhs) else {
            throw translator.unsupported(self, "the right side of ?? must be a value")
        }
        return .coalesce(path, fallback)
    }
}

// MARK: - Strings

extension PredicateExpressions.CollectionContainsCollection: StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        try translator.stringOperator(base, .contains, other, node: self)
    }
}

extension PredicateExpressions.SequenceStartsWith: StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        try translator.stringOperator(base, .beginsWith, prefix, node: self)
    }
}

// MARK: - Sequences and ranges

extension PredicateExpressions.SequenceContains: StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let container = try translator.term(sequence)
        let member = try translator.term(element)
        switch (container, member) {
        case (.constant(let list?), .path(let path)):
            // ["A320", "A321"].contains($0.aircraftType): IN.
            guard path.isAttribute, let values = try translator.list(list) else { throw translator.unsupported(self, "the list must be an array or set of values") }
            return .condition(.comparison(PredicateComparison(.keyPath(path.keyPath), .in, .list(values.map(PredicateOperand.value)))))
        case (.path(let path), .constant(let value)):
            if case .toMany = path.target {
                // $0.crew.contains(pilot): a related object with that primary key.
                return .condition(.comparison(PredicateComparison(.keyPath(path.keyPath), .contains, .value(try translator.constant(value)))))
            }
            if path.isString { return try translator.stringOperator(sequence, .contains, element, node: self) }
            throw translator.unsupported(self, "contains(_:) applies to a to-many relationship, a String attribute or a list of values")
        default:
            throw translator.unsupported(self, "contains(_:) needs a list of values and a property, or a to-many relationship and a saved model")
        }
    }
}

extension PredicateExpressions.SequenceContainsWhere: StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        try translator.elementCondition(sequence, variable.key, test, modifier: .any, node: self)
    }
}

extension PredicateExpressions.SequenceAllSatisfy: StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        try translator.elementCondition(sequence, variable.key, test, modifier: .all, node: self)
    }
}

extension PredicateExpressions.ClosedRange: StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        guard case .constant(let low?) = try translator.term(lower), case .constant(let high?) = try translator.term(upper) else {
            throw translator.unsupported(self, "a range's bounds must be values")
        }
        return .range(lower: low, upper: high, closed: true)
    }
}

extension PredicateExpressions.Range: StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        guard case .constant(let low?) = try translator.term(lower), case .constant(let high?) = try translator.term(upper) else {
            throw translator.unsupported(self, "a range's bounds must be values")
        }
        return .range(lower: low, upper: high, closed: false)
    }
}

extension PredicateExpressions.RangeExpressionContains: StrataPredicateNode {
    func strataTerm(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        guard case .path(let path) = try translator.term(element), path.isAttribute else {
            throw translator.unsupported(self, "the element must be an attribute")
        }
        switch try translator.term(range) {
        case .range(let lower, let upper, let closed):
            let low = try translator.constant(lower), high = try translator.constant(upper)
            if closed {
                return .condition(.comparison(PredicateComparison(.keyPath(path.keyPath), .between, .list([.value(low), .value(high)]))))
            }
            return .condition(.and([
                .comparison(PredicateComparison(.keyPath(path.keyPath), .greaterThanOrEqualTo, .value(low))),
                .comparison(PredicateComparison(.keyPath(path.keyPath), .lessThan, .value(high))),
            ]))
        default:
            throw translator.unsupported(self, "the range must be a literal or captured range of values")
        }
    }
}

extension PredicateTranslator {
    /// `sequence.contains(where: test)` (ANY) or `allSatisfy` (ALL) over a to-many
    /// relationship: the test's comparisons go through the relationship, each one an
    /// `EXISTS` subquery (docs/Predicates.md, "To-many keypaths").
    ///
    /// Strata evaluates each comparison of a to-many key path on its own, so a test is one
    /// comparison or (for `contains(where:)`) several joined by `||`; `&&` and `!` inside
    /// the test would ask for one element matching several conditions at once, which is
    /// refused with an error rather than answered differently.
    mutating func elementCondition(_ sequence: Any, _ variable: PredicateExpressions.VariableID, _ test: Any,
                                   modifier: PredicateModifier, node: Any) throws -> PredicateTerm {
        guard case .path(let path) = try term(sequence), case .toMany(let element) = path.target else {
            throw unsupported(node, "contains(where:) and allSatisfy apply to a to-many relationship")
        }
        bindings[variable] = PredicatePath(segments: path.segments, target: .model(element))
        defer { bindings[variable] = nil }
        let condition = try self.condition(test)
        let prefix = path.keyPath + "."
        func rewrite(_ expression: StrataPredicateExpression, top: Bool) throws -> StrataPredicateExpression {
            switch expression {
            case .comparison(var comparison):
                guard case .keyPath(let keyPath) = comparison.left, keyPath.hasPrefix(prefix) else {
                    throw unsupported(node, "each comparison in the closure must be on the element (\(path.keyPath).…)")
                }
                if comparison.modifier == .direct { comparison.modifier = modifier }
                return .comparison(comparison)
            case .or(let parts) where modifier == .any:
                return .or(try parts.map { try rewrite($0, top: false) })
            case .constant:
                return expression
            case .and:
                throw unsupported(node, "&& inside contains(where:) or allSatisfy over '\(path.keyPath)' (one element matching several conditions) is not supported; Strata evaluates each condition on the relationship separately — write $0.\(path.keyPath).contains(where: a) && $0.\(path.keyPath).contains(where: b) if that is what you mean")
            case .not:
                throw unsupported(node, "! inside contains(where:) or allSatisfy over '\(path.keyPath)' is not supported; negate the comparison instead (!= , <, >=…)")
            case .or:
                throw unsupported(node, "|| inside allSatisfy over '\(path.keyPath)' is not supported")
            }
        }
        return .condition(try rewrite(condition, top: true))
    }
}
