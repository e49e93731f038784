import GRDB
import GRDBSQLite

/// The object layer's per-row `INSERT`, `UPDATE` and `DELETE`: values bound straight through
/// SQLite's C API.
///
/// `execute(arguments:)` converts its arguments to existential bindings (`any
/// StatementBinding`), one box and a nested closure per value; a `perf` profile of
/// `strata-bench crud`'s insert put that at about a third of Strata's time outside SQLite.
/// Here each `DatabaseValue` binds itself (a copy of text and blobs: `SQLITE_TRANSIENT`),
/// and the count is checked against the statement's parameters as GRDB's own validation does.
struct DirectBinding {
    private let statement: Statement
    private let sqliteStatement: OpaquePointer
    private var index: CInt = 1

    /// Starts binding `statement`'s parameters (its earlier bindings cleared).
    init(_ statement: Statement) {
        self.statement = statement
        sqliteStatement = statement.sqliteStatement
        // A statement whose last step failed answers its first reset with that error (GRDB
        // drops such statements from its caches; this reset takes it, should one come back),
        // so that GRDB's own reset below succeeds.
        sqlite3_reset(sqliteStatement)
        // Marks the statement's arguments as bound (none through GRDB), so that `execute()`
        // only resets it (a reset keeps bindings) before stepping.
        statement.setUncheckedArguments([])
    }

    /// Binds the next parameter.
    @inline(__always)
    mutating func bind(_ value: DatabaseValue) {
        let code = value.bind(to: sqliteStatement, at: index)
        precondition(code == SQLITE_OK, "binding parameter \(index) of \(statement.sql) failed (\(code))")
        index += 1
    }

    /// Runs the statement with the values bound so far, then clears them.
    func execute() throws {
        let expected = sqlite3_bind_parameter_count(sqliteStatement)
        guard index - 1 == expected else {
            sqlite3_clear_bindings(sqliteStatement)
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "wrong number of statement arguments: \(index - 1) for \(expected) parameters",
                                sql: statement.sql)
        }
        defer { sqlite3_clear_bindings(sqliteStatement) }
        try statement.execute()
    }
}
