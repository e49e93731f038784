import GRDB

/// A keyset cursor over an index's key order whose every step **seeks** (O(log n)), for every
/// key shape: one or several columns, ascending or descending, NULL keys, and the rowid (or a
/// `WITHOUT ROWID` table's last key column) that makes each entry unique.
///
/// SQLite (3.40, as linked here) seeks a row-value comparison `(k1, k2, rowid) > (?, ?, ?)` on
/// its first column only and scans the rest of that column's group: with few distinct values
/// a batch's cost grows with the group (a batch deep in a 50,000-entry group of a 4-valued
/// column stepped through about 150,000 entries). This cursor writes "after `position`" as one
/// branch per key level, deepest first:
///
/// ```sql
/// k1 = ? AND k2 = ? AND rowid > ?   -- the rest of the position's own group
/// k1 = ? AND k2 > ?                 -- the next groups under the same k1
/// k1 > ?                            -- everything after
/// ```
///
/// each an index seek (`EXPLAIN QUERY PLAN`: `SEARCH … (k1=? AND k2=? AND rowid>?)`), joined
/// with `UNION ALL`, which SQLite evaluates branch by branch and stops at the outer `LIMIT`.
/// NULL sorts first: in an ascending column "after NULL" is `IS NOT NULL` (SQLite seeks it as
/// `> NULL`); in a descending column the NULLs come last and get a branch of their own
/// (`k IS NULL`, a seek too).
struct KeysetCursor {
    /// One column of the key order.
    struct Column {
        /// The column as SQL (already quoted), e.g. `"color"` or `rowid`.
        var expression: String
        /// Whether the index orders the column descending.
        var descending: Bool = false
    }

    /// What the entries are read from, as SQL (e.g. `"Item" INDEXED BY "byColor"`).
    var source: String
    /// The key order; the last column must be unique within its group (the rowid).
    var columns: [Column]

    /// The names of the selected columns, `_strata_key0`, `_strata_key1`, …, in key order
    /// (never a column's name: `ORDER BY` would read the alias).
    var names: [String] { columns.indices.map { "_strata_key\($0)" } }

    /// `ORDER BY` terms matching the index.
    var orderBy: String {
        columns.map { $0.expression + ($0.descending ? " DESC" : "") }.joined(separator: ", ")
    }

    /// A `SELECT` of the entries strictly after `position` (nil: from the first), in key
    /// order, at most `limit` of them; the columns are named ``names``.
    func entries(after position: [DatabaseValue]?, limit: Int) -> (sql: String, arguments: StatementArguments) {
        let select = zip(columns, names).map { "\($0.expression) AS \"\($1)\"" }.joined(separator: ", ")
        guard let position else {
            return ("SELECT \(select) FROM \(source) ORDER BY \(orderBy) LIMIT ?", [limit])
        }
        precondition(position.count == columns.count, "a keyset position has one value per key column")
        var branches: [String] = []
        var arguments: [DatabaseValue] = []
        for level in stride(from: columns.count - 1, through: 0, by: -1) {
            var prefix: [String] = []
            var prefixArguments: [DatabaseValue] = []
            for i in 0..<level {
                if position[i].isNull {
                    prefix.append("\(columns[i].expression) IS NULL")
                } else {
                    prefix.append("\(columns[i].expression) = ?")
                    prefixArguments.append(position[i])
                }
            }
            for (condition, value) in Self.after(columns[level], position[level]) {
                let filter = (prefix + [condition]).joined(separator: " AND ")
                branches.append("SELECT * FROM (SELECT \(select) FROM \(source) WHERE \(filter) ORDER BY \(orderBy) LIMIT ?)")
                arguments += prefixArguments + (value.map { [$0] } ?? []) + [limit.databaseValue]
            }
        }
        guard !branches.isEmpty else {
            // Nothing can follow (e.g. a position on the last NULL of a descending column).
            return ("SELECT \(select) FROM \(source) WHERE 0 LIMIT ?", [limit])
        }
        return (branches.joined(separator: " UNION ALL ") + " LIMIT ?", StatementArguments(arguments + [limit.databaseValue]))
    }

    /// The conditions, one per branch in key order, for the values of `column` after `value`
    /// (with the argument each binds).
    private static func after(_ column: Column, _ value: DatabaseValue) -> [(String, DatabaseValue?)] {
        let c = column.expression
        switch (column.descending, value.isNull) {
        case (false, false): return [("\(c) > ?", value)]
        case (false, true): return [("\(c) IS NOT NULL", nil)]
        case (true, false): return [("\(c) < ?", value), ("\(c) IS NULL", nil)]
        case (true, true): return []
        }
    }

    /// The entry `count` entries after `position` (the last of the next batch), or nil when
    /// fewer remain.
    func entry(_ count: Int, after position: [DatabaseValue]?, in db: Database) throws -> [DatabaseValue]? {
        let (sql, arguments) = entries(after: position, limit: count)
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM (\(sql)) LIMIT 1 OFFSET ?", arguments: arguments + [count - 1]) else { return nil }
        return (0..<row.count).map { row[$0] as DatabaseValue }
    }
}
