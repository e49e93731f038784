import Foundation

/// Builds the SQL of a ``FetchRequest`` over a ``StorageLayout``: always parameterized, with
/// the entity's table aliased `t0`.
///
/// ```swift
/// let layout = StorageLayout(model: model)
/// let query = try FetchQuery.select(request, layout: layout)
/// let rows = try Row.fetchAll(db, sql: query.sql, arguments: query.statementArguments)
/// ```
///
/// The shape of a query:
///
/// ```sql
/// SELECT t0."_pk", t0."_version", …  FROM "Aircraft" AS t0
///   LEFT JOIN "Person" AS t1 ON t1."_pk" = t0."owner_id"          -- to-one keypaths
/// WHERE t0."_entity" IN (?, ?)                                     -- part of a hierarchy
///   AND (t1."name" = ? AND EXISTS (SELECT 1 FROM … WHERE …))       -- the predicate
/// ORDER BY t1."name", t0."_pk"                                     -- sort + stable tiebreak
/// LIMIT ? OFFSET ?
/// ```
///
/// The `_entity` filter is left out when every row of the table matches (a fetch of a
/// hierarchy's root that includes sub-entities), and is `= ?` when
/// ``FetchRequest/includesSubentities`` is false. To-one joins match at most one row, and
/// to-many keypaths are subqueries, so no row is ever repeated and no `DISTINCT` is needed.
///
/// Every error is a ``FetchPredicateError``: an unknown entity, an unknown keypath, an operator or
/// value that does not fit a keypath's type, a negative limit or offset, or a request past one
/// of the ``PredicateLimits`` (code ``FetchPredicateError/Code/limitExceeded``).
public struct FetchQuery {
    /// `SELECT` of every column of the entity table (as listed by the layout, in order) for the
    /// rows matching `request`, sorted, limited and offset.
    public static func select(_ request: FetchRequest, layout: StorageLayout) throws(FetchPredicateError) -> SQLFragment {
        try select(request, layout: layout, limits: .standard)
    }

    /// ``select(_:layout:)`` under other limits (benchmarks and tests).
    package static func select(_ request: FetchRequest, layout: StorageLayout, limits: PredicateLimits) throws(FetchPredicateError) -> SQLFragment {
        let parts = try Parts(request, layout: layout, sorted: true, limits: limits)
        let columns = parts.table.columns.map { "t0.\(quoteIdentifier($0.name))" }.joined(separator: ", ")
        return try parts.checked(parts.query(selecting: columns, window: true))
    }

    /// `SELECT t0."_pk"` of the rows matching `request`, sorted, limited and offset.
    public static func selectPrimaryKeys(_ request: FetchRequest, layout: StorageLayout) throws(FetchPredicateError) -> SQLFragment {
        let parts = try Parts(request, layout: layout, sorted: true, limits: .standard)
        return try parts.checked(parts.query(selecting: "t0.\(quoteIdentifier(StorageLayout.primaryKeyColumn))", window: true))
    }

    /// `SELECT COUNT(*)` of the rows matching `request`. Sort descriptors are ignored.
    ///
    /// Like Core Data's `count(for:)`, the count is of what ``select(_:layout:)`` would return:
    /// with a ``FetchRequest/fetchLimit`` or ``FetchRequest/fetchOffset`` it is
    /// `min(limit, max(0, matches - offset))`, without them the number of matches.
    public static func count(_ request: FetchRequest, layout: StorageLayout) throws(FetchPredicateError) -> SQLFragment {
        let parts = try Parts(request, layout: layout, sorted: false, limits: .standard)
        if request.fetchLimit == nil && request.fetchOffset == 0 {
            return try parts.checked(parts.query(selecting: "COUNT(*)", window: false))
        }
        let inner = try parts.checked(parts.query(selecting: "t0.\(quoteIdentifier(StorageLayout.primaryKeyColumn))", window: true))
        return SQLFragment("SELECT COUNT(*) FROM (\(inner.sql))", inner.arguments)
    }

    /// The compiled pieces of a request.
    private struct Parts {
        var table: TableLayout
        var from: String
        var conditions: [SQLFragment] = []
        var orderBy: [String] = []
        var limit: Int?
        var offset: Int
        var limits: PredicateLimits
        var entityName: String

