import Foundation
import GRDB
import Synchronization
import Testing
@testable import Strata

/// Every step of finishing is bounded by a batch: index builds and drops through side tables,
/// rewrites that keep their indexes on the shadow, abandoned work renamed aside.
@Suite("Deferred work in bounded steps: index builds, index drops, rewrites")
struct DeferredBoundedStepsTests {
    static let plain = ObjectModel(version: "items 1", entities: [
        Entity("Item", attributes: [Attribute("name", .string), Attribute("rank", .int64), Attribute("score", .double), Attribute("flag", .bool)],
               indexes: [Index("byFlag", keyPaths: ["flag"])]),
    ])
    /// Adds an index on (rank, score desc), removes the one on flag: no table rewrite.
    static let reindexed = ObjectModel(version: "items 2", entities: [
        Entity("Item", attributes: [Attribute("name", .string), Attribute("rank", .int64), Attribute("score", .double), Attribute("flag", .bool)],
               indexes: [Index("byRankScore", elements: [.init("rank"), .init("score", ascending: false)])]),
    ])

    /// Adds the index on (rank, score desc) and keeps the one on flag: only an index build.
    static let added = ObjectModel(version: "items 2", entities: [
        Entity("Item", attributes: [Attribute("name", .string), Attribute("rank", .int64), Attribute("score", .double), Attribute("flag", .bool)],
               indexes: [Index("byFlag", keyPaths: ["flag"]), Index("byRankScore", elements: [.init("rank"), .init("score", ascending: false)])]),
    ])

    /// Adds an index on score, descending (score is never NULL in the seed): a sorted build.
    static let byScore = ObjectModel(version: "items 2", entities: [
        Entity("Item", attributes: [Attribute("name", .string), Attribute("rank", .int64), Attribute("score", .double), Attribute("flag", .bool)],
               indexes: [Index("byFlag", keyPaths: ["flag"]), Index("byScore", elements: [.init("score", ascending: false)])]),
    ])

    /// `count` items seeded wide and opened narrowed with deferral on (a rewrite pending),
    /// the store's log captured.
    static func narrowedWithLog(_ count: Int, in directory: TemporaryDirectory) throws -> (PersistentStore, CapturingLogHandler.Messages) {
        let url = directory.file("store.sqlite")
        try DeferredMigrationTests.seedItems(count, at: url)
        let (logger, messages) = CapturingLogHandler.logger()
        return (try PersistentStore.open(at: url, model: DeferredMigrationTests.narrow, options: StoreOptions(migration: .deferred, logger: logger)), messages)
    }

    static func seed(_ count: Int, at url: URL, nullFlags: Bool = false) throws {
        let store = try PersistentStore.open(at: url, model: plain)
        try store.database.write { db in
            let statement = try db.makeStatement(sql: "INSERT INTO Item(_pk, name, rank, score, flag) VALUES (?, ?, ?, ?, ?)")
            for i in 1...count {
                // NULLs, integral and fractional doubles: the index must encode them as CREATE INDEX would.
                try statement.execute(arguments: [i, "item-\(i)", i % 7 == 0 ? nil : i % 97, i % 3 == 0 ? 2.0 : Double(i) * 0.25,
                                                  nullFlags && i % 11 == 0 ? nil : i % 2 == 0])
            }
        }
        try store.close()
    }

    static func integrity(_ store: PersistentStore) throws -> String? {
        try store.database.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") }
    }

    static func master(_ store: PersistentStore, _ name: String) throws -> String? {
        try store.database.read { db in try String.fetchOne(db, sql: "SELECT tbl_name FROM sqlite_master WHERE name = ?", arguments: [name]) }
    }

    static func writeFromAnotherConnection(_ url: URL, _ statements: [String]) throws {
        let other = try DatabaseQueue(path: url.path)
        try other.write { db in for sql in statements { try db.execute(sql: sql) } }
        try other.close()
    }

