import Foundation
import GRDB
import Testing
@testable import Strata

/// A context's ``CallDeadline`` stops hostile work inside SQLite and its functions: a `MATCHES`
/// scan over a large table (RE2 answers each row in linear time), a full scan with `CONTAINS` over a large table, a
/// predicate along a chain of to-one relationships. The call throws `callTimeout` naming the
/// limit, and the connection and the store keep working.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct CallDeadlineTests {
    static let model = ObjectModel(version: "Deadline 1", entities: [
        Entity("Person",
               attributes: [Attribute("name", .string)],
               relationships: [
                   Relationship("manager", destination: "Person", inverse: "reports"),
                   Relationship("reports", destination: "Person", inverse: "manager", toMany: true),
               ]),
    ])

    /// A store with `rows` people named `name`, each managed by the one before.
    func seeded(rows: Int, name: String) throws -> (TemporaryStore, PersistentStore) {
        let temporary = TemporaryStore()
        let store = try temporary.open(Self.model)
        try store.database.write { db in
            for index in 1...rows {
                try db.execute(sql: "INSERT INTO \"Person\" (\"_pk\", \"_version\", \"name\") VALUES (?, 1, ?)", arguments: [index, name])
            }
            let column = try #require(try db.columns(in: "Person").map(\.name).first { $0.lowercased().contains("manager") })
            try db.execute(sql: "UPDATE \"Person\" SET \"\(column)\" = \"_pk\" - 1 WHERE \"_pk\" > 1")
        }
        return (temporary, store)
    }

    func timesOut(_ store: PersistentStore, timeout: Duration, _ body: (ObjectContext) throws -> Void) throws -> StoreError {
        let context = ObjectContext(store: store)
        context.deadline = CallDeadline(timeout: timeout, limit: "limits.call_timeout")
        let started = ContinuousClock.now
        let error = try #require(throws: StoreError.self) { try body(context) }
        // Unbounded, these run for seconds to minutes; stopped, they return right after the
        // deadline. 20 s is far from both.
        let took = ContinuousClock.now - started
        #expect(took < .seconds(20))
        print("stopped by a \(timeout) deadline after \(took)")
        return error
    }

    /// The pattern that backtracks exponentially (40 s at 60 rows under ICU) is answered at
    /// once by RE2, well within a 300 ms deadline; a MATCHES scan over a large table is still
    /// stopped by the deadline, naming MATCHES, and the store answers the next call.
    @Test func hostileRegexIsAnsweredAndALongMatchesScanIsStopped() throws {
        let (temporary, store) = try seeded(rows: 60, name: String(repeating: "a", count: 26))
        _ = temporary
        let context = ObjectContext(store: store)
        context.deadline = CallDeadline(timeout: .milliseconds(300), limit: "limits.call_timeout")
        let started = ContinuousClock.now
        #expect(try context.fetch("Person", where: "name MATCHES %@", "(a+)+b").isEmpty)
        #expect(ContinuousClock.now - started < .milliseconds(300))
        #expect(try context.count("Person", where: "name MATCHES %@", "(a+)+") == 60)

        let (largeTemporary, large) = try seeded(rows: 100_000, name: String(repeating: "a", count: 26))
        _ = largeTemporary
        let error = try timesOut(large, timeout: .milliseconds(1)) { context in
            _ = try context.fetch("Person", where: "name MATCHES %@", "(a+)+b")
        }
        #expect(error.code == .callTimeout)
        #expect(error.reason.contains("limits.call_timeout (1ms)"), "\(error)")
        #expect(error.reason.contains("MATCHES"), "\(error)")
        let next = ObjectContext(store: large)
        next.deadline = CallDeadline(timeout: .seconds(30))
        #expect(try next.count("Person", where: "name BEGINSWITH %@", "aaa") == 100_000)
    }

    @Test func fullScanContainsIsStopped() throws {
        let (temporary, store) = try seeded(rows: 100_000, name: "someone")
        _ = temporary
        // 100,000 rows of strata_contains cannot finish in 1 ms.
        let error = try timesOut(store, timeout: .milliseconds(1)) { context in
            _ = try context.count("Person", where: "name CONTAINS[cd] %@", "nobody")
        }
        #expect(error.code == .callTimeout)
        #expect(try ObjectContext(store: store).count("Person", where: "name CONTAINS[cd] %@", "nobody") == 0)
    }

    @Test func toOneChainPredicateIsStopped() throws {
        let (temporary, store) = try seeded(rows: 100_000, name: "someone")
        _ = temporary
        let error = try timesOut(store, timeout: .milliseconds(1)) { context in
            _ = try context.fetch("Person", where: "manager.manager.manager.manager.name CONTAINS %@", "nobody")
        }
        #expect(error.code == .callTimeout)
    }

    @Test func aTimedOutContextCanStillSave() throws {
        let (temporary, store) = try seeded(rows: 100_000, name: "someone")
        _ = temporary
        let context = ObjectContext(store: store)
        context.deadline = CallDeadline(timeout: .milliseconds(1))
        #expect(throws: StoreError.self) { _ = try context.count("Person", where: "name CONTAINS %@", "x") }
        context.deadline = CallDeadline(timeout: .seconds(30))
        let person = try context.insert("Person")
        person["name"] = "new"
        try context.save()
        #expect(try ObjectContext(store: store).count("Person", where: "name == %@", "new") == 1)
    }

    @Test func noDeadlineMeansNoLimit() throws {
        let (temporary, store) = try seeded(rows: 20_000, name: "someone")
        _ = temporary
        #expect(try ObjectContext(store: store).count("Person", where: "manager.manager.name CONTAINS %@", "one") == 19_998)
    }

    @Test func theDeadlineHoldsOnTheWriterAfterAFinishingRun() async throws {
        let directory = TemporaryDirectory("deadline")
        let url = directory.file("store.sqlite")
        try DeferredVerifyTests.seeded(url)
        let store = try PersistentStore.open(at: url, model: DeferredVerifyTests.destination, options: StoreOptions(migration: .deferred))
        defer { try? store.close() }
        // Finishing installs its own progress handler on the writer for each batch.
        let report = try await store.finishDeferredMigration()
        #expect(report.batches > 0)
        let error = try #require(throws: StoreError.self) {
            try store.syncWrite { db in
                try CallDeadline.enforce(CallDeadline(timeout: .milliseconds(1)), path: url.path) {
                    try db.execute(sql: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 50000000) SELECT count(*) FROM c")
                }
            }
        }
        #expect(error.code == .callTimeout)
    }
}
