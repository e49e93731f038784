import Foundation
import Strata
import Testing
@testable import StrataDaemon

/// A store's `history:` settings, and the purge the idle scheduler runs with them: one
/// bounded batch per store per idle tick.
struct HistoryRetentionConfigurationTests {
    func parse(_ history: String) throws(ConfigurationError) -> HistoryRetention {
        let text = """
            stores:
              - name: a
                path: /tmp/a.sqlite
                model: \(Paths.aircraftModel)
                history: \(history)
            """
        return try ConfigurationLoader().parse(text, file: "test.yaml").stores[0].history
    }

    @Test func keysAreRead() throws {
        #expect(try parse("{keep: 7d, max_transactions: 100000}") == HistoryRetention(keep: .seconds(7 * 86_400), maxTransactions: 100_000))
        #expect(try parse("{record: false}") == HistoryRetention(record: false))
        #expect(HistoryRetention().purges == false)
    }

    @Test(arguments: [
        ("{keep: 10s}", "stores[0].history.keep", "between 1m and"),
        ("{keep: forever}", "stores[0].history.keep", "not a duration"),
        ("{max_transactions: 0}", "stores[0].history.max_transactions", "between 1 and 1000000000"),
        ("{max_transactions: -5}", "stores[0].history.max_transactions", "between 1 and 1000000000"),
        ("{record: maybe}", "stores[0].history.record", "true or false"),
        ("{kep: 7d}", "stores[0].history.kep", "did you mean 'keep'?"),
        ("7d", "stores[0].history", "expected a mapping"),
    ])
    func refused(text: String, key: String, reason: String) {
        expectRefused(text, key: key, reason: reason, parse)
    }

    static let model = ObjectModel(version: "Retention 1", entities: [Entity("Item", attributes: [Attribute("n", .int64)]),
                                                                      Entity("Tag", attributes: [Attribute("n", .int64)])])

    @Test func theSchedulerPurgesOneBoundedBatchPerTick() async throws {
        let directory = NSTemporaryDirectory() + "strata-retention-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/r.sqlite"
        let store = try PersistentStore.open(at: URL(fileURLWithPath: path), model: Self.model)
        defer { try? store.close() }
        for t in 0..<5 {
            let context = ObjectContext(store: store)
            // Items and tags in turn: no two neighbours alike, so each change is a history record
            // of its own (like neighbours would share one).
            for i in 0..<500 { try context.insert(i % 2 == 0 ? "Item" : "Tag")["n"] = .int(Int64(t * 500 + i)) }
            try context.save()
        }
        var configuration = StoreConfiguration(name: "r", path: path, modelDirectory: directory)
        configuration.history = HistoryRetention(maxTransactions: 1)
        let hosted = HostedStore(configuration: configuration, store: store, modelVersion: "Retention 1", state: .ready)
        var batches: [HistoryPurgeBatch] = []
        while let batch = await HistoryPurger.purgeOneBatch(hosted) { batches.append(batch) }
        // 2,000 change records of the 4 oldest transactions, at most 1,000 per batch.
        #expect(batches.map(\.changes) == [1_000, 1_000, 0] && batches.map(\.transactions) == [0, 0, 4])
        #expect(try store.oldestHistoryToken() == 5 && store.historyPurgedThrough() == 4)
        // Retention by age: nothing is a day old yet.
        configuration.history = HistoryRetention(keep: .seconds(86_400))
        let byAge = HostedStore(configuration: configuration, store: store, modelVersion: "Retention 1", state: .ready)
        #expect(await HistoryPurger.purgeOneBatch(byAge) == nil)
        #expect(await HistoryPurger.purgeOneBatch(byAge, now: Date().addingTimeInterval(2 * 86_400))?.transactions == 1)
    }
}