    static func uniqueIndex(_ store: PersistentStore, on table: String) throws -> IndexInfo? {
        try store.database.read { db in try db.indexes(on: table).first { $0.isUnique } }
    }

    static func indexCount(_ store: PersistentStore, on table: String) throws -> Int? {
        try store.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = ?", arguments: [table]) }
    }

    static func rootPage(_ store: PersistentStore, _ name: String) throws -> Int? {
        try store.database.read { db in try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = ?", arguments: [name]) }
    }

    static func writerSetting(_ store: PersistentStore, _ pragma: String) throws -> Int? {
        try store.database.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA \(pragma)") }
    }

    @Test("an index is built on a side table in batches, then moved onto the table; concurrent writes are captured")
    func indexBuildThroughSideTable() async throws {
        let directory = TemporaryDirectory("build")
        let url = directory.file("store.sqlite")
        try Self.seed(3000, at: url)
        let store = try PersistentStore.open(at: url, model: Self.added, options: StoreOptions(migration: .deferred))
        #expect(try store.pendingDeferredWork().map(\.kind) == [.createIndex])
        // Stop in the middle of the build.
        let batches = Counter()
        let first = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1), shouldContinue: { batches.increment() < 12 }))
        #expect(first.stoppedEarly)
        let pending = try store.pendingDeferredWork()
        let build = try #require(pending.first { $0.kind == .createIndex })
        #expect(build.state == .running && build.rowsDone > 0 && build.rowsDone < 3000)
        // The index is not on the table yet; its side table and triggers are.
        #expect(try Self.master(store, "Item_byRankScore") == nil)
        #expect(try Self.master(store, "_strata_build_Item_byRankScore") == "_strata_build_Item_byRankScore")
        // Another connection writes meanwhile: inserts, updates of indexed and other columns, deletes.
        try Self.writeFromAnotherConnection(url, [
            "INSERT INTO Item(_pk, name, rank, score) VALUES (5001, 'late', 3, 9.5), (5002, 'later', NULL, NULL)",
            "UPDATE Item SET rank = 1000 + _pk WHERE _pk IN (1, 2999)",
            "UPDATE Item SET name = 'renamed' WHERE _pk = 5",
            "UPDATE Item SET _pk = 6000 WHERE _pk = 10",
            "DELETE FROM Item WHERE _pk IN (3, 2998)",
        ])
        let second = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1)))
        #expect(second.tasksRemaining == 0)
        #expect(try Self.integrity(store) == "ok")
        #expect(try DeferredMigrationTests.snapshot(store) == DeferredMigrationTests.freshSchema(Self.added))
        // The moved index answers queries like a freshly built one.
        let viaIndex = try DeferredMigrationTests.rows(store, "SELECT _pk FROM Item INDEXED BY Item_byRankScore WHERE rank IN (3, 1001, 3999) ORDER BY _pk")
        let viaTable = try DeferredMigrationTests.rows(store, "SELECT _pk FROM Item NOT INDEXED WHERE rank IN (3, 1001, 3999) ORDER BY _pk")
        #expect(viaIndex == viaTable)
        #expect(viaIndex.contains("5001") && viaIndex.contains("1"))
        #expect(try DeferredMigrationTests.int(store, "SELECT count(*) FROM Item") == 3000)
        #expect(try DeferredMigrationTests.int(store, "SELECT count(*) FROM Item INDEXED BY Item_byRankScore WHERE rank IS NULL") == 3000 / 7 + 1)
        try store.close()
    }

    /// Finishes in short runs (each stopped after `calls` checks), running `between` after each.
    static func finishInShortRuns(_ store: PersistentStore, calls: Int, between: (Int) throws -> Void) async throws -> Int {
        var runs = 0
        while try !store.pendingDeferredWork().isEmpty {
            let allowed = Counter()
            _ = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1), shouldContinue: { allowed.increment() < calls }))
            runs += 1
            try between(runs)
            if runs > 500 { break }
        }
        return runs
    }

    /// The rows read through `index` and read from the table, in the index's order (`columns`
    /// selected, `order` its ORDER BY): equal when the index holds exactly the table's entries.
    static func throughIndexAndTable(_ store: PersistentStore, _ index: String, _ columns: String, order: String) throws -> (index: [String], table: [String]) {
        (try DeferredMigrationTests.rows(store, "SELECT \(columns) FROM Item INDEXED BY \(index) ORDER BY \(order)"),
         try DeferredMigrationTests.rows(store, "SELECT \(columns) FROM Item NOT INDEXED ORDER BY \(order)"))
    }

    @Test("a sorted build collects, sorts and appends in key order across pauses; other connections' writes are captured")
    func sortedBuildAcrossPauses() async throws {
        let directory = TemporaryDirectory("sorted")
        let url = directory.file("store.sqlite")
        try Self.seed(3000, at: url)
        let store = try PersistentStore.open(at: url, model: Self.byScore, options: StoreOptions(migration: .deferred))
        #expect(try store.pendingDeferredWork().map(\.kind) == [.createIndex])
        let sawContainer = Counter()
        let runs = try await Self.finishInShortRuns(store, calls: 3) { run in
            if try Self.master(store, "_strata_sorted_Item_byScore") != nil { sawContainer.increment() }
            // Between runs, another connection inserts, updates (keys and other columns), moves and deletes rows.
            try Self.writeFromAnotherConnection(url, [
                "INSERT INTO Item(_pk, name, rank, score) VALUES (\(10_000 + run), 'late', 1, \(Double(run) * 1.5))",
                "UPDATE Item SET score = -\(run) WHERE _pk = \(run * 7)",
                "UPDATE Item SET name = 'renamed' WHERE _pk = \(run * 11)",
                "DELETE FROM Item WHERE _pk = \(run * 13 + 1)",
                "UPDATE Item SET _pk = \(20_000 + run) WHERE _pk = \(run * 17 + 2)",
            ])
        }
        #expect(runs > 3)
        #expect(sawContainer.value > 0)
        #expect(try Self.integrity(store) == "ok")
        #expect(try DeferredMigrationTests.snapshot(store) == DeferredMigrationTests.freshSchema(Self.byScore))
        let (viaIndex, viaTable) = try Self.throughIndexAndTable(store, "Item_byScore", "_pk, score", order: "score DESC, _pk")
        #expect(viaIndex == viaTable)
        #expect(viaIndex.count > 2900)
        try store.close()
    }

    /// Rowids in a sorted build's change log (`_strata_changes_<index>`).
    static func noted(_ store: PersistentStore, _ index: String) throws -> [Int64] {
        try store.database.read { db in try Int64.fetchAll(db, sql: "SELECT rid FROM _strata_changes_\(index) ORDER BY rid") }
    }

    /// Runs the store's deferred work until the sorted build of `index` has begun (its change
    /// log exists), and stops there.
    static func runUntilSortedBuildBegins(_ store: PersistentStore, _ index: String) async throws {
        _ = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1), shouldContinue: {
            (try? master(store, "_strata_changes_\(index)")) ?? nil == nil
        }))
        try #require(try master(store, "_strata_changes_\(index)") != nil)
    }

    @Test("during a sorted build an update that leaves a row's entry as it was is not noted; one that moves it is")
    func sortedBuildNotesOnlyMovedEntries() async throws {
        let directory = TemporaryDirectory("sorted-kept-keys")
        let url = directory.file("store.sqlite")
        try Self.seed(3000, at: url)
        let store = try PersistentStore.open(at: url, model: Self.byScore, options: StoreOptions(migration: .deferred))
        defer { try? store.close() }
        try await Self.runUntilSortedBuildBegins(store, "Item_byScore")
        let before = try Self.noted(store, "Item_byScore")
        try Self.writeFromAnotherConnection(url, [
            // The key named in the SET but left as it was, with another column: nothing to note.
            "UPDATE Item SET name = 'renamed', score = score WHERE _pk = 10",
            "UPDATE Item SET score = score, rank = 5 WHERE _pk BETWEEN 100 AND 199",
            // A key that changes, a rowid that changes: their entries move.
            "UPDATE Item SET score = -1.5 WHERE _pk = 20",
            "UPDATE Item SET _pk = 40000 WHERE _pk = 30",
        ])
        #expect(try Self.noted(store, "Item_byScore") == (before + [20, 30, 40000]).sorted())
        try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(2)))
        #expect(try Self.integrity(store) == "ok")
        let (viaIndex, viaTable) = try Self.throughIndexAndTable(store, "Item_byScore", "_pk, score", order: "score DESC, _pk")
        #expect(viaIndex == viaTable && viaIndex.count == 3000)
    }

    /// A rewrite's capture trigger updates the shadow's row in place when the live row keeps
    /// its key: a shadow index's build then sees a write to a column outside its key as
    /// nothing to note (a delete and an insert of the row, as before, noted every write).
    @Test("a live update that keeps the key reaches a rewrite's shadow in place, unnoted by the shadow index's build")
    func rewriteMirrorKeepsTheShadowsEntries() async throws {
        let directory = TemporaryDirectory("mirror-in-place")
        let (store, _) = try Self.narrowedWithLog(3000, in: directory)
        defer { try? store.close() }
        try await Self.runUntilSortedBuildBegins(store, "Item_byRank")
        let before = try Self.noted(store, "Item_byRank")
        try await store.database.write { db in
            try db.execute(sql: "UPDATE Item SET name = name || '!' WHERE _pk = 10")
            try db.execute(sql: "UPDATE Item SET rank = rank + 1000 WHERE _pk = 20")
        }
        #expect(try Self.noted(store, "Item_byRank") == (before + [20]).sorted())
        #expect(try store.syncRead { db in try String.fetchOne(db, sql: "SELECT name FROM _strata_rewrite_Item WHERE _pk = 10") }?.hasSuffix("!") == true)
        try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(2)))
        #expect(try Self.integrity(store) == "ok")
        #expect(try DeferredMigrationTests.snapshot(store) == DeferredMigrationTests.freshSchema(DeferredMigrationTests.narrow))
        let (viaIndex, viaTable) = try Self.throughIndexAndTable(store, "Item_byRank", "_pk, rank", order: "rank, _pk")
        #expect(viaIndex == viaTable && viaIndex.count == 3000)
    }

    @Test("a NULL key written during a sorted build sends it to a side table; the index still gets every row")
    func nullKeyDuringSortedBuild() async throws {
        let directory = TemporaryDirectory("sorted")
        let url = directory.file("store.sqlite")
        try Self.seed(2000, at: url)
        let store = try PersistentStore.open(at: url, model: Self.byScore, options: StoreOptions(migration: .deferred))
        let sawSideTable = Counter()
        _ = try await Self.finishInShortRuns(store, calls: 4) { run in
            if run == 2 { try Self.writeFromAnotherConnection(url, ["INSERT INTO Item(_pk, name, score) VALUES (9000, 'no score', NULL)"]) }
            if try Self.master(store, "_strata_build_Item_byScore") != nil { sawSideTable.increment() }
        }
        #expect(sawSideTable.value > 0)
        #expect(try Self.integrity(store) == "ok")
        #expect(try DeferredMigrationTests.snapshot(store) == DeferredMigrationTests.freshSchema(Self.byScore))
        #expect(try DeferredMigrationTests.int(store, "SELECT count(*) FROM Item INDEXED BY Item_byScore WHERE score IS NULL") == 1)
        // Nothing of the build is left: only Strata's metadata tables (metadata, migration and
        // change history, the ledger) carry the prefix.
        let metadata = SchemaReconciler.metadataTables.sorted().map { "'\($0)'" }.joined(separator: ", ")
        #expect(try DeferredMigrationTests.int(store, "SELECT count(*) FROM sqlite_master WHERE name LIKE '\\_strata\\_%' ESCAPE '\\' AND tbl_name NOT IN (\(metadata))") == 0)
        try store.close()
    }

    @Test("an index without NULL keys is retired at once: it becomes a table deleted in key order")
    func indexDropRetiredAtOnce() async throws {
        let directory = TemporaryDirectory("unindex")
        let url = directory.file("store.sqlite")
        try Self.seed(2000, at: url)
        let store = try PersistentStore.open(at: url, model: Self.reindexed, options: StoreOptions(migration: .deferred))
        let report = try await store.finishDeferredMigrationTask(FinishOptions(batchBudget: .milliseconds(1)))
        #expect(report.tasksFinished == 1 && report.batches == 1)
        #expect(try Self.master(store, "Item_byFlag") == nil)
        #expect(try Self.master(store, "_strata_retired_Item_byFlag") == "_strata_retired_Item_byFlag")
        #expect(try store.pendingDeferredWork().map(\.kind) == [.createIndex, .dropTable])
        // The retired index is a table with the index's entries, and the store checks out.
        #expect(try DeferredMigrationTests.int(store, "SELECT count(*) FROM _strata_retired_Item_byFlag") == 2000)
        #expect(try Self.integrity(store) == "ok")
        try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1)))
        #expect(try Self.integrity(store) == "ok")
        #expect(try DeferredMigrationTests.snapshot(store) == DeferredMigrationTests.freshSchema(Self.reindexed))
        try store.close()
    }

    @Test("an index with NULL keys moves onto a side table whose rows with NULL keys go first, then is retired")
    func indexDropThroughSideTable() async throws {
        let directory = TemporaryDirectory("unindex")
        let url = directory.file("store.sqlite")
        try Self.seed(2000, at: url, nullFlags: true)
        let store = try PersistentStore.open(at: url, model: Self.reindexed, options: StoreOptions(migration: .deferred))
        let report = try await store.finishDeferredMigrationTask(FinishOptions(batchBudget: .milliseconds(1)))
        #expect(report.tasksFinished == 1)
        #expect(try Self.master(store, "Item_byFlag") == nil)
        let pending = try store.pendingDeferredWork()
        #expect(pending.map(\.kind) == [.createIndex, .dropTable])
        #expect(pending.last?.table == "_strata_unindex_Item_byFlag")
        #expect(try Self.master(store, "_strata_old_Item_byFlag") == "_strata_unindex_Item_byFlag")
        #expect(try Self.integrity(store) == "ok")
        // Build the new index, then drop the side table: its rows with a NULL flag first, then
        // its index is retired (a drop task of its own), then its rows.
        try await store.finishDeferredMigrationTask(FinishOptions(batchBudget: .milliseconds(1)))
        try await store.finishDeferredMigrationTask(FinishOptions(batchBudget: .milliseconds(1)))
        #expect(try store.pendingDeferredWork().map(\.table).contains("_strata_retired__strata_old_Item_byFlag"))
        #expect(try Self.integrity(store) == "ok")
        try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1)))
        #expect(try Self.integrity(store) == "ok")
        #expect(try DeferredMigrationTests.snapshot(store) == DeferredMigrationTests.freshSchema(Self.reindexed))
        #expect(try DeferredMigrationTests.int(store, "SELECT count(*) FROM Item WHERE flag IS NULL") == 2000 / 11)
        try store.close()
    }

    @Test("a rewrite keeps the live table's indexes until the swap, builds the shadow's new ones and carries over those it holds already")
    func rewriteKeepsIndexesOnShadow() async throws {
        let directory = TemporaryDirectory("rewrite")
        let url = directory.file("store.sqlite")
        try DeferredMigrationTests.seedItems(3000, at: url)
        let narrowWithRankIndexTwice = DeferredMigrationTests.narrow
        let store = try PersistentStore.open(at: url, model: narrowWithRankIndexTwice, options: StoreOptions(migration: .deferred))
        let batches = Counter()
        let first = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1), shouldContinue: { batches.increment() < 6 }))
        // Mid-copy: the live table still has its unique index; the shadow has none yet (its
        // indexes are built in key order once it holds every row).
        let liveUnique = try #require(try Self.uniqueIndex(store, on: "Item"))
        #expect(try Self.indexCount(store, on: "_strata_rewrite_Item") == 0)
        #expect(try Self.master(store, "Item_byRank") == nil)
        let liveRoot = try Self.rootPage(store, liveUnique.name)
        // The rewrite: byRank is built on the shadow; the live unique index holds the shadow's
        // entries already (same rowids, same names) and is carried over at the swap — the same
        // b-tree, neither rebuilt nor retired — so the old table goes without indexes.
        let rewrite = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1), maxTasks: 1))
        #expect(rewrite.tasksFinished == 1)
        #expect(try store.pendingDeferredWork().map(\.table) == ["_strata_old_Item", nil])
        #expect(try Self.master(store, liveUnique.name) == "Item")
        #expect(try Self.rootPage(store, liveUnique.name) == liveRoot)
        #expect(try Self.master(store, "_strata_old_\(liveUnique.name)") == nil)
        #expect(try Self.indexCount(store, on: "_strata_old_Item") == 0)
        #expect(try Self.master(store, "Item_byRank") == "Item")
        // Rows written: the copy (3,000) and byRank's entries (3,000); none for the carried index.
        #expect(first.rowsProcessed + rewrite.rowsProcessed == 6000)
        #expect(!rewrite.longestLockHolds.isEmpty)
        try await store.finishDeferredMigrationTask(FinishOptions(batchBudget: .milliseconds(1)))
        #expect(try store.pendingDeferredWork().map(\.table) == [nil])
        #expect(try Self.integrity(store) == "ok")
        try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1)))
        #expect(try Self.integrity(store) == "ok")
        #expect(try DeferredMigrationTests.snapshot(store) == DeferredMigrationTests.freshSchema(DeferredMigrationTests.narrow))
        #expect(try store.currentMetadata().history.last?.kind == "deferred-finished")
        try store.close()
    }

    @Test("a migration during a rewrite renames the half-copied shadow aside (O(1)) and the new ledger drops it in batches")
    func abandonedRewriteRenamedAside() async throws {
        let directory = TemporaryDirectory("abandon")
        let url = directory.file("store.sqlite")
        try DeferredMigrationTests.seedItems(2000, at: url)
        let store = try PersistentStore.open(at: url, model: DeferredMigrationTests.narrow, options: StoreOptions(migration: .deferred))
        let batches = Counter()
        _ = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1), shouldContinue: { batches.increment() < 4 }))
        try #require(try Self.master(store, "_strata_copied_Item") != nil, "the copy's cursor exists mid-copy")
        try store.close()
        let v3 = ObjectModel(version: "wide 3", entities: [
            Entity("Item", attributes: [Attribute("name", .string)], uniquenessConstraints: [UniquenessConstraint(["name"])]),
        ])
        let migrated = try PersistentStore.open(at: url, model: v3, options: StoreOptions(migration: .deferred))
        let pending = try migrated.pendingDeferredWork()
        #expect(pending.contains { $0.kind == .dropTable && $0.table == "_strata_dropped_rewrite_Item" })
        #expect(try Self.master(migrated, "_strata_rewrite_Item") == nil)
        #expect(try Self.master(migrated, "_strata_copied_Item") == nil, "the abandoned rewrite's cursor is dropped at once")
        #expect(!pending.contains { $0.table == "_strata_copied_Item" })
        try await migrated.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1)))
        #expect(try Self.integrity(migrated) == "ok")
        #expect(try DeferredMigrationTests.snapshot(migrated) == DeferredMigrationTests.freshSchema(v3))
        #expect(try DeferredMigrationTests.int(migrated, "SELECT count(*) FROM Item") == 2000)
        try migrated.close()
    }

    @Test("a migration during an index build drops its triggers; the new ledger drops its tables and sort buffer")
    func abandonedIndexBuild() async throws {
        let directory = TemporaryDirectory("abandon")
        let url = directory.file("store.sqlite")
        try Self.seed(3000, at: url)
        let store = try PersistentStore.open(at: url, model: Self.byScore, options: StoreOptions(migration: .deferred))
        let allowed = Counter()
        _ = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1), shouldContinue: { allowed.increment() < 5 }))
        #expect(try Self.master(store, "_strata_sorted_Item_byScore") == "_strata_sorted_Item_byScore")
        let buffer = url.path + "-_strata_sorted_Item_byScore.sort"
        #expect(FileManager.default.fileExists(atPath: buffer))
        try store.close()
        // The buffer outlives a close (the build resumes from it), until no build names it.
        #expect(FileManager.default.fileExists(atPath: buffer))
        // v3 drops the flag index and keeps byScore: the build restarts, its leftovers are dropped.
        let v3 = ObjectModel(version: "items 3", entities: [
            Entity("Item", attributes: [Attribute("name", .string), Attribute("rank", .int64), Attribute("score", .double), Attribute("flag", .bool)],
                   indexes: [Index("byScore", elements: [.init("score", ascending: false)])]),
        ])
        let migrated = try PersistentStore.open(at: url, model: v3, options: StoreOptions(migration: .deferred))
        let tables = try migrated.pendingDeferredWork().compactMap(\.table)
        for leftover in ["_strata_sorted_Item_byScore", "_strata_changes_Item_byScore", "_strata_nulls_Item_byScore"] {
            #expect(tables.contains(leftover), "\(leftover) in \(tables)")
        }
        #expect(try DeferredMigrationTests.int(migrated, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'") == 0)
        try await migrated.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1)))
        #expect(try Self.integrity(migrated) == "ok")
        #expect(try DeferredMigrationTests.snapshot(migrated) == DeferredMigrationTests.freshSchema(v3))
        #expect(!FileManager.default.fileExists(atPath: buffer))
        try migrated.close()
    }

    @Test("interruptRequested aborts the batch in flight: rolled back, progress kept from before it, nothing lost")
    func interruptionAbortsTheBatchInFlight() async throws {
        let directory = TemporaryDirectory("interrupt")
        let url = directory.file("store.sqlite")
        try DeferredMigrationTests.seedItems(30_000, at: url)
        let store = try PersistentStore.open(at: url, model: DeferredMigrationTests.narrow, options: StoreOptions(migration: .deferred))
        // A generous budget: batches grow until one runs long enough to be asked, and stopped.
        let asked = Counter()
        let report = try await store.finishDeferredMigration(FinishOptions(batchBudget: .seconds(5), interruptRequested: {
            asked.increment()
            return true
        }))
        #expect(asked.value > 0)
        #expect(report.stoppedEarly)
        let task = try #require(try store.pendingDeferredWork().first)
        #expect(task.kind == .rewriteTable && task.rowsDone < 30_000)
        #expect(try DeferredMigrationTests.int(store, "SELECT count(*) FROM Item") == 30_000)
        try await store.finishDeferredMigration()
        #expect(try Self.integrity(store) == "ok")
        #expect(try DeferredMigrationTests.snapshot(store) == DeferredMigrationTests.freshSchema(DeferredMigrationTests.narrow))
        #expect(try DeferredMigrationTests.int(store, "SELECT count(*) FROM Item") == 30_000)
        try store.close()
    }

    @Test("a run reports where its time went: holding the writer, waiting for it behind another call, the cost delay")
    func timeSpentIsReported() async throws {
        let directory = TemporaryDirectory("time-spent")
        let (store, messages) = try Self.narrowedWithLog(5_000, in: directory)

        // The accounting of the finisher's writer: another call holds the writer 300 ms; the
        // finisher's step on it waits that long, and only its own work counts as held.
        let finisher = DeferredFinisher(store: store, options: FinishOptions(), progress: nil)
        let holding = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? store.database.writeWithoutTransaction { _ in
                holding.signal()
                Thread.sleep(forTimeInterval: 0.3)
            }
        }
        #expect(holding.wait(timeout: .now() + 30) == .success)
        try finisher.writer("probe") { db in _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM Item") }
        #expect(finisher.pacing.totalWriterWait >= .milliseconds(200), "waited behind the other call: \(finisher.pacing.totalWriterWait)")
        #expect(finisher.pacing.totalHeld < finisher.pacing.totalWriterWait, "held: \(finisher.pacing.totalHeld)")

        // A whole run: its parts lie within its time, and one line says where it went.
        let report = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(10), pauseBetweenBatches: .milliseconds(2)))
        #expect(!report.stoppedEarly && report.batches > 2)
        #expect(report.lockHeldSeconds > 0)
        #expect(report.pauseSeconds > 0)
        #expect(report.writerWaitSeconds >= 0)
        #expect(report.lockHeldSeconds + report.writerWaitSeconds + report.pauseSeconds <= report.seconds + 0.001)
        #expect(messages.count(containing: "deferred work run: where its time went") == 1)
        #expect(try DeferredMigrationTests.snapshot(store) == DeferredMigrationTests.freshSchema(DeferredMigrationTests.narrow))
        try store.close()
    }

    @Test("a batch that outruns its time limit is rolled back and the next is smaller; the work still finishes")
    func overrunningBatchesShrink() async throws {
        let directory = TemporaryDirectory("overrun")
        let (store, messages) = try Self.narrowedWithLog(20_000, in: directory)
        // A 100 µs budget: batches of the starting size outrun its 150 µs limit.
        let report = try await store.finishDeferredMigration(FinishOptions(batchBudget: .microseconds(100)))
        #expect(report.tasksRemaining == 0)
        #expect(messages.count(containing: "overran its time limit") > 0)
        #expect(try Self.integrity(store) == "ok")
        #expect(try DeferredMigrationTests.snapshot(store) == DeferredMigrationTests.freshSchema(DeferredMigrationTests.narrow))
        #expect(try DeferredMigrationTests.int(store, "SELECT count(*) FROM Item") == 20_000)
        try store.close()
    }

    @Test("the writer's automatic checkpoint is restored after finishing")
    func autocheckpointRestored() async throws {
        let directory = TemporaryDirectory("wal")
        let url = directory.file("store.sqlite")
        try DeferredMigrationTests.seedItems(2000, at: url)
        let store = try PersistentStore.open(at: url, model: DeferredMigrationTests.narrow, options: StoreOptions(migration: .deferred))
        try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(2)))
        // It comes back on the checkpoint queue, after the run's last checkpoint (WALHook).
        store.checkpointQueue.sync {}
        let setting = try Self.writerSetting(store, "wal_autocheckpoint")
        #expect(setting == 1000)
        try store.close()
    }

    // MARK: - Index definitions

    @Test("index definitions are renamed and moved token by token", arguments: [
        (#"CREATE INDEX "a" ON "t" ("x")"#, #"CREATE INDEX "n" ON "u" ("x")"#),
        (#"create unique index if not exists a on t(x, y desc)"#, #"CREATE UNIQUE INDEX "n" ON "u" (x, y desc)"#),
        (#"CREATE INDEX [odd name] ON `t` ("x") WHERE x > 0"#, #"CREATE INDEX "n" ON "u" ("x") WHERE x > 0"#),
        (#"CREATE INDEX "we""ird" ON t (lower(x))"#, #"CREATE INDEX "n" ON "u" (lower(x))"#),
    ])
    func renamedIndexSQL(_ input: String, _ expected: String) {
        #expect(IndexRelocation.renamedIndexSQL(input, name: "n", table: "u") == expected)
    }

    @Test("statements that are not a plain CREATE INDEX are not rewritten", arguments: [
        "CREATE TABLE t (x)", "CREATE INDEX a", "CREATE INDEX a ON", "CREATE INDEXa ON t (x)",
    ])
    func unreadableIndexSQL(_ input: String) {
        #expect(IndexRelocation.renamedIndexSQL(input, name: "n", table: "u") == nil)
    }
}
