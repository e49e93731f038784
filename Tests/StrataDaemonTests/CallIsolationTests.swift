import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// Calls isolated from each other (issue 45, docs/Security.md "Lanes"): a store's writes and
/// lookups by key run on threads of their own, which no query can take, and `MATCHES` runs in
/// time linear in the text (RE2), so that a pattern from a peer cannot take a thread for long.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct CallIsolationTests {
    @Test("a lookup by key, a write or a batch takes the key lane; anything that may scan, the query lane", arguments: [
        (StoreInterface.Query(entity: "A", predicate: "SELF == %@", arguments: [.int(4)]), HostedStore.Lane.key),
        (.init(entity: "A", predicate: "self = 17", arguments: nil), .key),
        (.init(entity: "A", predicate: "SELF IN %@", arguments: [.array([.int(1), .int(2)])]), .key),
        (.init(entity: "A", predicate: "SELF IN %@", arguments: [.array([.int(1), .int(2)])], sort: ["name"]), .query),
        (.init(entity: "A", predicate: "SELF == %@", arguments: [.int(4)], sort: ["name"]), .query),
        (.init(entity: "A", predicate: "SELF == %@ OR name == %@", arguments: [.int(4), .string("x")]), .query),
        (.init(entity: "A", predicate: "SELF IN %@", arguments: [.array(Array(repeating: .int(1), count: 1001))]), .query),
        (.init(entity: "A", predicate: "_pk == %@", arguments: [.int(4)]), .query),
        (.init(entity: "A", predicate: "name MATCHES %@", arguments: [.string("(a+)+b")]), .query),
        (.init(entity: "A", predicate: nil, arguments: nil), .query),
        (.init(entity: "A", predicate: "SELF == x", arguments: nil), .query),
    ] as [(StoreInterface.Query, HostedStore.Lane)])
    func lanesByWhatACallCanCost(_ query: StoreInterface.Query, lane: HostedStore.Lane) {
        #expect(query.lane == lane, "\(query.predicate ?? "no predicate")")
    }

    /// Four clients keep the store's query lane busy with slow queries (a case- and
    /// diacritic-insensitive CONTAINS folds every long text of the table); a client looking
    /// objects up by key meanwhile is answered as if they were not there: never after a whole
    /// slow query.
    @Test func keyLookupsNeverQueueBehindSlowQueries() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        try sandbox.writeConfig(stores: ["lanes"])
        let daemon = try DaemonProcess(config: sandbox.configPath)
        defer { daemon.signal(SIGKILL) }
        try await waitForSocket(sandbox.dataSocket)
        let rows = 6_000
        let text = String(repeating: "é", count: 700)
        try await VarlinkClient.withConnection(to: sandbox.dataSocket) { connection in
            for batch in 0..<(rows / 500) {
                let operations = (0..<500).map { i in
                    StrataStore.Operation(op: .insert, entity: "Aircraft", values: ["tailNumber": .string("\(text)\(batch * 500 + i)")])
                }
                _ = try await connection.call(StrataStore.Batch.self, .init(store: "lanes", operations: operations))
            }
        }
        let slow = StrataStore.Count.Parameters(store: "lanes", entity: "Aircraft", predicate: "tailNumber CONTAINS[cd] %@", arguments: [.string("zz")])
        // One slow query alone, for scale.
        let alone = ContinuousClock.now
        _ = try await VarlinkClient.withConnection(to: sandbox.dataSocket) { try await $0.call(StrataStore.Count.self, slow) }
        let slowQuery = ContinuousClock.now - alone
        let stop = SharedFlag()
        let busy = (0..<4).map { _ in
            Task {
                try await VarlinkClient.withConnection(to: sandbox.dataSocket) { connection in
                    while !stop.isSet { _ = try await connection.call(StrataStore.Count.self, slow) }
                }
            }
        }
        try await Task.sleep(for: slowQuery)
        var lookups: [Duration] = []
        try await VarlinkClient.withConnection(to: sandbox.dataSocket) { connection in
            for i in 0..<100 {
                let started = ContinuousClock.now
                let reply = try await connection.call(StrataStore.Fetch.self, .init(store: "lanes", entity: "Aircraft", predicate: "SELF == %@",
                                                                                  arguments: [.int(Int64(1 + i * 97 % rows))]))
                lookups.append(ContinuousClock.now - started)
                #expect(reply.objects.count == 1)
            }
        }
        stop.set()
        for task in busy { try await task.value }
        let sorted = lookups.sorted()
        let p99 = sorted[98]
        print("a slow query alone: \(slowQuery); key lookups beside four of them: p50 \(sorted[50]), p99 \(p99), max \(sorted[99])")
        // Sharing the query lane, a lookup waited for the slow queries ahead of it (two at a
        // time on two threads): at least one whole slow query most of the time.
        #expect(p99 < slowQuery / 2, "p99 \(p99) against a slow query of \(slowQuery)")
    }
}

/// A flag set once, read from any task.
final class SharedFlag: @unchecked Sendable {
    // @unchecked: the value is only touched under the lock.
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    func set() { lock.lock(); value = true; lock.unlock() }
}
