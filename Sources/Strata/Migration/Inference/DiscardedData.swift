import Foundation
import GRDB

/// Stored data a migration operation throws away: the values of a removed attribute or
/// relationship, the order of a relationship that stops being ordered, the objects of a
/// removed entity, the links of a removed relationship. `stratactl plan` marks such steps and,
/// with a store, counts what they drop (``MigrationPlan/countDiscarded(in:)``).
public struct DiscardedData: Sendable, Hashable, Codable {
    /// What is dropped.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// The non-null values of a column (an attribute, a to-one's links, an order).
        case values
        /// Whole rows: objects, or links of a join table.
        case rows
    }

    /// Whole rows, or the values of one column.
    public var kind: Kind
    /// The table, as named **before** the migration.
    public var table: String
    /// The column whose non-null values are dropped (``Kind/values``).
    public var column: String?
    /// The rows concerned (`"_entity" IN ('Glider')`); nil for every row.
    public var filter: String?
    /// What the data is, in words: `attribute Aircraft.photo`, `objects of Glider`.
    public var what: String

    /// Data of `table` (one `column`, or the rows matching `filter`) described as `what`.
    public init(_ kind: Kind, table: String, column: String? = nil, filter: String? = nil, what: String) {
        self.kind = kind
        self.table = table
        self.column = column
        self.filter = filter
        self.what = what
    }

    /// The query counting the dropped non-null values or rows, on the store before the migration.
    public var countSQL: String {
        let counted = column.map { "count(\(quoteIdentifier($0)))" } ?? "count(*)"
        return "SELECT \(counted) FROM \(quoteIdentifier(table))" + (filter.map { " WHERE \($0)" } ?? "")
    }

    /// As ``describe(count:)-(Int64)``; `the values of attribute Aircraft.photo (not counted)`
    /// when `count` is nil (a hop that did not count).
    public func describe(count: Int64?) -> String {
        guard let count else {
            switch kind {
            case .values: return "the values of \(what) (not counted)"
            case .rows: return "the \(what) (not counted)"
            }
        }
        return describe(count: count)
    }

    /// `1200 non-null values of attribute Aircraft.photo` / `3 objects of Glider`.
    public func describe(count: Int64) -> String {
        switch kind {
        case .values: return "\(count) non-null value\(count == 1 ? "" : "s") of \(what)"
        case .rows: return "\(count) \(what)"
        }
    }
}

extension MigrationPlan {
    /// Every operation that discards data, in plan order.
    public var discardingOperations: [MigrationOperation] { operations.filter { !$0.discards.isEmpty } }

    /// Counts, on a store at the plan's source version, what each discarding operation would
    /// drop. Read-only. A table or column that the store does not have counts 0.
    public func countDiscarded(in db: Database) throws -> [(operation: MigrationOperation, discarded: [(DiscardedData, Int64)])] {
        var result: [(operation: MigrationOperation, discarded: [(DiscardedData, Int64)])] = []
        for operation in discardingOperations {
            var counts: [(DiscardedData, Int64)] = []
            for discard in operation.discards {
                guard try db.tableExists(discard.table),
                      try discard.column.map({ c in try db.columns(in: discard.table).contains { $0.name == c } }) ?? true
                else { counts.append((discard, 0)); continue }
                counts.append((discard, try Int64.fetchOne(db, sql: discard.countSQL) ?? 0))
            }
            result.append((operation, counts))
        }
        return result
    }
}
