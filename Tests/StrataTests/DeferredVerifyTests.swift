import Foundation
import GRDB
import Synchronization
import Testing
@testable import Strata

/// Verify before swap: a shadow changed behind the finisher's back (a row altered, removed or
/// added outside the capture triggers) is caught before the swap; the swap is refused with a
/// `copyMismatch` error naming the task, the live table keeps every row, and the next run
/// copies afresh and finishes.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct DeferredVerifyTests {
    static let source = MigrationTestModels.base
    static let destination = MigrationTestModels.model("Aircraft 2", [
        MigrationTestModels.aircraft(attributes: [Attribute("tailNumber", .string, isOptional: false), Attribute("seats", .int16)]),
        MigrationTestModels.owner(),
    ])
    static let rows = 3000

    enum Corruption: String, CaseIterable, CustomTestStringConvertible {
        case changedValue, deletedRow, extraRow, changedLateRow
        var testDescription: String { rawValue }
    }

    static let cursor = "_strata_copied_Aircraft"

    /// Runs the rewrite until its copy is complete (the copy's cursor past every key) and
    /// stops before the shadow's index builds and its check begin.
    static func copyWithoutChecking(_ store: PersistentStore) async throws {
        _ = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(50), shouldContinue: {
            (try? store.syncRead { db in try Int64.fetchOne(db, sql: "SELECT last FROM \(cursor)") }) != Int64.max
        }))
    }

    /// `rows` aircraft with keys 1, 2, 3… or, `keyStep` > 1, 1, 1 + keyStep, … (sparse keys).
    static func seeded(_ url: URL, keyStep: Int = 1) throws {
        let store = try PersistentStore.open(at: url, model: source)
        try store.syncWrite { db in
            try db.execute(sql: #"INSERT INTO "Owner" ("_pk", "name") VALUES (1, 'Ann')"#)
            for n in 1...rows {
                let pk = 1 + (n - 1) * keyStep
                try db.execute(sql: #"INSERT INTO "Aircraft" ("_pk", "tailNumber", "seats", "photo", "owner_id") VALUES (?, ?, ?, X'00', 1)"#,
                               arguments: [pk, "T-\(pk)", pk % 9])
            }
        }
        try store.close()
    }

    /// Dense keys are verified in key spans (the range's rows read once); sparse ones fall back
    /// to ranges of rows. Both check every row: a value changed in the shadow is caught in
    /// either, and the untouched shadow passes.
    @Test("verification by key spans (dense keys) and by rows (sparse keys) checks every row", arguments: [1, 1_000_003], [false, true])
    func spansAndRowsBothCheckEveryRow(keyStep: Int, corrupt: Bool) async throws {
        let directory = TemporaryDirectory("verify-spans")
        let url = directory.file("store.sqlite")
        try Self.seeded(url, keyStep: keyStep)
        let store = try PersistentStore.open(at: url, model: Self.destination, options: StoreOptions(migration: .deferred))
        defer { try? store.close() }
        let before = try Self.liveRows(store)
        let shadow = "_strata_rewrite_Aircraft"
        try await Self.copyWithoutChecking(store)
        try #require(try store.syncRead { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(shadow)") } == Self.rows)
        // The key of the row 2,000th in order: past the first range of either kind.
        let late = 1 + 1999 * keyStep
        if corrupt {
            try store.syncWrite { db in try db.execute(sql: "UPDATE \(shadow) SET \"seats\" = 99 WHERE \"_pk\" = ?", arguments: [late]) }
        }
        // Small ranges, so that the check takes many.
        let ranges = FinishOptions(batchBudget: .milliseconds(1))
        if corrupt {
            let error = try await #require(throws: StoreError.self) { try await store.finishDeferredMigration(ranges) }
            #expect(error.code == .copyMismatch && error.reason.contains("the row with _pk \(late) "), "\(error)")
            #expect(try Self.liveRows(store) == before)
        } else {
            let report = try await store.finishDeferredMigration(ranges)
            #expect(report.tasksRemaining == 0)
            #expect(try Self.liveRows(store) == before)
        }
    }

    /// The check beside the index builds (``ShadowVerifier``) keeps its progress with the
    /// shadow, in the copy's cursor table; it stops at a range that does not match, and the
    /// check before the swap begins after its last key: a row behind it is not looked at again,
    /// the first difference after it is named, and the swap is refused.
    @Test func checkBesideTheBuildsKeepsItsProgressAndStopsAtAMismatch() async throws {
        let directory = TemporaryDirectory("verify-beside")
        let url = directory.file("store.sqlite")
        try Self.seeded(url)
        var store = try PersistentStore.open(at: url, model: Self.destination, options: StoreOptions(migration: .deferred))
        defer { try? store.close() }
        let before = try Self.liveRows(store)
        let shadow = "_strata_rewrite_Aircraft", cursor = Self.cursor
        try await Self.copyWithoutChecking(store)
        let rewrite = try #require(try store.syncRead { db in
            try DeferredLedger.entries(in: db).compactMap { entry -> TableRewrite? in
                if case .rewriteTable(let rewrite) = entry.payload.operation.kind { return rewrite } else { return nil }
            }.first
        })
        #expect(try store.syncRead { db in try Int64.fetchOne(db, sql: "SELECT verified FROM \(cursor)") } == nil)
        func verifier(_ store: PersistentStore, goOn: Bool) -> ShadowVerifier {
            ShadowVerifier(store: store, rewrite: rewrite, keyColumn: "_pk", after: try? store.syncRead { db in try ShadowVerifier.verifiedKey(rewrite, in: db) },
                           synchronous: 2, pacing: .init(current: { FinishPacing(batchBudget: .milliseconds(5), pauseBetweenBatches: .zero) },
                                                         shouldContinue: { goOn }))
        }
        // Stopped at once, it still checks its first range (keys 1…1,024: a span of its first
        // size) and records it.
        let one = verifier(store, goOn: false).stop()
        #expect(one.ranges == 1 && one.rows == 1024 && one.verifiedKey == 1024 && !one.mismatch, "\(one)")
        #expect(try store.syncRead { db in try Int64.fetchOne(db, sql: "SELECT verified FROM \(cursor)") } == 1024)
        // Kept through a close: it is in the store.
        try store.close()
        store = try PersistentStore.open(at: url, model: Self.destination, options: StoreOptions(migration: .deferred))
        #expect(try store.syncRead { db in try ShadowVerifier.verifiedKey(rewrite, in: db) } == 1024)
        // A row after it changed behind the finisher's back: the verifier stops before its
        // range, with its progress before it recorded.
        try store.syncWrite { db in try db.execute(sql: "UPDATE \(shadow) SET \"seats\" = 99 WHERE \"_pk\" = 2500") }
        let outcome = verifier(store, goOn: true).wait()
        #expect(outcome.mismatch, "\(outcome)")
        let checked = try #require(outcome.verifiedKey)
        #expect(checked >= 1024 && checked < 2500, "\(outcome)")
        #expect(try store.syncRead { db in try Int64.fetchOne(db, sql: "SELECT verified FROM \(cursor)") } == checked)
        // A row behind the checked keys changed too: not looked at again. The check before the
        // swap names the one after them and refuses.
        try store.syncWrite { db in try db.execute(sql: "UPDATE \(shadow) SET \"seats\" = 99 WHERE \"_pk\" = 500") }
        let error = try await #require(throws: StoreError.self) { try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1))) }
        #expect(error.code == .copyMismatch && error.reason.contains("the row with _pk 2500 "), "\(error)")
        #expect(try Self.liveRows(store) == before)
        // The refusal dropped the cursor table with what it had checked: the fresh copy is
        // checked from its first key, and the next run swaps it in.
        #expect(try store.syncRead { db in try db.tableExists(cursor) } == false)
        let report = try await store.finishDeferredMigration()
        #expect(report.tasksRemaining == 0)
        #expect(try Self.liveRows(store) == before)
    }

    /// The span and row ranges directly: a span holds at most `size` rows and says how many;
    /// on sparse keys it holds fewer, which turns spans off.
    @Test("a key span holds at most its size in rows and counts them")
    func spanCountsItsRows() throws {
        let queue = try DatabaseQueue()
        let rewrite = TableRewrite(table: "t", shadowTable: "s", createShadowSQL: "", finalCreateSQL: "", columns: ["_pk", "v"],
                                   droppedColumns: [], retypedColumns: [], indexSQL: [], reasons: [])
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (_pk INTEGER PRIMARY KEY, v)")
            try db.execute(sql: "CREATE TABLE s (_pk INTEGER PRIMARY KEY, v)")
            // Keys 1…100 dense, then 1,000, 2,000 … 10,000.
            try db.execute(sql: "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100) INSERT INTO t SELECT i, i FROM n")
            try db.execute(sql: "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10) INSERT INTO t SELECT i * 1000, i FROM n")
            try db.execute(sql: "INSERT INTO s SELECT * FROM t")
            let dense = try DeferredFinisher.compare(rewrite, keyColumn: "_pk", conflictKey: ["_pk"], after: 10, size: 50, bySpan: true, in: db)
            #expect(dense.upper == 60 && dense.rows == 50 && dense.bySpan && dense.problem == nil)
            let sparse = try DeferredFinisher.compare(rewrite, keyColumn: "_pk", conflictKey: ["_pk"], after: 100, size: 50, bySpan: true, in: db)
            #expect(sparse.upper == 1049 && sparse.rows == 1 && sparse.problem == nil)
            let byRows = try DeferredFinisher.compare(rewrite, keyColumn: "_pk", conflictKey: ["_pk"], after: 100, size: 5, in: db)
            #expect(byRows.upper == 5000 && !byRows.bySpan && byRows.problem == nil)
            let last = try DeferredFinisher.compare(rewrite, keyColumn: "_pk", conflictKey: ["_pk"], after: 5000, size: 50_000, bySpan: true, in: db)
            #expect(last.upper == nil && last.rows == 5 && last.problem == nil)
            try db.execute(sql: "UPDATE s SET v = -1 WHERE _pk = 3000")
            let changed = try DeferredFinisher.compare(rewrite, keyColumn: "_pk", conflictKey: ["_pk"], after: 2000, size: 5000, bySpan: true, in: db)
            #expect(changed.problem?.contains("_pk 3000") == true, "\(String(describing: changed.problem))")
        }
    }

    /// The copy into the shadow takes key spans too while the keys are dense (no `OFFSET` step
    /// over each batch's rows), and ranges of rows once they prove sparse. Either way every row
    /// arrives, with writes made between batches (an update, an insert past the copy, a
    /// delete of a copied row): the verification before the swap would refuse a missing one.
    @Test("the copy takes key spans while keys are dense, ranges of rows when sparse; every row arrives", arguments: [1, 1_000_003])
    func copyBySpansAndByRows(keyStep: Int) async throws {
        let directory = TemporaryDirectory("copy-spans")
        let url = directory.file("store.sqlite")
        try Self.seeded(url, keyStep: keyStep)
        let store = try PersistentStore.open(at: url, model: Self.destination, options: StoreOptions(migration: .deferred))
        defer { try? store.close() }
        let offsets = Mutex(0), copies = Mutex(0)
        try await store.database.writeWithoutTransaction { db in
            db.trace(options: .statement) { event in
                guard case .statement(let statement) = event else { return }
                if statement.sql.contains(#"FROM "Aircraft" WHERE "_pk" > ? ORDER BY "_pk" LIMIT 1 OFFSET"#) { offsets.withLock { $0 += 1 } }
                if statement.sql.hasPrefix(#"INSERT OR IGNORE INTO "_strata_rewrite_Aircraft""#) { copies.withLock { $0 += 1 } }
            }
        }
        let last = 1 + (Self.rows - 1) * keyStep
        let asked = Mutex(0)
        // Between batches, as a client would: the first row changed, a row added past the last
        // key, the 1,000th row (copied by then) deleted.
        let options = FinishOptions(batchBudget: .milliseconds(1), shouldContinue: {
            let n = asked.withLock { $0 += 1; return $0 }
            try? store.syncWrite { db in
                switch n {
                case 3: try db.execute(sql: #"UPDATE "Aircraft" SET "seats" = 77 WHERE "_pk" = 1"#)
                case 4: try db.execute(sql: #"INSERT INTO "Aircraft" ("_pk", "tailNumber", "seats", "owner_id") VALUES (?, 'late', 5, 1)"#, arguments: [last + 1])
                case 12: try db.execute(sql: #"DELETE FROM "Aircraft" WHERE "_pk" = ?"#, arguments: [1 + 999 * keyStep])
                default: break
                }
            }
            return true
        })
        let report = try await store.finishDeferredMigration(options)
        #expect(report.tasksRemaining == 0)
        let rows = try Self.liveRows(store)
        #expect(rows.count == Self.rows)
        #expect(rows.first == "1|T-1|77")
        #expect(rows.last == "\(last + 1)|late|5")
        #expect(!rows.contains { $0.hasPrefix("\(1 + 999 * keyStep)|") })
        #expect(copies.withLock { $0 } > 3, "the copy took several batches")
        if keyStep == 1 {
            #expect(offsets.withLock { $0 } == 0, "dense keys: every batch a key span")
        } else {
            #expect(offsets.withLock { $0 } > 0, "sparse keys: ranges of rows")
        }
    }

    static func liveRows(_ store: PersistentStore) throws -> [String] {
        try store.syncRead { db in
            try String.fetchAll(db, sql: #"SELECT "_pk" || '|' || "tailNumber" || '|' || ifnull("seats", 'NULL') FROM "Aircraft" ORDER BY "_pk""#)
        }
    }

    @Test("a corrupted shadow is caught before the swap, nothing is lost", arguments: Corruption.allCases)
    func corruptedShadowIsRefused(_ corruption: Corruption) async throws {
        let directory = TemporaryDirectory("verify")
        let url = directory.file("store.sqlite")
        try Self.seeded(url)
        let store = try PersistentStore.open(at: url, model: Self.destination, options: StoreOptions(migration: .deferred))
        defer { try? store.close() }
        let before = try Self.liveRows(store)
        #expect(before.count == Self.rows)

        // Stop part-way through the copy (a pause of the scheduler), then change the shadow
        // behind the finisher's back.
        let calls = SharedCount()
        let stopEarly = FinishOptions(batchBudget: .milliseconds(50), shouldContinue: { calls.next() < 4 })
        _ = try await store.finishDeferredMigration(stopEarly)
        let shadow = "_strata_rewrite_Aircraft"
        let copied = try store.syncRead { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(shadow)") ?? 0 }
        try #require(copied > 0, "the copy did not start")
        try store.syncWrite { db in
            switch corruption {
            case .changedValue:
                try db.execute(sql: "UPDATE \(shadow) SET \"seats\" = 99 WHERE \"_pk\" = (SELECT min(\"_pk\") FROM \(shadow))")
            case .deletedRow:
                try db.execute(sql: "DELETE FROM \(shadow) WHERE \"_pk\" = (SELECT max(\"_pk\") FROM \(shadow))")
            case .extraRow:
                try db.execute(sql: "INSERT INTO \(shadow) (\"_pk\", \"tailNumber\") VALUES (\(Self.rows + 500), 'GHOST')")
            case .changedLateRow:
                // A row the copy has not reached yet: the copy's INSERT OR IGNORE keeps the bad one.
                try db.execute(sql: "INSERT INTO \(shadow) (\"_pk\", \"tailNumber\", \"seats\", \"owner_id\") VALUES (\(Self.rows), 'WRONG', 1, 1)")
            }
        }

        // Finishing now refuses the swap.
        let error = try await #require(throws: StoreError.self) { try await store.finishDeferredMigration() }
        #expect(error.code == .copyMismatch, "\(error)")
        #expect(error.reason.contains("rewrite of table Aircraft"), "\(error)")
        #expect(error.reason.contains("swap was refused"), "\(error)")
        // The range that does not match is looked at row by row: the error names its first
        // difference (a changed or missing row by key, else the two counts).
        switch corruption {
        case .changedValue, .changedLateRow, .deletedRow:
            #expect(error.reason.contains("the row with _pk ") && error.reason.contains("is missing from the shadow or differs there"), "\(error)")
        case .extraRow:
            #expect(error.reason.contains("rows in the table") && error.reason.contains("in the shadow"), "\(error)")
        }
        #expect(error.path == url.path)
        // Nothing lost: the table is the old one, every row as it was, the task still pending.
        #expect(try Self.liveRows(store) == before)
        #expect(try store.pendingDeferredWork().contains { $0.kind == .rewriteTable })
        let photo = try store.syncRead { db in try db.columns(in: "Aircraft").map(\.name).contains("photo") }
        #expect(photo, "the old table (with its dropped column) is still the live one")

        // The next run copies afresh and swaps.
        let report = try await store.finishDeferredMigration()
        #expect(report.tasksRemaining == 0)
        #expect(try Self.liveRows(store) == before)
        let integrity = try store.syncRead { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") }
        #expect(integrity == "ok")
    }

    @Test func anUntouchedShadowPassesAndWritesDuringTheCheckAreKept() async throws {
        let directory = TemporaryDirectory("verify")
        let url = directory.file("store.sqlite")
        try Self.seeded(url)
        let store = try PersistentStore.open(at: url, model: Self.destination, options: StoreOptions(migration: .deferred))
        defer { try? store.close() }
        // A client writes between every batch (inserts, updates, deletes through the triggers).
        let writes = SharedCount()
        let options = FinishOptions(batchBudget: .milliseconds(2), shouldContinue: {
            let n = writes.next()
            try? store.syncWrite { db in
                try db.execute(sql: #"INSERT INTO "Aircraft" ("tailNumber", "seats") VALUES (?, 1)"#, arguments: ["NEW-\(n)"])
                try db.execute(sql: #"UPDATE "Aircraft" SET "seats" = 42 WHERE "_pk" = ?"#, arguments: [n * 7 % Self.rows + 1])
                try db.execute(sql: #"DELETE FROM "Aircraft" WHERE "_pk" = ?"#, arguments: [n * 13 % Self.rows + 1])
            }
            return true
        })
        let report = try await store.finishDeferredMigration(options)
        #expect(report.tasksRemaining == 0)
        let (news, photo) = try store.syncRead { db in
            (try Int.fetchOne(db, sql: #"SELECT count(*) FROM "Aircraft" WHERE "tailNumber" LIKE 'NEW-%'"#) ?? 0,
             try db.columns(in: "Aircraft").map(\.name).contains("photo"))
        }
        #expect(news == writes.current)
        #expect(!photo)
    }
}

/// A count shared with the finisher's `shouldContinue` closure.
final class SharedCount: Sendable {
    private let value = Mutex(0)
    /// Adds one and returns the new count.
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
    var current: Int { value.withLock { $0 } }
}
