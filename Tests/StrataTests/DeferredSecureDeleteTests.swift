import Foundation
import GRDB
import Testing
@testable import Strata

/// A drop with `secure_delete` on (Debian's SQLite default) leaves the pages it frees to the
/// vacuum instead of zeroing and writing each one (`secure_delete = FAST` for its batches),
/// and once the vacuum has run, the dropped values are nowhere in the store's file.
@Suite("Deferred work: freed pages are left to the vacuum, which leaves none behind")
struct DeferredSecureDeleteTests {
    /// Pages of the closed store's file that hold `marker`.
    static func pages(holding marker: String, in url: URL) throws -> Int {
        let data = try Data(contentsOf: url), needle = Data(marker.utf8)
        var count = 0
        for start in stride(from: 0, to: data.count, by: 4096) where data.range(of: needle, in: start..<min(start + 4096, data.count)) != nil {
            count += 1
        }
        return count
    }

    static let rows = 20_000

    /// A store of ``rows`` items at v1 whose dropped notes carry a marker found nowhere else
    /// in it, opened at v2 with deferral; and its file.
    static func markedStore(_ name: String) throws -> (store: PersistentStore, url: URL, directory: TemporaryDirectory) {
        let directory = TemporaryDirectory(name)
        let store = try DeferredIdleBatchTests.store(rows: rows, in: directory, note: "'dropped-secret-' || i")
        return (store, directory.file("store.sqlite"), directory)
    }

    @Test("the drop does not zero freed pages; the connection keeps secure_delete; after the vacuum no dropped value is left")
    func freedPagesGoToTheVacuum() async throws {
        let (store, url, directory) = try Self.markedStore("secure-delete")
        defer { withExtendedLifetime(directory) {} }
        // Zeroing on, whatever this SQLite's compiled default (Debian's is on).
        try await store.database.writeWithoutTransaction { try $0.execute(sql: "PRAGMA secure_delete = ON") }
        // The rewrite and the drop of the old table; not the vacuum.
        let report = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(5), maxTasks: 2))
        #expect(report.tasksFinished == 2)
        #expect(try store.pendingDeferredWork().map(\.kind) == [.incrementalVacuum])
        // The clients' deletes on the writer are still zeroed.
        let zeroing = try await store.database.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA secure_delete") }
        #expect(zeroing == 1)
        let free = try await store.database.read { try Int.fetchOne($0, sql: "PRAGMA freelist_count") } ?? 0
        #expect(free > 100)
        try store.close()
        // Freed pages left as they were (zeroed, as before this change, none would hold the marker).
        let before = try Self.pages(holding: "dropped-secret-", in: url)
        #expect(before > free / 2, "\(before) of \(free) free pages hold dropped values")
        let reopened = try PersistentStore.open(at: url, model: DeferredIdleBatchTests.v2, options: StoreOptions(migration: .deferred))
        _ = try await reopened.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(5)))
        try DeferredIdleBatchTests.check(reopened, rows: Self.rows)
        let left = try await reopened.database.read { try Int.fetchOne($0, sql: "PRAGMA freelist_count") }
        #expect(left == 0)
        try reopened.close()
        #expect(try Self.pages(holding: "dropped-secret-", in: url) == 0)
        let wal = URL(fileURLWithPath: url.path + "-wal")
        let inWAL = FileManager.default.fileExists(atPath: wal.path) ? try Self.pages(holding: "dropped-secret-", in: wal) : 0
        #expect(inWAL == 0)
    }

    @Test("a store without auto_vacuum keeps the connection's zeroing in its drops")
    func withoutAutoVacuumFreedPagesAreZeroed() async throws {
        let (store, url, directory) = try Self.markedStore("secure-delete-none")
        defer { withExtendedLifetime(directory) {} }
        try store.close()
        // The store's file turned into one without auto_vacuum (as a foreign store may be).
        let queue = try DatabaseQueue(path: url.path)
        try await queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = DELETE; PRAGMA auto_vacuum = NONE")
            try db.execute(sql: "VACUUM")
            try db.execute(sql: "PRAGMA journal_mode = WAL")
        }
        try queue.close()
        let reopened = try PersistentStore.open(at: url, model: DeferredIdleBatchTests.v2, options: StoreOptions(migration: .deferred))
        let autoVacuum = try await reopened.database.read { try Int.fetchOne($0, sql: "PRAGMA auto_vacuum") }
        #expect(autoVacuum == 0)
        try await reopened.database.writeWithoutTransaction { try $0.execute(sql: "PRAGMA secure_delete = ON") }
        _ = try await reopened.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(5)))
        try DeferredIdleBatchTests.check(reopened, rows: Self.rows)
        let kept = try await reopened.database.read { try Int.fetchOne($0, sql: "PRAGMA freelist_count") } ?? 0
        #expect(kept > 100)
        try reopened.close()
        #expect(try Self.pages(holding: "dropped-secret-", in: url) == 0)
    }
}
