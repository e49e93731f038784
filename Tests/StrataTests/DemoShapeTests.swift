import Foundation
import GRDB
import Testing
@testable import Strata

/// `make run`'s demo at its real shape (issue 19): 200,000 aircraft over 8 primary colours —
/// 25,000 entries per key of the `byPrimaryColor` index — migrated from *Aircraft 1* to
/// *Aircraft 2* as config/stratad.yaml opens it, and finished with the demo's batch budget
/// (read from that file). Finishing must cost in proportion to the rows, whatever the size of
/// a key group: the index reads of the whole run are counted in SQLite virtual-machine steps
/// (``DeferredKeyShapeTests/StepMeter``), a measure that does not depend on the machine's
/// speed or load. The row-value cursor the demo stalled on stepped through the rest of a key
/// group in every batch. Measured here (debug build, 2 cores at load ~12): the row-value
/// cursor 39,126 steps per row, 12,697 batches, 233 s; ``KeysetCursor`` 50 steps per row,
/// 346 batches, 1.4 s.
@Suite("make run at its real shape: finishing costs in proportion to the rows", .serialized, .timeLimit(.minutes(10)))
struct DemoShapeTests {
    static let rows = 200_000
    static let colours = ["red", "white", "blue", "green", "yellow", "black", "silver", "orange"]
    static let config = ModelFileFixtures.packageRoot.appending(path: "config/stratad.yaml")

    /// `scheduler.batch_budget` of the demo's configuration.
    static func demoBatchBudget() throws -> Duration {
        let text = try String(contentsOf: config, encoding: .utf8)
        let line = try #require(text.components(separatedBy: "\n").first { $0.hasPrefix("  batch_budget: ") }, "config/stratad.yaml has no batch_budget")
        let value = line.dropFirst("  batch_budget: ".count).prefix { !$0.isWhitespace }
        let milliseconds = try #require(Int(value.dropLast(2)), "batch_budget \(value) is not in milliseconds")
        try #require(value.hasSuffix("ms"))
        return .milliseconds(milliseconds)
    }

    @Test func finishingTheDemoCostsInProportionToItsRows() async throws {
        let budget = try Self.demoBatchBudget()
        let directory = TemporaryDirectory("demo-shape")
        let url = directory.file("aircraft.sqlite")
        let models = try ModelDirectory(url: ModelFileFixtures.packageRoot.appending(path: "config/models/Aircraft"))
        // The seed of scripts/demo-seed.sh, in one statement.
        let v1 = try PersistentStore.open(at: url, model: try #require(models.version(named: "Aircraft 1")))
        let colours = String(data: try JSONEncoder().encode(Self.colours), encoding: .utf8)!
        try await v1.database.write { db in
            try db.execute(sql: """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
                INSERT INTO Aircraft (_pk, tailNumber, aircraftType, aircraftCategory, aircraftClass,
                                      colorScheme_primary, colorScheme_secondary, colorScheme_tertiary)
                SELECT i, printf('N%06d', i), 'A320', 'airplane', CASE WHEN i % 7 = 0 THEN 'sea' ELSE 'land' END,
                       json_extract(?2, '$[' || (i % 8) || ']'), json_extract(?2, '$[' || ((i / 8) % 8) || ']'),
                       json_extract(?2, '$[' || ((i / 64) % 8) || ']')
                FROM n
                """, arguments: [Self.rows, colours])
            #expect(try Int.fetchOne(db, sql: "SELECT count(DISTINCT colorScheme_primary) FROM Aircraft") == 8)
        }
        try v1.close()

        var migration = MigrationOptions.deferred
        migration.knownVersions = models.versions
        let store = try PersistentStore.open(at: url, model: try #require(models.version(named: "Aircraft 2")), options: StoreOptions(migration: migration))
        defer { try? store.close() }
        #expect(try store.pendingDeferredWork().map(\.kind).contains(.rewriteTable))
        let meter = DeferredKeyShapeTests.StepMeter()
        try await store.database.writeWithoutTransaction { db in meter.install(on: db) }
        let report = try await store.finishDeferredMigration(FinishOptions(batchBudget: budget))
        try await store.database.writeWithoutTransaction { db in DeferredKeyShapeTests.StepMeter.remove(from: db) }

        #expect(report.tasksRemaining == 0 && !report.stoppedEarly, "\(report)")
        let (count, integrity) = try await store.database.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM Aircraft"), try String.fetchOne(db, sql: "PRAGMA integrity_check"))
        }
        #expect(count == Self.rows)
        #expect(integrity == "ok")
        let steps = meter.steps.withLock { $0 }
        let perRow = Double(steps) / Double(Self.rows)
        print("demo shape: \(Self.rows) rows, 8 colours, budget \(budget): \(steps) index-reading steps (\(String(format: "%.1f", perRow)) per row), \(report.batches) batches, \(String(format: "%.1f", report.seconds)) s")
        // A bound proportional to the rows: ~50 steps per row with a seeking cursor (~100
        // with 1,000 distinct keys); the row-value cursor took 39,126 per row here.
        #expect(perRow < 500, "\(perRow) index-reading steps per row: a batch's cost grows with its key group")
    }
}
