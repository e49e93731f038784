import Foundation
import GRDB
import GRDBSQLite
import Testing
@testable import Strata

/// The finisher's keyset cursor: every step seeks, whatever the key shape, so that a batch's
/// cost does not grow with the size of the key group it is in.
@Suite("Keyset cursor: O(log n) seeks for every key shape")
struct KeysetCursorTests {
    /// Runs `sql` and returns its rows with the virtual-machine steps it took (SQLite's own count).
    static func measured(_ db: Database, _ sql: String, _ arguments: StatementArguments) throws -> (rows: [[DatabaseValue]], steps: Int) {
        let statement = try db.makeStatement(sql: sql)
        let rows = try Row.fetchAll(statement, arguments: arguments).map { row in (0..<row.count).map { row[$0] as DatabaseValue } }
        return (rows, Int(sqlite3_stmt_status(statement.sqliteStatement, SQLITE_STMTSTATUS_VM_STEP, 0)))
    }

    /// `groups` distinct values of `k1` (and 3 of `k2`), `perGroup` rows each; every fifth `k2` NULL when `nulls`.
    static func table(groups: Int, perGroup: Int, nulls: Bool = false) throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (k1, k2, v)")
            try db.execute(sql: """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                INSERT INTO t SELECT i % ?, CASE WHEN ? AND i % 5 = 0 THEN NULL ELSE i % 3 END, i FROM n
                """, arguments: [groups * perGroup, groups, nulls])
            try db.execute(sql: "CREATE INDEX one ON t (k1)")
            try db.execute(sql: "CREATE INDEX two ON t (k1, k2)")
            try db.execute(sql: "CREATE INDEX mixed ON t (k1 DESC, k2 DESC)")
        }
        return queue
    }

    static func cursor(_ index: String, _ columns: [(String, Bool)]) -> KeysetCursor {
        KeysetCursor(source: "t INDEXED BY \(index)", columns: columns.map { .init(expression: $0.0, descending: $0.1) } + [.init(expression: "rowid")])
    }

    static let shapes: [(index: String, columns: [(String, Bool)])] = [
        ("one", [("k1", false)]),
        ("two", [("k1", false), ("k2", false)]),
        ("mixed", [("k1", true), ("k2", true)]),
    ]

    @Test("walking in batches returns every entry once, in the index's order, for every shape", arguments: [false, true])
    func walksInOrder(nulls: Bool) throws {
        let queue = try Self.table(groups: 4, perGroup: 300, nulls: nulls)
        try queue.read { db in
            for shape in Self.shapes {
                let cursor = Self.cursor(shape.index, shape.columns)
                let expected = try Row.fetchAll(db, sql: "SELECT \(cursor.columns.map(\.expression).joined(separator: ", ")) FROM \(cursor.source) ORDER BY \(cursor.orderBy)")
                    .map { row in (0..<row.count).map { row[$0] as DatabaseValue } }
                var walked: [[DatabaseValue]] = []
                var position: [DatabaseValue]? = nil
                while true {
                    let (sql, arguments) = cursor.entries(after: position, limit: 37)
                    let rows = try Self.measured(db, sql, arguments).rows
                    walked += rows
                    // The batch's last entry, as the finisher finds it.
                    #expect(try cursor.entry(37, after: position, in: db) == (rows.count == 37 ? rows.last : nil))
                    guard rows.count == 37 else { break }
                    position = rows.last
                }
                #expect(walked == expected, "index \(shape.index), NULLs \(nulls)")
            }
        }
    }

    @Test("a composite WITHOUT ROWID key (a retired index) walks in primary-key order, descending columns too")
    func compositeLeaves() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE w (a, b, r, PRIMARY KEY (a, b DESC, r)) WITHOUT ROWID")
            try db.execute(sql: "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) INSERT INTO w SELECT i % 4, 'x' || (i % 5), i FROM n")
        }
        try queue.read { db in
            let cursor = KeysetCursor(source: "w", columns: [.init(expression: "a"), .init(expression: "b", descending: true), .init(expression: "r")])
            let expected = try Row.fetchAll(db, sql: "SELECT a, b, r FROM w ORDER BY a, b DESC, r").map { row in (0..<row.count).map { row[$0] as DatabaseValue } }
            var walked: [[DatabaseValue]] = []
            var position: [DatabaseValue]? = nil
            while true {
                let (sql, arguments) = cursor.entries(after: position, limit: 101)
                let rows = try Self.measured(db, sql, arguments).rows
                walked += rows
                guard let last = rows.last else { break }
                position = last
            }
            #expect(walked == expected)
        }
    }

    /// The steps of one 100-entry batch starting in the middle of the last key group.
    static func batchSteps(groupSize: Int, index: String, columns: [(String, Bool)], nulls: Bool, old: Bool = false) throws -> Int {
        let queue = try Self.table(groups: 4, perGroup: groupSize, nulls: nulls)
        return try queue.read { db in
            let cursor = Self.cursor(index, columns)
            let all = cursor.columns.map(\.expression).joined(separator: ", ")
            let middle = try Row.fetchOne(db, sql: "SELECT \(all) FROM \(cursor.source) ORDER BY \(cursor.orderBy) LIMIT 1 OFFSET ?", arguments: [groupSize * 3 + groupSize / 2])!
            let position = (0..<middle.count).map { middle[$0] as DatabaseValue }
            if old {
                // The cursor the finisher used before: a row-value comparison.
                let marks = Array(repeating: "?", count: position.count).joined(separator: ", ")
                return try Self.measured(db, "SELECT \(all) FROM \(cursor.source) WHERE (\(all)) > (\(marks)) ORDER BY \(cursor.orderBy) LIMIT 100", StatementArguments(position)).steps
            }
            let (sql, arguments) = cursor.entries(after: position, limit: 100)
            let (rows, steps) = try Self.measured(db, sql, arguments)
            #expect(rows.count == 100)
            return steps
        }
    }

    @Test("a batch's steps stay bounded as its key group grows: 4 distinct values, one and two key columns, NULL-heavy keys", arguments: [false, true])
    func boundedAsGroupGrows(nulls: Bool) throws {
        for shape in Self.shapes.prefix(2) {
            let small = try Self.batchSteps(groupSize: 1000, index: shape.index, columns: shape.columns, nulls: nulls)
            let large = try Self.batchSteps(groupSize: 32000, index: shape.index, columns: shape.columns, nulls: nulls)
            // A seek plus 100 entries: the same cost whatever the group's size.
            #expect(large <= small + small / 4, "index \(shape.index), NULLs \(nulls): \(small) steps at 1,000 per group, \(large) at 32,000")
            #expect(large < 100 * 40, "index \(shape.index), NULLs \(nulls): \(large) steps for 100 entries")
            // The measure would catch the old cursor: it steps through the rest of the group.
            let old = try Self.batchSteps(groupSize: 32000, index: shape.index, columns: shape.columns, nulls: nulls, old: true)
            #expect(old > 10 * large, "the row-value cursor took \(old) steps, this one \(large)")
        }
    }

    @Test("EXPLAIN QUERY PLAN: every branch searches the index with an equality prefix and a range on the next column")
    func everyBranchSeeks() throws {
        let queue = try Self.table(groups: 4, perGroup: 50, nulls: true)
        try queue.read { db in
            let cursor = Self.cursor("two", [("k1", false), ("k2", false)])
            let (sql, arguments) = cursor.entries(after: [1.databaseValue, 2.databaseValue, 77.databaseValue], limit: 10)
            let plan = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN \(sql)", arguments: arguments).map { $0["detail"] as String }
            let searches = plan.filter { $0.contains("INDEX two") }
            #expect(searches.count == 3, "\(plan)")
            #expect(searches.allSatisfy { $0.hasPrefix("SEARCH") }, "\(plan)")
            #expect(searches.contains { $0.contains("k1=? AND k2=? AND rowid>?") }, "\(plan)")
            #expect(searches.contains { $0.contains("k1=? AND k2>?") }, "\(plan)")
            #expect(searches.contains { $0.contains("k1>?") }, "\(plan)")
        }
    }
}
