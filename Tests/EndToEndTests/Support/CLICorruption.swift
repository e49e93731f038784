import Foundation
import GRDB

/// Damaged and foreign files for the CLI error tests.
enum CLICorruption {
    /// Overwrites the b-tree page of `index` with garbage (keeping its 8-byte page header),
    /// after checkpointing the WAL into the file. Tables and metadata stay readable.
    static func damageIndex(_ index: String, of url: URL) throws {
        let queue = try DatabaseQueue(path: url.path)
        let (page, pageSize) = try queue.writeWithoutTransaction { db in
            _ = try db.checkpoint(.truncate)
            let page = try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = ?", arguments: [index]) ?? 0
            return (page, try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096)
        }
        try queue.close()
        precondition(page > 1, "no index \(index)")
        let handle = try FileHandle(forUpdating: url)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64((page - 1) * pageSize + 8))
        handle.write(Data(repeating: 0xA5, count: pageSize - 8))
    }

    /// An SQLite database with a table of its own and no Strata metadata.
    static func plainSQLiteDatabase(in fixture: CLIFixture) throws -> String {
        let path = fixture.path("plain.sqlite")
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "CREATE TABLE pilots (id INTEGER PRIMARY KEY, name TEXT)") }
        try queue.close()
        return path
    }
}
