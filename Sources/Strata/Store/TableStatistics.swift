import Foundation
import GRDB

/// Cheap facts about a store's tables, read without scanning them.
enum TableStatistics {
    /// A cheap row-count estimate (no full scan): the primary-key or rowid span.
    static func estimatedRows(_ table: String, _ db: Database) throws -> Int64 {
        // Two single-aggregate subqueries: SQLite answers each from the b-tree's edge, while
        // `max(rowid) - min(rowid)` in one SELECT would scan the whole table.
        let t = quoteIdentifier(table)
        // A WITHOUT ROWID table (a retired index, a sorted build's entries) has no rowid span.
        if try Bool.fetchOne(db, sql: "SELECT wr FROM pragma_table_list WHERE name = ? AND schema = 'main'", arguments: [table]) ?? false { return 0 }
        let span = try Int64.fetchOne(db, sql: "SELECT coalesce((SELECT max(rowid) FROM \(t)) - (SELECT min(rowid) FROM \(t)) + 1, 0)") ?? 0
        return max(0, span)
    }

}
