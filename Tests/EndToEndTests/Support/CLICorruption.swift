import Foundation
import GRDB

/// Damaged and foreign files for the CLI error tests.
enum CLICorruption {
    /// Overwrites the middle of the store's last page (a b-tree page of the example store)
    /// with garbage, after checkpointing the WAL into the file.
    static func damageLastPage(of url: URL) throws {
        let queue = try DatabaseQueue(path: url.path)
        try queue.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        try queue.close()
        let handle = try FileHandle(forUpdating: url)
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size - 4096 + 8)
        handle.write(Data(repeating: 0xA5, count: 2000))
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
