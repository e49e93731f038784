import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// io.strata.Store.History and Observe against a real stratad: authors, paging, streaming,
/// filters, expired tokens, a client that never reads, and bad input.
@Suite(.serialized, .timeLimit(.minutes(3)))
final class HistoryInterfaceTests {
    let sandbox: DaemonSandbox
    let daemon: DaemonProcess
    static let queueLimit = 5

    init() async throws {
        sandbox = try DaemonSandbox()
        try sandbox.writeConfig(limits: "limits:\n  max_observer_queue: \(Self.queueLimit)\n  idle_timeout: 30s\n", dataAnyPeer: true)
        daemon = try DaemonProcess(config: sandbox.configPath)
        try await waitForSocket(sandbox.dataSocket)
    }

    deinit {
        daemon.signal(SIGTERM)
        sandbox.remove()
    }

    func data<T: Sendable>(_ body: (VarlinkClient.Connection) async throws -> T) async throws -> T {
        try await VarlinkClient.withConnection(to: sandbox.dataSocket, body)
    }

    func insert(_ tail: String, author: String? = nil) async throws {
        _ = try await data { try await $0.call(StrataStore.Insert.self, .init(store: "aircraft", entity: "Aircraft", values: ["tailNumber": .string(tail)], author: author)) }
    }

    func errorName(_ body: () async throws -> Void) async -> String? {
        do { try await body(); return nil } catch let error as VarlinkError { return error.name } catch { return "\(error)" }
    }

