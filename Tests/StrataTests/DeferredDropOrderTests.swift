import Foundation
import GRDB
import Synchronization
import Testing
@testable import Strata

/// The old table of a rewrite is deleted from its end, so that the pages freed last — the
/// first in SQLite's freelist, last in first out — are the file's lowest. The vacuum after the
/// drop moves each page from the end of the file into the first free page it finds below the
/// file's final size: with the old table deleted from its start, its last pages, above that
/// size, came first in the list, and every page moved searched past them (at 4M rows, most of
/// the vacuum's time).
@Suite("Deferred work: the old table is freed from its end")
struct DeferredDropOrderTests {
    /// Also with idle batches, whose drop frees its rest in one `DROP TABLE` (in rowid order)
    /// only once the rest lies below the final size and fits one batch budget.
    @Test("after the drop, the vacuum's first free page below the file's final size is at the head of the freelist",
          arguments: [false, true])
    func freelistHeadIsBelowTheFinalSize(idle: Bool) async throws {
        let rows = 200_000
        let directory = TemporaryDirectory("drop-order")
        // Notes of 200 characters, dropped by v2: the old table is several times the new
        // one, so most of its pages lie above the file's final size.
        let store = try DeferredIdleBatchTests.store(rows: rows, in: directory, note: "printf('%200d', i)")
        let url = directory.file("store.sqlite")
        // The rewrite (the swap leaves the old table to drop) and the drop; not the vacuum.
        var options = FinishOptions(batchBudget: .milliseconds(5), maxTasks: 2)
        if idle { (options.clientsActive, options.idleBatchBudget) = ({ false }, .milliseconds(250)) }
        let deleted = Mutex<Int64>(0)
        let report = try await store.finishDeferredMigration(options) { progress in
            guard progress.task.kind == .dropTable else { return }
            deleted.withLock { $0 = max($0, progress.task.rowsDone) }
        }
        #expect(report.tasksFinished == 2)
        // Idle or not, at most the last few 5 ms batches' worth goes in one DROP TABLE (a
        // client arriving during it waits for all of it: issue 44).
        let rowsDeleted = deleted.withLock { $0 }
        #expect(rowsDeleted >= Int64(rows) * 3 / 4, "\(rowsDeleted) of \(rows) rows deleted one by one")
        #expect(try store.pendingDeferredWork().map(\.kind) == [.incrementalVacuum])
        let (pageSize, finalSize) = try await store.database.read { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            let free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
            return (try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096, pages - free)
        }
        // Closed, the store's pages are all in its file (the last connection checkpoints).
        try store.close()
        // Page 1's header names the first freelist trunk (offset 32); a trunk page lists its
        // leaf count at offset 4 and the leaves from offset 8 (big-endian page numbers).
        let file = try FileHandle(forReadingFrom: url)
        defer { try? file.close() }
        func page(_ number: Int) throws -> [UInt8] {
            try file.seek(toOffset: UInt64((number - 1) * pageSize))
            return [UInt8](try #require(try file.read(upToCount: pageSize)))
        }
        func int(_ bytes: [UInt8], at offset: Int) -> Int {
            bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
        }
        // Walk the freelist as the vacuum's page allocation searches it (trunks from the head,
        // each trunk's leaves in order) and count the entries before the first page below
        // the final size: what each page the vacuum moves has to search past.
        var trunk = int(try page(1), at: 32)
        var scanned = 0, found = false, trunks = 0
        while trunk != 0, !found {
            let bytes = try page(trunk)
            trunks += 1
            for i in 0..<int(bytes, at: 4) {
                if int(bytes, at: 8 + 4 * i) <= finalSize { found = true; break }
                scanned += 1
            }
            trunk = int(bytes, at: 0)
        }
        #expect(found)
        // From the end: 0 pages to pass here (the head of the list holds the old table's
        // first pages); from the start, as before: 516.
        #expect(scanned < 100, "the vacuum's search passes \(scanned) free pages above the final size \(finalSize) (over \(trunks) freelist trunks)")
        // Reopened, the vacuum finishes, and nothing was lost.
        let reopened = try PersistentStore.open(at: url, model: DeferredIdleBatchTests.v2,
                                                options: StoreOptions(migration: .deferred))
        _ = try await reopened.finishDeferredMigration()
        try DeferredIdleBatchTests.check(reopened, rows: rows)
        try reopened.close()
    }
}
