import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink
import Synchronization

/// Many `Observe` calls on one store against a real stratad: the store's history is read once
/// per commit and fanned out (ObserverFeed). Every observer sees every change in order, one
/// that does not read gets `ObserverOverflow` without holding up the others, and an observer
/// that resumes from its last token after a disconnect loses and repeats nothing, even while
/// the writes go on.
@Suite(.serialized, .timeLimit(.minutes(3)))
final class ObserverFanOutTests {
    let sandbox: DaemonSandbox
    let daemon: DaemonProcess
    static let queueLimit = 5

    init() async throws {
        sandbox = try DaemonSandbox()
        try sandbox.writeConfig(limits: "limits:\n  max_observer_queue: \(ObserverFanOutTests.queueLimit)\n  observer_grace: 20s\n  idle_timeout: 30s\n  max_connections: 64\n",
                                dataAnyPeer: true)
        daemon = try DaemonProcess(config: sandbox.configPath)
        try await waitForSocket(sandbox.dataSocket)
    }

    deinit {
        daemon.signal(SIGTERM)
        sandbox.remove()
    }

    static func insert(_ tails: [String], on connection: VarlinkClient.Connection) async throws {
        let operations = tails.map { StrataStore.Operation(op: .insert, entity: "Aircraft", values: ["tailNumber": .string($0)]) }
        _ = try await connection.call(StrataStore.Batch.self, .init(store: "aircraft", operations: operations))
    }

    /// Observes from `since` (nil: from now on) until `count` transactions arrived; the
    /// replies after the first (which says where the observation starts).
    static func observe(_ socket: String, since: Int64?, count: Int, started: (@Sendable () -> Void)? = nil) async throws -> [StrataStore.Observe.Reply] {
        try await VarlinkClient.withConnection(to: socket) { connection in
            var parameters: [String: JSONValue] = ["store": "aircraft"]
            if let since { parameters["since"] = .int(since) }
            try await connection.send(VarlinkCall(method: StrataStore.Observe.qualifiedName, parameters: parameters, more: true))
            var replies: [StrataStore.Observe.Reply] = []
            while replies.count <= count {
                let reply = try await connection.nextReply()
                if let error = reply.error { throw VarlinkError(error, reply.parameters) }
                replies.append(try JSONValueDecoder().decode(StrataStore.Observe.Reply.self, from: .object(reply.parameters)))
                if replies.count == 1 { started?() }
            }
            return Array(replies.dropFirst())
        }
    }

