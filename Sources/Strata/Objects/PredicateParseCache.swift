import Foundation
import Synchronization

/// Parsed predicate formats by shape: `FetchPredicate(format:arguments:)` parses a format
/// once per shape — the format with the kinds of its arguments — and later predicates of that
/// shape only put their own string, integer and double arguments into the parsed tree.
///
/// A shape is parsed twice with two sets of sentinel arguments; the tree is kept only when
/// both parses give the same tree but for the sentinels, and each sentinel comes back
/// unchanged as a value, exactly once (a `%K` argument becomes a keypath: such a format is
/// parsed in full every time, as is one the parser refuses with sentinels). Other arguments
/// (nil, Booleans, dates, lists…) are part of the shape, compared by value.
enum PredicateParseCache {
    /// Shapes kept before the cache starts over.
    static let capacity = 512

    private struct Key: Hashable {
        var format: String
        var operands: [PredicateOperand]
    }

    private enum Entry {
        /// The tree parsed with round-0 sentinels.
        case parsed(PredicateExpression)
        case notCacheable
    }

    private static let entries = Mutex<[Key: Entry]>([:])

    /// The parsed expression of `format` with `arguments` (standard limits).
    static func parse(_ format: String, arguments: [PredicateOperand]) throws(FetchPredicateError) -> PredicateExpression {
        var values: [Value] = []
        let abstracted = arguments.map { sentinels.abstract($0, round: 0, &values) }
        guard !values.isEmpty else { return try fullParse(format, arguments) }
        let key = Key(format: format, operands: abstracted)
        switch entries.withLock({ $0[key] }) {
        case .parsed(let tree)?:
            var used = 0
            let result = substitute(tree, values, &used)
            if used == values.count { return result }
            return try fullParse(format, arguments)
        case .notCacheable?:
            return try fullParse(format, arguments)
        case nil:
            let expression = try fullParse(format, arguments)
            let entry = makeEntry(format, arguments: arguments, count: values.count, first: abstracted)
            entries.withLock { entries in
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
                entries[key] = entry
            }
            return expression
        }
    }

    private static func fullParse(_ format: String, _ arguments: [PredicateOperand]) throws(FetchPredicateError) -> PredicateExpression {
        var parser = PredicateParser(format: format, arguments: arguments, limits: .standard)
        return try parser.parse()
    }

    private static func makeEntry(_ format: String, arguments: [PredicateOperand], count: Int, first: [PredicateOperand]) -> Entry {
        var ignored: [Value] = []
        let second = arguments.map { sentinels.abstract($0, round: 1, &ignored) }
        guard let a = try? fullParse(format, first), let b = try? fullParse(format, second) else { return .notCacheable }
        // Put round 1's sentinels' indexes into round 0's form: the trees must then be equal.
        var seen = Array(repeating: false, count: count)
        guard let normalized = renumber(b, &seen), normalized == a, seen.allSatisfy({ $0 }) else { return .notCacheable }
        var checkSeen = Array(repeating: false, count: count)
        guard renumberCheck(a, &checkSeen), checkSeen.allSatisfy({ $0 }) else { return .notCacheable }
        return .parsed(a)
    }

    // MARK: - Sentinels

    private static let sentinels = ArgumentSentinels(
        stringPrefixes: ["\u{1}strata.argument.a.", "\u{1}strata.argument.b."], intBases: [Int64.min + 3_000_000, Int64.min + 5_000_000],
        doubleBases: [-6.66e-302, -2.22e-302], doubleStep: 1e-311, doubleSpan: 1e-302)

    // MARK: - Trees

    /// `expression` with each round-0 sentinel replaced by its value (`used` counts them).
    private static func substitute(_ expression: PredicateExpression, _ values: [Value], _ used: inout Int) -> PredicateExpression {
        mapOperands(expression) { operand in
            guard case .value(let v) = operand, let i = sentinels.index(of: v, round: 0), i < values.count else { return operand }
            used += 1
            return .value(values[i])
        }
    }

    /// Round 1's sentinels rewritten as round 0's; nil when one appears twice or a round-0
    /// sentinel appears in round 1's tree.
    private static func renumber(_ expression: PredicateExpression, _ seen: inout [Bool]) -> PredicateExpression? {
        var valid = true
        let result = mapOperands(expression) { operand in
            guard case .value(let v) = operand else { return operand }
            if sentinels.index(of: v, round: 0) != nil { valid = false }
            guard let i = sentinels.index(of: v, round: 1) else { return operand }
            guard i < seen.count, !seen[i] else { valid = false; return operand }
            seen[i] = true
            return .value(sentinels.sentinel(for: v, index: i, round: 0)!)
        }
        return valid ? result : nil
    }

    /// Whether each round-0 sentinel appears at most once (`seen` marks them).
    private static func renumberCheck(_ expression: PredicateExpression, _ seen: inout [Bool]) -> Bool {
        var valid = true
        _ = mapOperands(expression) { operand in
            if case .value(let v) = operand, let i = sentinels.index(of: v, round: 0) {
                if i >= seen.count || seen[i] { valid = false } else { seen[i] = true }
            }
            return operand
        }
        return valid
    }

    private static func mapOperands(_ expression: PredicateExpression, _ transform: (PredicateOperand) -> PredicateOperand) -> PredicateExpression {
        switch expression {
        case .constant: return expression
        case .not(let inner): return .not(mapOperands(inner, transform))
        case .and(let parts): return .and(parts.map { mapOperands($0, transform) })
        case .or(let parts): return .or(parts.map { mapOperands($0, transform) })
        case .comparison(var comparison):
            comparison.left = mapOperand(comparison.left, transform)
            comparison.right = mapOperand(comparison.right, transform)
            return .comparison(comparison)
        }
    }

    private static func mapOperand(_ operand: PredicateOperand, _ transform: (PredicateOperand) -> PredicateOperand) -> PredicateOperand {
        if case .list(let items) = operand { return transform(.list(items.map { mapOperand($0, transform) })) }
        return transform(operand)
    }
}