    @Test func historyRecordsTheClientsUserAndAuthor() async throws {
        try await insert("F-GSPT", author: "sync-engine")
        try await insert("N1")
        _ = try await data { try await $0.call(StrataStore.Batch.self, .init(store: "aircraft", operations: [
            .init(op: .update, entity: "Aircraft", id: 1, values: ["aircraftType": "A320"]),
            .init(op: .delete, entity: "Aircraft", id: 2),
        ])) }
        let reply = try await data { try await $0.call(StrataStore.History.self, .init(store: "aircraft", since: 0, limit: 10)) }
        #expect(reply.transactions.map(\.token) == [1, 2, 3] && reply.next == 3 && reply.latest == 3)
        let user = getpwuid(getuid()).map { String(cString: $0.pointee.pw_name) } ?? String(getuid())
        #expect(reply.transactions[0].user == user && reply.transactions[0].author == "sync-engine")
        #expect(reply.transactions[0].changes == [.init(entity: "Aircraft", id: 1, kind: .insert)])
        #expect(reply.transactions[1].author == nil)
        // A save writes deletes first, then inserts, then updates.
        #expect(reply.transactions[2].changes == [.init(entity: "Aircraft", id: 2, kind: .delete),
                                                  .init(entity: "Aircraft", id: 1, kind: .update, properties: ["aircraftType"])])
        let paged = try await data { try await $0.call(StrataStore.History.self, .init(store: "aircraft", since: 1, entities: ["Aircraft"], limit: 1)) }
        #expect(paged.transactions.map(\.token) == [2] && paged.next == 2)
    }

    @Test(arguments: [
        (#"{"store":"aircraft","since":0,"limit":0}"#, "History", "org.varlink.service.InvalidParameter"),
        (#"{"store":"aircraft","since":0,"limit":10001}"#, "History", "io.strata.Varlink.LimitExceeded"),
        (#"{"store":"aircraft","since":-1,"limit":10}"#, "History", "io.strata.Store.InvalidHistoryToken"),
        (#"{"store":"aircraft","since":99,"limit":10}"#, "History", "io.strata.Store.InvalidHistoryToken"),
        (#"{"store":"aircraft","since":0,"limit":10,"entities":["Nope"]}"#, "History", "io.strata.Store.ObjectError"),
        (#"{"store":"nope","since":0,"limit":10}"#, "History", "io.strata.Store.NoSuchStore"),
        (#"{"store":"aircraft"}"#, "Observe", "org.varlink.service.ExpectedMore"),
        (#"{"store":"aircraft","predicate":"tailNumber == 'x'"}"#, "Observe+", "org.varlink.service.InvalidParameter"),
        (#"{"store":"aircraft","entities":["Aircraft"],"predicate":"tailNumber ==="}"#, "Observe+", "io.strata.Store.InvalidPredicate"),
        (#"{"store":"aircraft","entities":["Aircraft"],"predicate":"nope == 1"}"#, "Observe+", "io.strata.Store.InvalidPredicate"),
        (#"{"store":"aircraft","entities":["Nope"]}"#, "Observe+", "io.strata.Store.ObjectError"),
        (#"{"store":"aircraft","since":-5}"#, "Observe+", "io.strata.Store.InvalidHistoryToken"),
        (#"{"store":"aircraft","entity":"Aircraft","values":{"tailNumber":"x"},"author":"a\nb"}"#, "Insert", "org.varlink.service.InvalidParameter"),
    ])
    func badInputGetsAClearError(parameters: String, method: String, expected: String) async throws {
        let socket = try #require(await RawVarlinkSocket.connect(sandbox.dataSocket))
        let more = method.hasSuffix("+")
        let name = more ? String(method.dropLast()) : method
        let raw = #"{"method":"io.strata.Store.\#(name)","parameters":\#(parameters)\#(more ? #","more":true"# : "")}"#
        #expect(await socket.write(Array(raw.utf8) + [0]))
        let reply = await socket.reply()
        #expect(reply?.error == expected, "\(String(describing: reply))")
        #expect(reply?.parameters["reason"] != nil || reply?.parameters["parameter"] != nil || expected.contains("varlink"), "\(String(describing: reply))")
    }

    @Test func observeStreamsFilteredTransactionsAsTheyCommit() async throws {
        try await insert("F-OLD")
        let received = try await data { observer -> [StrataStore.Observe.Reply] in
            try await observer.send(VarlinkCall(method: StrataStore.Observe.qualifiedName, parameters: [
                "store": "aircraft", "entities": ["Aircraft"], "predicate": "tailNumber BEGINSWITH 'F-'", "since": 0,
            ], more: true))
            var replies: [StrataStore.Observe.Reply] = []
            func next() async throws -> StrataStore.Observe.Reply {
                let reply = try await observer.nextReply()
                if let error = reply.error { throw VarlinkError(error, reply.parameters) }
                return try JSONValueDecoder().decode(StrataStore.Observe.Reply.self, from: .object(reply.parameters))
            }
            replies.append(try await next())   // where it starts
            replies.append(try await next())   // F-OLD, from since
            try await insert("N-NOPE")
            try await insert("F-NEW")
            replies.append(try await next())
            return replies
        }
        #expect(received[0].transaction == nil && received[0].token == 0)
        #expect(received[1].transaction?.changes.map(\.id) == [1] && received[1].token == 1)
        // N-NOPE (token 2) does not match the predicate.
        #expect(received[2].transaction?.changes.map(\.id) == [3] && received[2].token == 3)
    }

    @Test func anExpiredTokenGetsHistoryExpired() async throws {
        for i in 0..<4 { try await insert("E\(i)") }
        let purge = try runStratactl(["history", "purge", sandbox.path("aircraft.sqlite"), "--before", "2", "--json"])
        #expect(purge.status == 0, "\(purge.output)")
        #expect(purge.output.contains(#""through" : 2"#), "\(purge.output)")
        let error = await errorName { _ = try await self.data { try await $0.call(StrataStore.History.self, .init(store: "aircraft", since: 1, limit: 10)) } }
        #expect(error == "io.strata.Store.HistoryExpired")
        let rest = try await data { try await $0.call(StrataStore.History.self, .init(store: "aircraft", since: 2, limit: 10)) }
        #expect(rest.transactions.map(\.token) == [3, 4])
        let shown = try runStratactl(["history", "aircraft", "--since", "2", "--data-socket", sandbox.dataSocket])
        #expect(shown.status == 0 && shown.output.contains("insert Aircraft 4") && shown.output.contains("next 4 (latest 4)"), "\(shown.output)")
        let expired = try runStratactl(["history", "aircraft", "--since", "0", "--data-socket", sandbox.dataSocket])
        #expect(expired.status == 7 && expired.output.contains("HistoryExpired"), "\(expired.output)")
    }

    @Test func anObserverThatNeverReadsIsClosedAndTheDaemonKeepsServing() async throws {
        let raw = #"{"method":"io.strata.Store.Observe","parameters":{"store":"aircraft"},"more":true}"#
        let observer = try #require(await RawVarlinkSocket.connect(sandbox.dataSocket, receiveTimeout: .seconds(5)))
        #expect(await observer.write(Array(raw.utf8) + [0]))
        // Large transactions fill the socket buffers quickly; the observer reads nothing.
        for batch in 0..<40 {
            let operations = (0..<200).map { i in
                StrataStore.Operation(op: .insert, entity: "Aircraft", values: ["tailNumber": .string("B\(batch)-\(i)")])
            }
            _ = try await data { try await $0.call(StrataStore.Batch.self, .init(store: "aircraft", operations: operations)) }
        }
        #expect(await daemon.logContains("observer fell behind, closing its connection"))
        // Within the grace period the daemon closes it: reading drains what was sent, then EOF.
        try await Task.sleep(for: .seconds(2))
        var replies: [VarlinkReply] = []
        while let reply = await observer.reply() { replies.append(reply) }
        #expect(replies.first?.parameters["token"] == .int(0))
        #expect(replies.count < 40, "the observer was not cut off: \(replies.count) replies")
        if let last = replies.last, last.error != nil { #expect(last.error == "io.strata.Store.ObserverOverflow") }
        // The daemon serves on, and the observer can resume from its last token.
        let token = replies.compactMap { $0.parameters["token"]?.intValue }.max() ?? 0
        let resumed = try await data { try await $0.call(StrataStore.History.self, .init(store: "aircraft", since: token, limit: 100)) }
        #expect(resumed.latest == 40 && resumed.transactions.first?.token == token + 1)
    }

    /// Runs stratactl; its exit status and combined output.
    func runStratactl(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Paths.stratactl)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
