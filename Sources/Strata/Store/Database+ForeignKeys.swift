import GRDB

extension Database {
    /// Runs `body` with `PRAGMA foreign_keys = OFF` (outside any transaction: SQLite ignores
    /// the pragma inside one), then turns them back on: a table that is going away or being
    /// swapped must not cascade. With `when` false, `body` runs as it is.
    func withForeignKeysOff<T>(when: Bool = true, _ body: () throws -> T) throws -> T {
        guard when else { return try body() }
        try execute(sql: "PRAGMA foreign_keys = OFF")
        defer { try? execute(sql: "PRAGMA foreign_keys = ON") }
        return try body()
    }
}
