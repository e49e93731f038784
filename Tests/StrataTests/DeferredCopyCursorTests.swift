import Foundation
import GRDB
import Synchronization
import Testing
@testable import Strata

/// The online copy's cursor: the capture triggers mirror a written row into the shadow only
/// once the copy has passed its key (`_strata_copied_<table>`, moved by each copy batch in its
/// own transaction). A row after the cursor is copied later, with its values of that moment,
/// so client writes ahead of the copy no longer scatter rows over the shadow's unwritten key
/// range for the copy's appends to split pages around.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct DeferredCopyCursorTests {
    typealias Verify = DeferredVerifyTests
    static let shadow = "_strata_rewrite_Aircraft"
    static let cursor = "_strata_copied_Aircraft"

    static func shadowRow(_ store: PersistentStore, _ pk: Int) throws -> String? {
        try store.syncRead { db in
            try String.fetchOne(db, sql: #"SELECT "tailNumber" || '|' || ifnull("seats", 'NULL') FROM "\#(shadow)" WHERE "_pk" = ?"#, arguments: [pk])
        }
    }

    /// A seeded store opened at the destination with deferral on, its rewrite run for
    /// `batches - 1` copy batches (a few of the 3,000 rows copied) and stopped there.
    static func partlyCopied(_ name: String, batches: Int) async throws -> (TemporaryDirectory, PersistentStore) {
        let directory = TemporaryDirectory(name)
        let url = directory.file("store.sqlite")
        try Verify.seeded(url)
        let store = try PersistentStore.open(at: url, model: Verify.destination, options: StoreOptions(migration: .deferred))
        let asked = Mutex(0)
        _ = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1), shouldContinue: {
            asked.withLock { $0 += 1; return $0 } < batches
        }))
        return (directory, store)
    }

    @Test("writes ahead of the copy stay out of the shadow, writes behind it are mirrored, and every row arrives")
    func triggersMirrorOnlyWhatTheCopyPassed() async throws {
        let (directory, store) = try await Self.partlyCopied("copy-cursor", batches: 4)
        defer { try? store.close(); _ = directory }
        let last = try #require(try store.syncRead { db in try Int64.fetchOne(db, sql: "SELECT last FROM \(Self.cursor)") })
        let copied = try store.syncRead { db in try Int64.fetchOne(db, sql: "SELECT max(\"_pk\") FROM \(Self.shadow)") }
        #expect(last > 0 && last < Int64(Verify.rows - 10), "the copy stopped part-way: cursor at \(last)")
        #expect(copied == last, "the cursor is the last key copied")
        #expect(try store.syncRead { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(Self.shadow)") } == Int(last))

        let behind = Int(last) - 5, ahead = Int(last) + 10, moved = Int(last) - 3, movedTo = Verify.rows + 50
        try store.syncWrite { db in
            try db.execute(sql: #"UPDATE "Aircraft" SET "seats" = 71 WHERE "_pk" = ?"#, arguments: [behind])
            try db.execute(sql: #"UPDATE "Aircraft" SET "seats" = 72 WHERE "_pk" = ?"#, arguments: [ahead])
            try db.execute(sql: #"INSERT INTO "Aircraft" ("_pk", "tailNumber", "seats", "owner_id") VALUES (?, 'late', 5, 1)"#, arguments: [Verify.rows + 1])
            // A key moved from behind the cursor to past the end: its mirror goes, none comes.
            try db.execute(sql: #"UPDATE "Aircraft" SET "_pk" = ? WHERE "_pk" = ?"#, arguments: [movedTo, moved])
            // A row behind the cursor deleted: its mirror goes.
            try db.execute(sql: #"DELETE FROM "Aircraft" WHERE "_pk" = 1"#)
        }
        #expect(try Self.shadowRow(store, behind) == "T-\(behind)|71", "a write behind the cursor is mirrored")
        #expect(try Self.shadowRow(store, ahead) == nil, "a write ahead of the cursor is left to the copy")
        #expect(try Self.shadowRow(store, Verify.rows + 1) == nil, "an insert past the copy is left to it")
        #expect(try Self.shadowRow(store, moved) == nil && Self.shadowRow(store, movedTo) == nil)
        #expect(try Self.shadowRow(store, 1) == nil)
        #expect(try store.syncRead { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(Self.shadow) WHERE \"_pk\" > ?", arguments: [last]) } == 0,
                "nothing ahead of the cursor in the shadow")

        // The rest of the copy, then a write once it is done: mirrored whatever its key.
        _ = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(50), shouldContinue: {
            (try? store.syncRead { db in try Int64.fetchOne(db, sql: "SELECT last FROM \(Self.cursor)") }) != Int64.max
        }))
        #expect(try store.syncRead { db in try Int64.fetchOne(db, sql: "SELECT last FROM \(Self.cursor)") } == Int64.max,
                "a finished copy opens the gate to every key")
        try store.syncWrite { db in
            try db.execute(sql: #"INSERT INTO "Aircraft" ("_pk", "tailNumber", "seats", "owner_id") VALUES (?, 'later', 6, 1)"#, arguments: [Verify.rows + 100])
        }
        #expect(try Self.shadowRow(store, Verify.rows + 100) == "later|6")
        #expect(try Self.shadowRow(store, ahead) == "T-\(ahead)|72", "the copy took the row with its value of the moment")

        let report = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(50)))
        #expect(report.tasksRemaining == 0)
        let rows = try Verify.liveRows(store)
        #expect(rows.count == Verify.rows + 1)  // one deleted, two inserted
        #expect(rows.contains("\(behind)|T-\(behind)|71") && rows.contains("\(ahead)|T-\(ahead)|72"))
        #expect(rows.contains("\(movedTo)|T-\(moved)|\(moved % 9)") && !rows.contains { $0.hasPrefix("\(moved)|") })
        #expect(rows.first == "2|T-2|2" && rows.contains("\(Verify.rows + 1)|late|5") && rows.last == "\(Verify.rows + 100)|later|6")
        let leftovers = try store.syncRead { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE name LIKE '%strata_copied%' OR name LIKE '%strata_rw_Aircraft%'")
        }
        #expect(leftovers.isEmpty, "the swap drops the cursor with the triggers: \(leftovers)")
        #expect(try DeferredBoundedStepsTests.integrity(store) == "ok")
    }

    /// A rewrite begun before the cursor existed (triggers that mirror every row, no cursor
    /// table) goes on as it began: the copy moves no cursor, and every row arrives.
    @Test("a rewrite begun without a cursor finishes with its own triggers")
    func aRewriteBegunWithoutACursorFinishes() async throws {
        let (directory, store) = try await Self.partlyCopied("copy-cursor-legacy", batches: 3)
        defer { try? store.close(); _ = directory }
        // Turn the rewrite into one of the earlier kind: ungated triggers, no cursor.
        try store.syncWrite { db in
            let columns = try db.columns(in: Self.shadow).map { "\"\($0.name)\"" }
            let list = columns.joined(separator: ", ")
            let new = columns.map { "NEW.\($0)" }.joined(separator: ", ")
            let updates = columns.filter { $0 != "\"_pk\"" }.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
            let upsert = "INSERT INTO \"\(Self.shadow)\" (\(list)) VALUES (\(new)) ON CONFLICT(\"_pk\") DO UPDATE SET \(updates);"
            try db.execute(sql: "DROP TRIGGER \"_strata_rw_Aircraft_ins\"; DROP TRIGGER \"_strata_rw_Aircraft_upd\"; DROP TABLE \(Self.cursor)")
            try db.execute(sql: "CREATE TRIGGER \"_strata_rw_Aircraft_ins\" AFTER INSERT ON \"Aircraft\" BEGIN \(upsert) END")
            try db.execute(sql: "CREATE TRIGGER \"_strata_rw_Aircraft_upd\" AFTER UPDATE ON \"Aircraft\" BEGIN DELETE FROM \"\(Self.shadow)\" WHERE \"_pk\" = OLD.\"_pk\"; \(upsert) END")
            try db.execute(sql: #"UPDATE "Aircraft" SET "seats" = 73 WHERE "_pk" = ?"#, arguments: [Verify.rows - 1])
        }
        #expect(try Self.shadowRow(store, Verify.rows - 1) == "T-\(Verify.rows - 1)|73", "the earlier triggers mirror ahead of the copy")
        let report = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(1)))
        #expect(report.tasksRemaining == 0)
        let rows = try Verify.liveRows(store)
        #expect(rows.count == Verify.rows && rows.contains("\(Verify.rows - 1)|T-\(Verify.rows - 1)|73"))
        #expect(try DeferredBoundedStepsTests.integrity(store) == "ok")
    }
}