    @Test func configurationReadsTheObserverGrace() throws {
        let configuration = try ConfigurationLoader(checksModels: false).parse("stores: []\nlimits:\n  observer_grace: 250ms\n", file: "test.yaml")
        #expect(configuration.limits.observerGrace == .milliseconds(250))
        #expect(Limits().observerGrace == .seconds(1))
        for bad in ["0s", "2m"] {
            let error = try #require(throws: ConfigurationError.self) {
                try ConfigurationLoader(checksModels: false).parse("stores: []\nlimits:\n  observer_grace: \(bad)\n", file: "test.yaml")
            }
            #expect(error.key == "limits.observer_grace")
            #expect(error.reason.contains("between 10ms and 1m"), "\(error)")
        }
    }

    @Test func manyObserversSeeEveryChangeInOrder() async throws {
        let early = 18
        let late = 6
        let rounds = 30
        let socket = sandbox.dataSocket
        let joined = SharedCount()
        let written = SharedCount()
        let results = try await withThrowingTaskGroup(of: [Int64].self) { group -> [[Int64]] in
            for _ in 0..<early {
                group.addTask { try await ObserverFanOutTests.observe(socket, since: nil, count: rounds, started: { joined.add() }).map(\.token) }
            }
            while joined.value < early { try await Task.sleep(for: .milliseconds(10)) }
            group.addTask {
                try await VarlinkClient.withConnection(to: socket) { connection in
                    for round in 0..<rounds {
                        // One to three objects per transaction, so that some replies carry several changes.
                        try await ObserverFanOutTests.insert((0...(round % 3)).map { "R\(round)-\($0)" }, on: connection)
                        written.add()
                        try await Task.sleep(for: .milliseconds(10))
                    }
                }
                return []
            }
            // Late observers start from the beginning while the writes are under way: they read
            // the start themselves, then join the shared feed without a gap or a repeat.
            while written.value < rounds / 3 { try await Task.sleep(for: .milliseconds(5)) }
            for _ in 0..<late {
                group.addTask { try await ObserverFanOutTests.observe(socket, since: 0, count: rounds).map(\.token) }
            }
            var all: [[Int64]] = []
            for try await tokens in group where !tokens.isEmpty { all.append(tokens) }
            return all
        }
        #expect(results.count == early + late)
        for tokens in results { #expect(tokens == Array(1...Int64(rounds)), "\(tokens)") }
        let page = try await VarlinkClient.withConnection(to: socket) { try await $0.call(StrataStore.History.self, .init(store: "aircraft", since: 0, limit: 100)) }
        #expect(page.transactions.map { $0.changes.count } == (0..<rounds).map { $0 % 3 + 1 })
    }

    @Test func aSlowObserverGetsOverflowAndTheOthersDoNotWait() async throws {
        let socket = sandbox.dataSocket
        let raw = #"{"method":"io.strata.Store.Observe","parameters":{"store":"aircraft"},"more":true}"#
        let slow = try #require(await RawVarlinkSocket.connect(socket, receiveTimeout: .seconds(5)))
        #expect(await slow.write(Array(raw.utf8) + [0]))
        let first = await slow.reply()
        #expect(first?.parameters["token"] == .int(0))
        let batches = 40
        let joined = SharedCount()
        // The fast observer reads everything while the slow one reads nothing at all.
        let fast = Task { @Sendable in try await ObserverFanOutTests.observe(socket, since: nil, count: batches, started: { joined.add() }) }
        while joined.value < 1 { try await Task.sleep(for: .milliseconds(10)) }
        // The slow observer reads nothing until the daemon gives up on it; then, within the
        // grace period, it gets what fit in the socket and ObserverOverflow naming the limit and
        // its resume token; then the connection closes.
        let daemon = self.daemon
        let drained = Task { () -> [VarlinkReply] in
            guard await daemon.logContains("observer fell behind, closing its connection", within: .seconds(120)) else { return [] }
            var replies: [VarlinkReply] = []
            while let reply = await slow.reply() { replies.append(reply) }
            return replies
        }
        try await VarlinkClient.withConnection(to: socket) { connection in
            for batch in 0..<batches { try await ObserverFanOutTests.insert((0..<200).map { "B\(batch)-\($0)" }, on: connection) }
        }
        let replies = await drained.value
        let received = try await fast.value
        #expect(received.map(\.token) == Array(1...Int64(batches)))
        #expect(received.allSatisfy { $0.transaction?.changes.count == 200 })
        #expect(replies.count < batches, "the slow observer was not cut off: \(replies.count) replies")
        let last = try #require(replies.last)
        #expect(last.error == "io.strata.Store.ObserverOverflow", "\(last)")
        #expect(last.parameters["limit"] == .int(Int64(ObserverFanOutTests.queueLimit)))
        let delivered = replies.dropLast().compactMap { $0.parameters["token"]?.intValue }
        #expect(last.parameters["token"] == .int(delivered.last ?? 0))
        #expect(delivered == (0..<delivered.count).map { Int64($0 + 1) })
    }

    @Test func resumingByTokenAfterADisconnectLosesNothing() async throws {
        let socket = sandbox.dataSocket
        let total = 60
        // Writes go on the whole time, one transaction at a time.
        let writer = Task {
            try await VarlinkClient.withConnection(to: socket) { connection in
                for n in 0..<total {
                    try await ObserverFanOutTests.insert(["W\(n)"], on: connection)
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
        }
        let before = try await ObserverFanOutTests.observe(socket, since: 0, count: 15)
        let resumeFrom = try #require(before.last?.token)
        // Away for a while: the writes go on without this observer.
        try await Task.sleep(for: .milliseconds(50))
        let after = try await ObserverFanOutTests.observe(socket, since: resumeFrom, count: total - Int(resumeFrom))
        try await writer.value
        let tokens = (before + after).map(\.token)
        #expect(tokens == Array(1...Int64(total)), "\(tokens)")
        let tails = (before + after).compactMap { $0.transaction?.changes.first?.id }
        #expect(tails == Array(1...Int64(total)))
    }
}

/// A counter the test's tasks share.
final class SharedCount: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