        init(_ request: FetchRequest, layout: StorageLayout, sorted: Bool, limits: PredicateLimits) throws(FetchPredicateError) {
            guard let entity = layout.entity(request.entityName), let table = layout.tables[entity.table] else {
                let names = layout.model.entities.map(\.name)
                let hint = FetchPredicateError.suggestions(for: request.entityName, in: names)
                throw FetchPredicateError(.unknownEntity,
                                     "the model has no entity '\(request.entityName)'\(hint.isEmpty ? "; its entities are \(names.sorted().joined(separator: ", "))" : FetchPredicateError.didYouMean(hint))",
                                     entity: request.entityName)
            }
            if let limit = request.fetchLimit, limit < 0 {
                throw FetchPredicateError(.invalidRequest, "fetchLimit must not be negative (got \(limit)); use nil for no limit", entity: request.entityName)
            }
            guard request.fetchOffset >= 0 else {
                throw FetchPredicateError(.invalidRequest, "fetchOffset must not be negative (got \(request.fetchOffset))", entity: request.entityName)
            }
            if sorted, request.sortDescriptors.count > limits.maxSortDescriptors {
                throw FetchPredicateError(.limitExceeded, "the fetch has \(request.sortDescriptors.count) sort keys, more than the limit of \(limits.maxSortDescriptors) (maxSortDescriptors); sort by fewer keys", entity: request.entityName)
            }
            self.table = table
            self.limit = request.fetchLimit
            self.offset = request.fetchOffset
            self.limits = limits
            self.entityName = request.entityName

            let compiler = PredicateCompiler(layout: layout, rootEntity: request.entityName, limits: limits)
            let scope = QueryScope(entityName: request.entityName, alias: "t0")

            if entity.hasEntityColumn {
                let wholeTable = request.includesSubentities && entity.name == entity.root
                if !wholeTable {
                    let names = request.includesSubentities ? entity.entityNames : [entity.name]
                    let column = "t0.\(quoteIdentifier(StorageLayout.entityColumn))"
                    conditions.append(names.count == 1
                        ? SQLFragment("\(column) = ?", [.string(names[0])])
                        : SQLFragment("\(column) IN (\(Array(repeating: "?", count: names.count).joined(separator: ", ")))",
                                      names.map(Value.string)))
                }
            }
            if let predicate = request.predicate, predicate.expression != .constant(true) {
                conditions.append(try compiler.compile(predicate.expression, in: scope))
            }
            if sorted {
                for descriptor in request.sortDescriptors {
                    let site = ErrorSite(format: descriptor.keyPath, offset: 0)
                    let term = try compiler.sortTerm(descriptor.keyPath, in: scope, at: site)
                    var sql = term.sql.sql
                    if descriptor.caseInsensitive, term.type == .string || term.type == .uri {
                        sql = "strata_fold(\(sql), 1)"
                    }
                    orderBy.append(sql + (descriptor.ascending ? "" : " DESC"))
                }
                orderBy.append("t0.\(quoteIdentifier(StorageLayout.primaryKeyColumn))")
            }
            from = "\(quoteIdentifier(table.name)) AS t0\(scope.joinSQL)"
        }

        /// `fragment`, unless it binds more values than SQLite accepts in one statement.
        func checked(_ fragment: SQLFragment) throws(FetchPredicateError) -> SQLFragment {
            guard fragment.arguments.count <= limits.maxBoundValues else {
                throw FetchPredicateError(.limitExceeded, "the fetch binds \(fragment.arguments.count) values, more than the limit of \(limits.maxBoundValues) (maxBoundValues; SQLite's limit of parameters in one statement); pass shorter IN lists or split the fetch", entity: entityName)
            }
            return fragment
        }

        func query(selecting columns: String, window: Bool) -> SQLFragment {
            var sql = "SELECT \(columns) FROM \(from)"
            var arguments: [Value] = []
            if !conditions.isEmpty {
                sql += " WHERE " + conditions.map(\.sql).joined(separator: " AND ")
                arguments += conditions.flatMap(\.arguments)
            }
            if !orderBy.isEmpty { sql += " ORDER BY " + orderBy.joined(separator: ", ") }
            if window {
                if let limit {
                    sql += " LIMIT ?"
                    arguments.append(.int(Int64(limit)))
                } else if offset > 0 {
                    sql += " LIMIT -1"
                }
                if offset > 0 {
                    sql += " OFFSET ?"
                    arguments.append(.int(Int64(offset)))
                }
            }
            return SQLFragment(sql, arguments)
        }
    }
}
