import Foundation

/// Compiles a ``Predicate`` and sort keypaths into SQL over a ``StorageLayout``.
///
/// - Constants are always bound (`?`), converted to the stored form of the attribute they are
///   compared with (`Value.coerced(to:)`, then `Value.databaseValue`).
/// - A to-one keypath adds a LEFT JOIN to its scope; a to-many keypath becomes an `EXISTS` /
///   `NOT EXISTS` subquery through the relationship's storage; `@count` and friends become
///   correlated scalar subqueries.
/// - Equality without options stays `"col" = ?`, so SQLite can use an index on the column.
/// - Every comparison yields 1, 0 or NULL, and `NOT` is compiled as `(x) IS NOT 1`, so that a
///   comparison with a NULL column counts as false under NOT too (two-valued logic, as
///   NSPredicate evaluates in memory).
final class PredicateCompiler {
    let layout: StorageLayout
    /// The entity the fetch is for (named in errors).
    let rootEntity: String
    let limits: PredicateLimits
    private var aliasCounter = 0
    /// Per entity: the most dot-separated components an attribute keypath of it has
    /// (`colorScheme.primary` is 2), so that keypath resolution only tries that many.
    var attributeKeyPathDepth: [String: Int] = [:]

    var model: ObjectModel { layout.model }

    init(layout: StorageLayout, rootEntity: String, limits: PredicateLimits = .standard) {
        self.layout = layout
        self.rootEntity = rootEntity
        self.limits = limits
    }

    func newAlias(_ prefix: String) -> String {
        aliasCounter += 1
        return "\(prefix)\(aliasCounter)"
    }

    // MARK: - Boolean structure

    /// - Parameter depth: how many NOT/AND/OR enclose `expression`. A parsed format is bounded
    ///   by the parser (each `(` can open an OR and an AND level: at most
    ///   2 × ``PredicateLimits/maxNestingDepth`` + 2 levels); a tree built in code that nests
    ///   deeper than that is refused here, before the recursion can exhaust the stack.
    func compile(_ expression: PredicateExpression, in scope: QueryScope, depth: Int = 0) throws(FetchPredicateError) -> SQLFragment {
        let maxTreeDepth = 2 * limits.maxNestingDepth + 2
        guard depth <= maxTreeDepth else {
            throw FetchPredicateError(.limitExceeded, "the predicate nests more than \(maxTreeDepth) levels of NOT, AND and OR (2 × maxNestingDepth + 2); flatten it", entity: rootEntity)
        }
        switch expression {
        case .constant(let b):
            return SQLFragment(b ? "1" : "0")
        case .not(let inner):
            let sql = try compile(inner, in: scope, depth: depth + 1)
            return SQLFragment("(\(sql.sql)) IS NOT 1", sql.arguments)
        case .and(let parts), .or(let parts):
            guard !parts.isEmpty else {
                if case .and = expression { return SQLFragment("1") }
                return SQLFragment("0")
            }
            var fragments: [SQLFragment] = []
            for part in parts { fragments.append(try compile(part, in: scope, depth: depth + 1)) }
            if fragments.count == 1 { return fragments[0] }
            let glue: String
            if case .and = expression { glue = " AND " } else { glue = " OR " }
            return SQLFragment("(" + fragments.map(\.sql).joined(separator: glue) + ")", fragments.flatMap(\.arguments))
        case .comparison(let comparison):
            return try compile(comparison, in: scope, rightScope: nil)
        }
    }

    // MARK: - Comparisons

    /// - Parameter rightScope: where keypaths on the right resolve, when it differs from
    ///   `scope` (inside an ANY/ALL/NONE subquery the right side still refers to the outer object).
    func compile(_ c: PredicateComparison, in scope: QueryScope, rightScope: QueryScope?) throws(FetchPredicateError) -> SQLFragment {
        let leftSite = ErrorSite(c.source, offset: c.source.leftOffset)
        let rightSite = ErrorSite(c.source, offset: c.source.rightOffset)
        var leftResolved: ResolvedKeyPath?
        if case .keyPath(let k) = c.left { leftResolved = try resolve(k, in: scope, at: leftSite) }

        if case .toMany(let hop)? = leftResolved, !hop.isCollectionOperator {
            return try compileAggregate(c, hop: hop, scope: scope, rightScope: rightScope ?? scope)
        }
        if c.modifier != .direct {
            let what: String
            switch (c.left, leftResolved) {
            case (.keyPath(let k), .attribute?): what = "'\(k)' is an attribute"
            case (.keyPath(let k), .object?): what = "'\(k)' is \(k.isEmpty || k == "self" ? "the object itself" : "a to-one relationship")"
            case (.keyPath(let k), .toMany?): what = "'\(k)' is a collection operator, which gives a single value"
            default: what = "the left side is a constant"
            }
            throw fail(.invalidAggregate, "\(c.modifier.rawValue) needs a to-many keypath on its left; \(what). Remove \(c.modifier.rawValue), or go through a to-many relationship (ANY tags.name == %@)", leftSite,
                       keyPath: { if case .keyPath(let k) = c.left { return k } else { return nil } }())
        }

        let resolvedRightScope = rightScope ?? scope
        var rightResolved: ResolvedKeyPath?
        if case .keyPath(let k) = c.right { rightResolved = try resolve(k, in: resolvedRightScope, at: rightSite) }
        if case .toMany(let hop)? = rightResolved, !hop.isCollectionOperator {
            guard c.operator == .in, rightScope == nil, case .keyPath(let k) = c.right else {
                throw fail(.invalidAggregate, "the to-many keypath '\(hop.path)' must be on the left of \(c.operator.rawValue) (it is compared with ANY), or on the right of IN", rightSite, keyPath: hop.path)
            }
            // `value IN tags.name` is `ANY tags.name == value`.
            var swapped = PredicateComparison(.keyPath(k), .equalTo, c.left, options: c.options, modifier: .any, source: c.source)
            swapped.source.leftOffset = c.source.rightOffset
            swapped.source.rightOffset = c.source.leftOffset
            return try compileAggregate(swapped, hop: hop, scope: scope, rightScope: scope)
        }

        let left = try term(c.left, resolved: leftResolved, at: leftSite)
        let right = try term(c.right, resolved: rightResolved, at: rightSite)
        return try compileScalar(left, c.operator, c.options, right, c)
    }

