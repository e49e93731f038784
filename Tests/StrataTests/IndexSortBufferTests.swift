import Foundation
import GRDB
import Synchronization
import Testing
@testable import Strata

/// The sort buffer's runs and their merge: the index's order, durable across a close, a
/// crash and a pause (a build loses at most the run being sorted or the batch being merged).
@Suite("Index sort buffer: sorted runs, merged in key order, kept through a close")
struct IndexSortBufferTests {
    static let keys = [IndexSortBuffer.Key(column: "k", type: "TEXT", descending: false),
                       IndexSortBuffer.Key(column: "n", type: "INTEGER", descending: true)]

    /// A store file with `rows` rows over `groups` values of `k` and 7 of `n`, in WAL mode as
    /// a store is (the buffer's connection may read while the store's writer commits).
    static func storeFile(in directory: TemporaryDirectory, rows: Int = 5000, groups: Int = 4) throws -> URL {
        let url = directory.file("store.sqlite")
        let queue = try DatabaseQueue(path: url.path)
        try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (k TEXT, n INTEGER, v)")
            try db.execute(sql: "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?) INSERT INTO t SELECT 'c' || (i % ?), i % 7, i FROM s",
                           arguments: [rows, groups])
        }
        try queue.close()
        return url
    }

    /// Sorts all of `t` into runs of `size`; returns how many.
    static func sortAll(_ buffer: IndexSortBuffer, size: Int) throws -> Int {
        var after: Int64? = nil
        var runs = 0
        while true {
            let result = try #require(try buffer.sortRun(runs, from: "t", after: after, size: size, shouldContinue: { true }))
            runs += 1
            guard let upper = result.upper else { return runs }
            after = upper
        }
    }

    /// The store's writer as the merge uses it: the container `c` and the changed rows `ch`
    /// made, the buffer at `bufferPath` attached.
    static func mergeWriter(_ url: URL, bufferPath: String) throws -> DatabaseQueue {
        let writer = try DatabaseQueue(path: url.path)
        try writer.write { db in
            try db.execute(sql: "CREATE TABLE c (k0 TEXT, k1 INTEGER, rowid_ INTEGER, PRIMARY KEY (k0, k1 DESC, rowid_)) WITHOUT ROWID")
            try db.execute(sql: "CREATE TABLE ch (rid INTEGER PRIMARY KEY)")
        }
        try writer.writeWithoutTransaction { db in try db.execute(sql: "ATTACH DATABASE ? AS \(IndexSortBuffer.attachment)", arguments: [bufferPath]) }
        return writer
    }

    @Test("runs merged in batches append exactly the index's order; a reopened buffer keeps the runs the ledger knows")
    func runsMergeInOrder() throws {
        let directory = TemporaryDirectory("sortbuffer")
        let url = try Self.storeFile(in: directory)
        let path = directory.file("buffer.sort").path
        // Three runs of 1,000 rows; the ledger (here: `known`) recorded two.
        var buffer = try IndexSortBuffer(path: path, storePath: url.path, keys: Self.keys, identity: "7 c", runs: 0)
        #expect(buffer.isNew)
        var uppers: [Int64?] = []
        for n in 0..<3 {
            let result = try #require(try buffer.sortRun(n, from: "t", after: uppers.last ?? nil, size: 1000, shouldContinue: { true }))
            #expect(!result.sawNull)
            uppers.append(result.upper)
        }
        buffer.close()
        buffer = try IndexSortBuffer(path: path, storePath: url.path, keys: Self.keys, identity: "7 c", runs: 2)
        #expect(!buffer.isNew)
        #expect(try buffer.runLengths(2) == [1000, 1000])
        #expect(throws: (any Error).self) { try buffer.runLengths(3) }
        // Another build's buffer at that path is not reused.
        buffer.close()
        let other = try IndexSortBuffer(path: path, storePath: url.path, keys: Self.keys, identity: "8 c", runs: 2)
        #expect(other.isNew)
        other.close()
        buffer = try IndexSortBuffer(path: path, storePath: url.path, keys: Self.keys, identity: "7 c", runs: 0)
        let runs = try Self.sortAll(buffer, size: 1300)
        #expect(runs == 4)
        let merge = SortedRunMerge(keys: Self.keys, lengths: try buffer.runLengths(runs))
        #expect(merge.lengths.reduce(0, +) == 5000)

        let writer = try Self.mergeWriter(url, bufferPath: path)
        let expected: [[Int64]] = try writer.write { db in
            try db.execute(sql: "INSERT INTO ch VALUES (17), (4000)")   // changed rows: the triggers' business
            return try Row.fetchAll(db, sql: "SELECT k, n, rowid FROM t ORDER BY k, n DESC, rowid").map { [Int64(String(($0[0] as String).dropFirst()))!, $0[1] as Int64, $0[2] as Int64] }
        }
        var positions = Array(repeating: Int64(0), count: runs)
        var batches = 0
        while positions != merge.lengths {
            let next = try writer.write { db -> [Int64] in
                let next = try merge.next(after: positions, size: 97, in: db)
                let (sql, arguments) = merge.appendSQL(from: positions, to: next, container: "c", changes: "ch")
                try db.execute(sql: sql, arguments: arguments)
                return next
            }
            let taken = Int(zip(positions, next).reduce(Int64(0)) { $0 + $1.1 - $1.0 })
            #expect(taken == min(97, 5000 - Int(positions.reduce(0, +))), "batch \(batches): \(taken) entries")
            positions = next
            batches += 1
            // Everything appended so far is exactly the first entries of the index's order.
            let done = Int(positions.reduce(0, +))
            let container = try writer.read { db in
                try Row.fetchAll(db, sql: "SELECT k0, k1, rowid_ FROM c ORDER BY k0, k1 DESC, rowid_").map { [Int64(String(($0[0] as String).dropFirst()))!, $0[1] as Int64, $0[2] as Int64] }
            }
            #expect(container == expected.prefix(done).filter { $0[2] != 17 && $0[2] != 4000 }, "after batch \(batches)")
            if container.count != expected.prefix(done).count - expected.prefix(done).filter({ $0[2] == 17 || $0[2] == 4000 }).count { break }
        }
        #expect(batches > 10)
        try writer.close()
        buffer.discard()
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// Before, a batch found its bound with seeks in every open run: about `runs × (1 + log₂ m)`
    /// statements a batch however small, so a small budget collapsed the merge (4M rows, 62
    /// runs, `batch_budget` 5 ms: 40–50 entries a batch). Now the runs are read ahead in chunks.
    @Test("a merge batch of 16 entries over 64 runs reads the runs in chunks, not with seeks in every run; each batch takes exactly its size")
    func mergeBatchCostIsBoundedByItsEntries() throws {
        let directory = TemporaryDirectory("sortmerge-cost")
        // 12,790 rows over 3 values of k: one key group spans every run.
        let url = try Self.storeFile(in: directory, rows: 12_790, groups: 3)
        let path = directory.file("buffer.sort").path
        let buffer = try IndexSortBuffer(path: path, storePath: url.path, keys: Self.keys, identity: "1 c", runs: 0)
        defer { buffer.discard() }
        let runs = try Self.sortAll(buffer, size: 200)
        #expect(runs == 64)
        let writer = try Self.mergeWriter(url, bufferPath: path)
        func entries(_ sql: String) throws -> [String] {
            try writer.read { db in try Row.fetchAll(db, sql: sql).map { "\($0[0] as String) \($0[1] as Int64) \($0[2] as Int64)" } }
        }
        let expected = try entries("SELECT k, n, rowid FROM t ORDER BY k, n DESC, rowid")
        /// Merges every run in batches of 16 (filled ahead through the buffer's own connection
        /// before each when a run runs low, with `prefill`; and, with `overlap`, for the next
        /// batch on another thread while each appends, as the finisher does: wait for that
        /// read-ahead before the commit); returns the batches, the statements they made on the
        /// writer outside their appends, the chunks read before the batches (not in the
        /// overlap) and how many reads of the buffer were opened before them.
        func mergeAll(_ merge: SortedRunMerge, prefill: Bool, overlap: SortedRunMerge.Overlap? = nil) throws -> (batches: Int, statements: Int, readBefore: Int, reads: Int) {
            try writer.write { db in try db.execute(sql: "DELETE FROM c") }
            let statements = Mutex(0)
            var positions = Array(repeating: Int64(0), count: runs)
            var batches = 0, readBefore = 0, prefillReads = 0
            while positions != merge.lengths {
                let from = positions
                overlap?.wait()
                let reads = merge.chunkReads
                if prefill, merge.needsPrefill(after: from) {
                    try buffer.read { db in try merge.prefill(after: from, in: db) }
                    prefillReads += 1
                }
                readBefore += merge.chunkReads - reads
                try writer.write { db in
                    db.trace(options: .statement) { _ in statements.withLock { $0 += 1 } }
                    let next = try merge.next(after: from, size: 16, in: db)
                    db.trace(options: [])
                    if let overlap, next != merge.lengths {
                        overlap.start { _ = try? buffer.read { db in try merge.prefill(after: next, in: db) } }
                    }
                    #expect(Int(zip(from, next).reduce(Int64(0)) { $0 + $1.1 - $1.0 }) == min(16, 12790 - Int(from.reduce(0, +))))
                    let (sql, arguments) = merge.appendSQL(from: from, to: next, container: "c", changes: "ch")
                    try db.cachedStatement(sql: sql).execute(arguments: arguments)
                    positions = next
                    // Ended before the commit: the buffer's connection must not hold its read
                    // lock then (the writer's write transaction covers the attached buffer).
                    overlap?.wait()
                }
                batches += 1
            }
            return (batches, statements.withLock { $0 }, readBefore, prefillReads)
        }

        let merge = SortedRunMerge(keys: Self.keys, lengths: try buffer.runLengths(runs), chunk: 128)
        let inBatch = try mergeAll(merge, prefill: false)
        #expect(inBatch.batches == 800)
        // Two chunks of 128 per run of 200 (the last 190) entries; the seeks made about 300 statements a batch.
        #expect(merge.chunkReads == 128)
        #expect(inBatch.statements == 128)
        #expect(try entries("SELECT k0, k1, rowid_ FROM c") == expected)

        // Filled ahead through the buffer's own connection before each batch (as the finisher
        // does, outside the store's write lock), the batches read nothing while they hold it.
        let prefilled = SortedRunMerge(keys: Self.keys, lengths: merge.lengths, chunk: 128)
        #expect(try mergeAll(prefilled, prefill: true).statements == 0)
        #expect(prefilled.chunkReads >= 128)
        #expect(try entries("SELECT k0, k1, rowid_ FROM c") == expected)

        // Filled for the next batch while each batch appends: the reads before the batches are
        // the first batch's (one chunk per run); every later chunk was read in the overlap.
        let overlapped = SortedRunMerge(keys: Self.keys, lengths: merge.lengths, chunk: 128)
        let run = try mergeAll(overlapped, prefill: true, overlap: SortedRunMerge.Overlap())
        #expect(run.statements == 0)
        #expect(run.readBefore == runs, "chunks read before a batch instead of in the overlap: \(run.readBefore)")
        // Only the first batch opened a read of the buffer before it: none held the buffer's
        // lock between batches, when clients commit.
        #expect(run.reads == 1, "\(run.reads) reads of the buffer between batches")
        #expect(overlapped.chunkReads >= 128)
        #expect(try entries("SELECT k0, k1, rowid_ FROM c") == expected)
        try writer.close()
    }

    /// The merge orders entries in Swift; SQLite orders the runs and the index. They agree on
    /// every pair of values of every storage class (else batches would overlap).
    @Test("the merge's order of key values is SQLite's: integers and reals by value, text and blobs by their bytes, NULL first")
    func keyOrderIsSQLites() throws {
        let queue = try DatabaseQueue()
        let values = try queue.write { db -> [(String, SortedRunMerge.Key)] in
            try db.execute(sql: "CREATE TABLE v (x)")
            let literals = ["NULL", "0", "-1", "1", "0.5", "-0.5", "1.0", "2", "1.9999999999", "9223372036854775807", "-9223372036854775808",
                            "9223372036854775807.0", "-9223372036854775808.0", "9.3e18", "-9.3e18", "1e300", "-1e300", "4503599627370497",
                            "4503599627370496.0", "''", "'a'", "'A'", "'ab'", "'a b'", "'é'", "'e'", "'z'", "'日本'", "'Ω'", "'a' || char(0) || 'b'",
                            "x''", "x'00'", "x'0001'", "x'ff'", "x'61'", "'1'", "'10'", "'9'"]
            for literal in literals { try db.execute(sql: "INSERT INTO v VALUES (\(literal))") }
            let statement = try db.makeStatement(sql: "SELECT quote(x), x FROM v")
            var read: [(String, SortedRunMerge.Key)] = []
            let cursor = try Row.fetchCursor(statement)
            while let row = try cursor.next() {
                read.append((row[0] as String, SortedRunMerge.key(statement.sqliteStatement, 1)))
            }
            return read
        }
        #expect(values.count == 38)
        try queue.read { db in
            for (i, a) in values.enumerated() {
                for (j, b) in values.enumerated() {
                    let sqlite = try Int.fetchOne(db, sql: "SELECT CASE WHEN a.x IS b.x THEN 0 WHEN a.x IS NULL THEN -1 WHEN b.x IS NULL THEN 1 WHEN a.x < b.x THEN -1 ELSE 1 END FROM v a, v b WHERE a.rowid = ? AND b.rowid = ?",
                                                 arguments: [i + 1, j + 1])!
                    let swift = SortedRunMerge.compare(a.1, b.1).signum()
                    #expect(swift == sqlite, "\(a.0) vs \(b.0): SQLite \(sqlite), the merge \(swift)")
                }
            }
        }
    }

    /// The merge keeps a read-ahead of every open run and names each in its append, so the
    /// number of runs is bounded: a large table gets longer runs instead of more.
    @Test("a large table is sorted into at most maxRuns runs; a small one into runs of runSize")
    func runCountIsBounded() {
        #expect(IndexSortBuffer.runSize(forRows: 0) == IndexSortBuffer.runSize)
        #expect(IndexSortBuffer.runSize(forRows: 1_000_000) == IndexSortBuffer.runSize)
        for rows: Int64 in [4_194_304, 4_194_305, 16_000_000, 64_000_003] {
            let size = Int64(IndexSortBuffer.runSize(forRows: rows))
            let runs = (rows + size - 1) / size
            #expect(runs <= Int64(IndexSortBuffer.maxRuns), "\(rows) rows: \(runs) runs of \(size)")
            #expect(runs >= Int64(IndexSortBuffer.maxRuns) - 1, "\(rows) rows: runs longer than needed (\(size))")
        }
        #expect(IndexSortBuffer.runSize(forRows: 16_000_000) == 250_000)
    }

    @Test("a build over more rows than a run sorts several runs and merges them into the index's order")
    func buildMergesSeveralRuns() async throws {
        let directory = TemporaryDirectory("sortruns")
        let url = directory.file("store.sqlite")
        let rows = IndexSortBuffer.runSize * 2 + 1000
        try DeferredBoundedStepsTests.seed(rows, at: url)
        let store = try PersistentStore.open(at: url, model: DeferredBoundedStepsTests.byScore, options: StoreOptions(migration: .deferred))
        let report = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(5)))
        #expect(report.tasksRemaining == 0)
        #expect(try DeferredBoundedStepsTests.integrity(store) == "ok")
        let viaIndex = try DeferredMigrationTests.rows(store, "SELECT _pk FROM Item INDEXED BY Item_byScore ORDER BY score DESC, _pk")
        let viaTable = try DeferredMigrationTests.rows(store, "SELECT _pk FROM Item NOT INDEXED ORDER BY score DESC, _pk")
        #expect(viaIndex == viaTable && viaIndex.count == rows)
        try store.close()
    }

    @Test("an index build stopped while merging, its store closed and reopened, resumes from its runs and merged positions")
    func buildResumesAfterClose() async throws {
        let directory = TemporaryDirectory("sortresume")
        let url = directory.file("store.sqlite")
        try DeferredBoundedStepsTests.seed(3000, at: url)
        var store = try PersistentStore.open(at: url, model: DeferredBoundedStepsTests.byScore, options: StoreOptions(migration: .deferred))
        #expect(try store.pendingDeferredWork().map(\.kind) == [.createIndex])
        let merging = Atomic<Bool>(false)
        let first = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1), shouldContinue: { !merging.load(ordering: .relaxed) })) { update in
            if update.task.kind == .createIndex, update.task.rowsDone > 0 { merging.store(true, ordering: .relaxed) }
        }
        #expect(first.stoppedEarly)
        try store.close()
        // The buffer outlives the close; the ledger says where the build is.
        let buffers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasSuffix(".sort") }
        #expect(buffers.count == 1)
        store = try PersistentStore.open(at: url, model: DeferredBoundedStepsTests.byScore, options: StoreOptions(migration: .deferred))
        let build = try #require(try await store.database.read { db in try DeferredLedger.entries(in: db).first?.progress.build })
        #expect(build.runs == 1 && build.collected == Int64.max)
        let merged = (build.merged ?? []).reduce(0, +)
        #expect(merged > 0 && merged < 3000, "merged \(merged)")
        let second = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1)))
        #expect(second.tasksRemaining == 0)
        // Resumed: only the entries left were merged.
        #expect(second.rowsProcessed == 3000 - merged)
        #expect(try DeferredBoundedStepsTests.integrity(store) == "ok")
        #expect(try DeferredMigrationTests.snapshot(store) == DeferredMigrationTests.freshSchema(DeferredBoundedStepsTests.byScore))
        let viaIndex = try DeferredMigrationTests.rows(store, "SELECT _pk FROM Item INDEXED BY Item_byScore ORDER BY score DESC, _pk")
        let viaTable = try DeferredMigrationTests.rows(store, "SELECT _pk FROM Item NOT INDEXED ORDER BY score DESC, _pk")
        #expect(viaIndex == viaTable && viaIndex.count == 3000)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasSuffix(".sort") }.isEmpty)
        try store.close()
    }

    @Test("sorting a run reads the store in a snapshot: another connection takes the store's write lock at once meanwhile")
    func sortingHoldsNoStoreLock() throws {
        let directory = TemporaryDirectory("sortbuffer-lock")
        let url = directory.file("store.sqlite")
        let setup = try DatabaseQueue(path: url.path)
        try setup.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "CREATE TABLE t (k TEXT, n INTEGER, v)")
            try db.execute(sql: "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 100000) INSERT INTO t SELECT 'c' || (i % 4), i % 7, i FROM s")
        }
        try setup.close()
        // A client: no busy timeout, so a held write lock fails its BEGIN IMMEDIATE at once.
        let client = try DatabaseQueue(path: url.path)
        let probes = Mutex<(taken: Int, refused: Int)>((0, 0))
        let buffer = try IndexSortBuffer(path: directory.file("buffer.sort").path, storePath: url.path, keys: Self.keys, identity: "9 c", runs: 0)
        defer { buffer.discard() }
        // Probed from the sort's own progress callback, while its statement runs (at most every millisecond).
        let result = try buffer.sortRun(0, from: "t", after: nil, size: 100_000, shouldContinue: { true }, interruptRequested: {
            do {
                try client.writeWithoutTransaction { db in
                    try db.execute(sql: "BEGIN IMMEDIATE")
                    try db.execute(sql: "ROLLBACK")
                }
                probes.withLock { $0.taken += 1 }
            } catch {
                probes.withLock { $0.refused += 1 }
            }
            return false
        })
        #expect(result != nil)
        let seen = probes.withLock { $0 }
        #expect(seen.taken > 0, "the probe never ran during the sort: it cannot tell")
        #expect(seen.refused == 0, "the sort held the store's write lock (BEGIN IMMEDIATE refused \(seen.refused) times)")
        #expect(try buffer.runLengths(1) == [100_000])
    }
}
