import Foundation
import GRDB

/// Cheap facts about a store's tables, read without scanning them.
enum TableStatistics {
    /// A cheap row-count estimate (no full scan): the primary-key or rowid span; 0 for a
    /// `WITHOUT ROWID` table.
    static func estimatedRows(_ table: String, _ db: Database) throws -> Int64 {
        max(0, try rowidSpan(table, db) ?? 0)
    }

    /// `max(rowid) − min(rowid) + 1`, never fewer than the table's rows: 0 for an empty table,
    /// `Int64.max` when the span overflows, nil for a `WITHOUT ROWID` table (a retired index, a
    /// sorted build's entries), which has no rowid span.
    static func rowidSpan(_ table: String, _ db: Database) throws -> Int64? {
        if try isWithoutRowid(table, db) { return nil }
        // Two single-aggregate subqueries: SQLite answers each from the b-tree's edge, while
        // `max(rowid) - min(rowid)` in one SELECT would scan the whole table.
        let t = quoteIdentifier(table)
        let row = try Row.fetchOne(db, sql: "SELECT (SELECT min(rowid) FROM \(t)), (SELECT max(rowid) FROM \(t))")
        guard let low: Int64 = row?[0], let high: Int64 = row?[1] else { return 0 }
        let (span, overflow) = high.subtractingReportingOverflow(low)
        return overflow || span == .max ? .max : span + 1
    }

    /// Whether `table` (in `main`) is a `WITHOUT ROWID` table.
    static func isWithoutRowid(_ table: String, _ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT wr FROM pragma_table_list WHERE name = ? AND schema = 'main'", arguments: [table]) ?? false
    }
}
