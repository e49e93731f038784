import Foundation
import GRDB

/// Read-only questions about a store's file and tables, for tools that inspect a store
/// (`stratactl inspect`) without touching SQLite themselves. Every SQLite error comes back as a
/// ``StoreError`` naming the store and what was being done.
extension PersistentStore {
    /// The exact number of rows of `table` (a full `COUNT(*)`).
    ///
    /// ```swift
    /// let rows = try store.rowCount(ofTable: "Aircraft")   // 200000
    /// ```
    public func rowCount(ofTable table: String) throws(StoreError) -> Int {
        try readMapped("counting the rows of \(table)") { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table.quotedDatabaseIdentifier)") ?? 0
        }
    }

    /// The sizes, page geometry and modes of the store's file.
    public func fileStatistics() throws(StoreError) -> StoreFileStatistics {
        let path = self.path
        return try readMapped("reading file statistics") { db in
            func pragma(_ name: String) throws -> Int { try Int.fetchOne(db, sql: "PRAGMA \(name)") ?? 0 }
            let autoVacuumNames = ["none", "full", "incremental"]
            let autoVacuum = try pragma("auto_vacuum")
            return StoreFileStatistics(
                bytes: Self.fileSize(path), walBytes: Self.fileSize(path + "-wal"), pageSize: try pragma("page_size"),
                pageCount: try pragma("page_count"), freelistCount: try pragma("freelist_count"),
                journalMode: try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "?",
                autoVacuum: autoVacuumNames.indices.contains(autoVacuum) ? autoVacuumNames[autoVacuum] : "?")
        }
    }

    /// What `PRAGMA integrity_check` and `PRAGMA foreign_key_check` find, and one-to-one
    /// relationships whose two sides disagree (``InverseConsistency``), read-only; empty when
    /// the store is sound. Collected line by line: on a badly damaged file SQLite stops the check
    /// with `SQLITE_CORRUPT` after reporting some problems, and that stop is the last problem.
    public func integrityProblems() -> [String] {
        var problems: [String] = []
        do {
            try database.read { db in
                let messages = try String.fetchCursor(db, sql: "PRAGMA integrity_check")
                while let message = try messages.next() {
                    if message != "ok" { problems.append(message) }
                }
                for row in try Row.fetchAll(db, sql: "PRAGMA foreign_key_check") {
                    let table: String = row[0], rowid: Int64? = row[1], parent: String = row[2]
                    problems.append("foreign key: row \(rowid.map(String.init) ?? "?") of \(table) references a missing row of \(parent)")
                }
                problems += try InverseConsistency.mismatches(of: model, in: db).map { "inverse: \($0)" }
            }
        } catch let error as DatabaseError {
            problems.append("the check stopped: \(error.message ?? "\(error.resultCode)")")
        } catch {
            problems.append("the check stopped: \(error)")
        }
        return problems
    }

    /// Runs `body` on a reader connection, mapping errors with ``StoreError/from(_:path:while:)``.
    func readMapped<T>(_ action: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try database.read(body)
        } catch {
            throw StoreError.from(error, path: path, while: action)
        }
    }

    /// The size of the file at `path` in bytes (0 when it does not exist).
    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}
