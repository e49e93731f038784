import Foundation
import GRDB
import Testing
@testable import Strata

/// The object layer's per-row statements bind their values through SQLite's C API
/// (``DirectBinding``): every value arrives as bound, a wrong count is an error rather than
/// a NULL, and a statement that failed can be bound and run again.
@Suite("Direct binding of per-row statements")
struct DirectBindingTests {
    static func table(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL, d BLOB, e)")
    }

    @Test func everyValueArrivesAsBound() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try Self.table(db)
            let statement = try db.cachedStatement(sql: "INSERT INTO t(a, b, c, d, e) VALUES (?, ?, ?, ?, ?)")
            for i in 1...3 {
                var binding = DirectBinding(statement)
                binding.bind(Int64(i).databaseValue)
                // A string built here and gone once bound: SQLite keeps its own copy.
                binding.bind(String(repeating: "é\(i)", count: 20).databaseValue)
                binding.bind((Double(i) / 4).databaseValue)
                binding.bind(Data([UInt8(i), 0, 255]).databaseValue)
                binding.bind(.null)
                try binding.execute()
            }
            let rows = try Row.fetchAll(db, sql: "SELECT a, b, c, d, e FROM t ORDER BY a")
            #expect(rows.count == 3)
            for (i, row) in zip(1..., rows) {
                #expect(row["a"] == Int64(i))
                #expect(row["b"] == String(repeating: "é\(i)", count: 20))
                #expect(row["c"] == Double(i) / 4)
                #expect(row["d"] == Data([UInt8(i), 0, 255]))
                #expect(row["e"] == DatabaseValue.null)
            }
        }
    }

    @Test func aWrongCountIsAnErrorAndNothingIsWritten() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try Self.table(db)
            let statement = try db.cachedStatement(sql: "INSERT INTO t(a, b) VALUES (?, ?)")
            var binding = DirectBinding(statement)
            binding.bind(1.databaseValue)
            let error = #expect(throws: DatabaseError.self) { try binding.execute() }
            #expect(error?.resultCode == .SQLITE_MISUSE)
            #expect(error?.message?.contains("1 for 2 parameters") == true, "\(String(describing: error))")
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM t") == 0)
        }
    }

    @Test func aStatementThatFailedRunsAgain() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try Self.table(db)
            let statement = try db.makeStatement(sql: "INSERT INTO t(a, b) VALUES (?, ?)")
            for (key, expectFailure) in [(1, false), (1, true), (2, false)] {
                var binding = DirectBinding(statement)
                binding.bind(key.databaseValue)
                binding.bind("row \(key)".databaseValue)
                if expectFailure {
                    let error = #expect(throws: DatabaseError.self) { try binding.execute() }
                    #expect(error?.resultCode == .SQLITE_CONSTRAINT)
                } else {
                    try binding.execute()
                }
            }
            #expect(try String.fetchAll(db, sql: "SELECT b FROM t ORDER BY a") == ["row 1", "row 2"])
        }
    }
}