    /// ANY / ALL / NONE (explicit or implicit) over a to-many hop.
    private func compileAggregate(
        _ c: PredicateComparison, hop: ToManyHop, scope: QueryScope, rightScope: QueryScope
    ) throws(FetchPredicateError) -> SQLFragment {
        var op = c.operator
        if hop.remainder.isEmpty {
            // The related objects themselves: `tags CONTAINS %@`, `ANY tags == %@`, `%@ IN tags`.
            if op == .contains { op = .equalTo }
            if case .value(.null) = c.right {
                throw fail(.invalidAggregate, "the to-many relationship '\(hop.path)' cannot be compared with nil; test \(hop.path).@count == 0 instead", ErrorSite(c.source, offset: c.source.leftOffset), keyPath: hop.path)
            }
        }
        let rows = relatedRows(of: hop)
        let inner = QueryScope(entityName: hop.relationship.destination, alias: rows.alias)
        let element = hop.remainder.isEmpty ? "self" : hop.remainder.joined(separator: ".")
        var innerComparison = PredicateComparison(.keyPath(element), op, c.right, options: c.options, source: c.source)
        innerComparison.modifier = .direct
        let condition = try compile(innerComparison, in: inner, rightScope: rightScope)
        let from = "SELECT 1 FROM \(rows.from)\(inner.joinSQL) WHERE \(rows.link)"
        switch c.modifier {
        case .direct, .any:
            return SQLFragment("EXISTS (\(from) AND \(condition.sql))", condition.arguments)
        case .none:
            return SQLFragment("NOT EXISTS (\(from) AND \(condition.sql))", condition.arguments)
        case .all:
            return SQLFragment("NOT EXISTS (\(from) AND (\(condition.sql)) IS NOT 1)", condition.arguments)
        }
    }

    // MARK: - Terms

    /// One compiled side of a scalar comparison.
    struct Term {
        enum Kind {
            /// A column or a scalar subquery.
            case expression
            /// An object reference (`self`, a to-one relationship): an integer primary key.
            case object(destination: String)
            case constant(Value)
            case list([Value])
        }
        var sql: SQLFragment
        var kind: Kind = .expression
        /// The attribute type of an expression or object reference.
        var type: AttributeType?
        var keyPath: String?
        /// The entity the keypath was resolved on (for messages).
        var entity: String?
        var offset: Int?
        /// Whether ``sql`` is a plain column reference (cheap to repeat, indexable).
        var isColumn = false

        var isConstant: Bool {
            switch kind {
            case .constant, .list: return true
            default: return false
            }
        }
    }

    private func term(_ operand: PredicateOperand, resolved: ResolvedKeyPath?, at site: ErrorSite) throws(FetchPredicateError) -> Term {
        switch operand {
        case .value(let v):
            return Term(sql: SQLFragment("?", [v]), kind: .constant(v), offset: site.offset)
        case .list(let items):
            var values: [Value] = []
            for item in items {
                guard case .value(let v) = item else {
                    throw fail(.unsupported, "lists may only hold values, not keypaths or nested lists", site)
                }
                values.append(v)
            }
            return Term(sql: SQLFragment(""), kind: .list(values), offset: site.offset)
        case .keyPath(let k):
            switch resolved! {
            case .attribute(let sql, let attribute, let entity):
                return Term(sql: SQLFragment(sql), type: attribute.type, keyPath: k, entity: entity, offset: site.offset,
                            isColumn: true)
            case .object(let sql, let destination):
                return Term(sql: SQLFragment(sql), kind: .object(destination: destination), type: .int64, keyPath: k,
                            offset: site.offset, isColumn: true)
            case .toMany(let hop):
                return try collectionTerm(hop, keyPath: k, at: site)
            }
        }
    }

    /// A term for sorting: an attribute, a to-one relationship or a collection operator.
    func sortTerm(_ keyPath: String, in scope: QueryScope, at site: ErrorSite) throws(FetchPredicateError) -> Term {
        let resolved = try resolve(keyPath, in: scope, at: site)
        if case .toMany(let hop) = resolved, !hop.isCollectionOperator {
            throw fail(.invalidAggregate, "cannot sort by the to-many keypath '\(keyPath)'; sort by \(hop.path).@count or by a to-one keypath", site, keyPath: keyPath)
        }
        return try term(.keyPath(keyPath), resolved: resolved, at: site)
    }
}
