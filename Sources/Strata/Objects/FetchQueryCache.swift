import Foundation
import Synchronization

/// Compiled fetches by shape: a request's SQL is compiled once per shape — the request with
/// its string, integer and double arguments taken out — and later requests of that shape
/// only bind their own arguments (one per store, shared by its contexts).
///
/// A shape is compiled with a sentinel in place of each argument it takes out. The result
/// is kept only when every sentinel comes back as a bound value unchanged, each exactly once:
/// then the SQL does not depend on those values, and the compiler used them as they are. A
/// shape where the compiler changed or dropped a value — converted a string to a date,
/// folded case, derived a `BEGINSWITH` bound, refused the sentinel — is remembered as not
/// cacheable and compiled in full every time, as before. Only arguments of plain comparisons
/// (`==`, `!=`, `<`, `<=`, `>`, `>=`, `IN`, without `[c]` or `[d]`) are taken out; nil,
/// Booleans, dates and the rest stay part of the shape.
final class FetchQueryCache: Sendable {
    /// Shapes kept before the cache starts over.
    static let capacity = 512

    private enum Entry {
        case compiled(sql: String, arguments: [ArgumentSource])
        case notCacheable
    }

    private enum ArgumentSource {
        case fixed(Value)
        case argument(Int)
        case limit
        case offset
    }

    private let entries = Mutex<[FetchRequest: Entry]>([:])

    /// ``FetchQuery/select(_:layout:)`` of `request`, from the cache when its shape was seen.
    func select(_ request: FetchRequest, layout: StorageLayout) throws(FetchPredicateError) -> SQLFragment {
        // A negative window is an error the compiler reports; the shape would hide it.
        guard (request.fetchLimit ?? 0) >= 0, request.fetchOffset >= 0 else { return try FetchQuery.select(request, layout: layout) }
        var values: [Value] = []
        let shape = Self.shape(of: request, round: 0, taking: &values)
        switch entries.withLock({ $0[shape] }) {
        case .compiled(let sql, let sources)?:
            return SQLFragment(sql, sources.map { source in
                switch source {
                case .fixed(let value): value
                case .argument(let i): values[i]
                case .limit: Value.int(Int64(request.fetchLimit ?? 0))
                case .offset: Value.int(Int64(request.fetchOffset))
                }
            })
        case .notCacheable?:
            return try FetchQuery.select(request, layout: layout)
        case nil:
            let compiled = try FetchQuery.select(request, layout: layout)
            let entry = Self.entry(for: request, shape: shape, arguments: values.count, layout: layout)
            entries.withLock { entries in
                if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
                entries[shape] = entry
            }
            return compiled
        }
    }

    /// Compiles the shape twice, with two sets of sentinels, and works out where each bound
    /// value comes from: the same SQL, and at each position the same fixed value or the same
    /// argument's sentinel, or the shape is not cacheable.
    private static func entry(for request: FetchRequest, shape: FetchRequest, arguments count: Int, layout: StorageLayout) -> Entry {
        var ignored: [Value] = []
        let other = Self.shape(of: request, round: 1, taking: &ignored)
        guard let first = try? FetchQuery.select(shape, layout: layout), let second = try? FetchQuery.select(other, layout: layout),
              first.sql == second.sql, first.arguments.count == second.arguments.count else { return .notCacheable }
        var used = Array(repeating: false, count: count)
        var sources: [ArgumentSource] = []
        for (a, b) in zip(first.arguments, second.arguments) {
            if a == b {
                sources.append(.fixed(a))
            } else if let i = sentinels.index(of: a, round: 0), sentinels.index(of: b, round: 1) == i, i < count, !used[i] {
                used[i] = true
                sources.append(.argument(i))
            } else if shape.fetchLimit != nil, a == .int(limitSentinels[0]), b == .int(limitSentinels[1]) {
                sources.append(.limit)
            } else if shape.fetchOffset > 0, a == .int(offsetSentinels[0]), b == .int(offsetSentinels[1]) {
                sources.append(.offset)
            } else {
                return .notCacheable
            }
        }
        guard used.allSatisfy({ $0 }) else { return .notCacheable }
        return .compiled(sql: first.sql, arguments: sources)
    }

    // MARK: - Shapes

    private static let limitSentinels: [Int64] = [1_000_000_007, 1_000_000_009]
    private static let offsetSentinels: [Int64] = [1_000_000_021, 1_000_000_033]
    private static let sentinels = ArgumentSentinels(
        stringPrefixes: ["\u{1}strata.sentinel.a.", "\u{1}strata.sentinel.b."], intBases: [Int64.min + 1_000, Int64.min + 2_000_000],
        doubleBases: [-7.77e-301, -3.33e-301], doubleStep: 1e-310, doubleSpan: 1e-301)

    /// `request` with the arguments of its plain comparisons replaced by sentinels (appended
    /// to `values` in order), its limit and offset by theirs.
    static func shape(of request: FetchRequest, round: Int, taking values: inout [Value]) -> FetchRequest {
        var shape = request
        if let predicate = request.predicate {
            shape.predicate = FetchPredicate(abstract(predicate.expression, round: round, &values))
        }
        if request.fetchLimit != nil { shape.fetchLimit = Int(limitSentinels[round]) }
        if request.fetchOffset > 0 { shape.fetchOffset = Int(offsetSentinels[round]) }
        return shape
    }

    private static let plainOperators: Set<PredicateOperator> = [.equalTo, .notEqualTo, .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo, .in]

    private static func abstract(_ expression: PredicateExpression, round: Int, _ values: inout [Value]) -> PredicateExpression {
        switch expression {
        case .constant: return expression
        case .not(let inner): return .not(abstract(inner, round: round, &values))
        case .and(let parts): return .and(parts.map { abstract($0, round: round, &values) })
        case .or(let parts): return .or(parts.map { abstract($0, round: round, &values) })
        case .comparison(var comparison):
            guard comparison.options.isEmpty, comparison.modifier == .direct, plainOperators.contains(comparison.operator) else { return expression }
            comparison.left = sentinels.abstract(comparison.left, round: round, &values)
            comparison.right = sentinels.abstract(comparison.right, round: round, &values)
            return .comparison(comparison)
        }
    }

}
