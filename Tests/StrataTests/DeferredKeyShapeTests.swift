import Foundation
import GRDB
import GRDBSQLite
import Synchronization
import Testing
@testable import Strata

/// Finishing a rewrite whose indexes are built in key order from the live table's indexes:
/// the cost per entry must not depend on how many distinct values the key has.
@Suite("Deferred work: a batch's cost independent of the key's shape")
struct DeferredKeyShapeTests {
    static func model(_ version: String, photo: Bool) -> ObjectModel {
        ObjectModel(version: version, entities: [
            Entity("Item", attributes: [Attribute("color", .string), Attribute("tier", .int64), Attribute("name", .string)]
                       + (photo ? [Attribute("photo", .data)] : []),
                   indexes: [Index("byColor", keyPaths: ["color"]), Index("byColorTier", keyPaths: ["color", "tier"])]),
        ])
    }

    /// Virtual-machine steps of the statements that read the live table's indexes (`INDEXED BY`)
    /// on the writer connection, summed by a profile trace.
    final class StepMeter: @unchecked Sendable {
        let steps = Mutex(0)

        func install(on db: Database) {
            let context = Unmanaged.passUnretained(self).toOpaque()
            sqlite3_trace_v2(db.sqliteConnection, UInt32(SQLITE_TRACE_PROFILE), { _, context, statement, _ in
                guard let context, let statement else { return 0 }
                let meter = Unmanaged<StepMeter>.fromOpaque(context).takeUnretainedValue()
                let stmt = OpaquePointer(statement)
                let count = Int(sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_VM_STEP, 1))
                if let sql = sqlite3_sql(stmt), String(cString: sql).contains("INDEXED BY") {
                    meter.steps.withLock { $0 += count }
                }
                return 0
            }, context)
        }

        static func remove(from db: Database) {
            sqlite3_trace_v2(db.sqliteConnection, 0, nil, nil)
        }
    }

    /// Seeds `rows` items over `colors` colors, drops `photo` with
    /// deferral and finishes; returns the index-reading steps per row.
    static func stepsPerRow(rows: Int, colors: Int) async throws -> Double {
        let directory = TemporaryDirectory("keyshape")
        let url = directory.file("store.sqlite")
        let v1 = try PersistentStore.open(at: url, model: model("items 1", photo: true))
        try await v1.database.write { db in
            try db.execute(sql: """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                INSERT INTO Item (_pk, color, tier, name, photo) SELECT i, 'color-' || (i % ?), i % 3, 'item ' || i, NULL FROM n
                """, arguments: [rows, colors])
        }
        try v1.close()
        let store = try PersistentStore.open(at: url, model: model("items 2", photo: false), options: StoreOptions(migration: .deferred))
        #expect(try store.pendingDeferredWork().map(\.kind).contains(.rewriteTable))
        let meter = StepMeter()
        try await store.database.writeWithoutTransaction { db in meter.install(on: db) }
        let report = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(2)))
        try await store.database.writeWithoutTransaction { db in StepMeter.remove(from: db) }
        #expect(report.tasksRemaining == 0)
        let check = try await store.database.read { db in
            (try String.fetchOne(db, sql: "PRAGMA integrity_check"),
             try Int.fetchOne(db, sql: "SELECT count(*) FROM Item INDEXED BY \(quoteIdentifier(try db.indexes(on: "Item").first { $0.columns == ["color", "tier"] }!.name))"))
        }
        #expect(check.0 == "ok")
        #expect(check.1 == rows)
        try store.close()
        return Double(meter.steps.withLock { $0 }) / Double(rows)
    }

    @Test("4 and 8 distinct keys cost per row what 1,000 do (the row-value cursor rescanned each key group)")
    func lowCardinalityCostsTheSame() async throws {
        let rows = 40_000
        let wide = try await Self.stepsPerRow(rows: rows, colors: 1000)
        for colors in [4, 8] {
            let narrow = try await Self.stepsPerRow(rows: rows, colors: colors)
            #expect(narrow <= wide * 1.5, "\(colors) colors: \(narrow) steps per row, 1,000 colors: \(wide)")
        }
        #expect(wide < 500, "\(wide) index-reading steps per row with 1,000 colors (the row-value cursor took about 17,900 with 4)")
    }
}
