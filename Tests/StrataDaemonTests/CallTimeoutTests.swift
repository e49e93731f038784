import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// `call_timeout` over the wire: hostile `MATCHES` calls from data-socket clients are stopped
/// with `io.strata.Varlink.CallTimeout` naming the limit, do not stall other calls on the
/// same store beyond the limit, and leave their connection and the store serving.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct CallTimeoutTests {
    @Test func configurationReadsCallTimeoutAndItsOverride() throws {
        let text = """
            stores:
              - {name: a, path: a.sqlite, model: m, call_timeout: 250ms}
              - {name: b, path: b.sqlite, model: m}
            limits:
              call_timeout: 2s
            """
        let configuration = try ConfigurationLoader(checksModels: false).parse(text, file: "test.yaml")
        #expect(configuration.limits.callTimeout == .seconds(2))
        #expect(configuration.stores[0].callTimeout == .milliseconds(250))
        #expect(configuration.stores[1].callTimeout == nil)
        #expect(Limits().callTimeout == .seconds(5))
        for bad in ["limits:\n  call_timeout: 0s\n", "limits:\n  call_timeout: 2h\n"] {
            let error = try #require(throws: ConfigurationError.self) {
                try ConfigurationLoader(checksModels: false).parse("stores: []\n" + bad, file: "test.yaml")
            }
            #expect(error.key == "limits.call_timeout")
            #expect(error.reason.contains("between 10ms and 1h"), "\(error)")
        }
    }

    /// `(a+)+b` over 60 rows of 26 `a`s: a backtracking engine (ICU's, before issue 45) ran it
    /// for tens of seconds and the call was stopped at its 500 ms limit; RE2 matches in time
    /// linear in the text, so four such calls at once are answered — no match — well within it,
    /// and a call beside them is answered too.
    @Test func hostileMatchesPatternsAreAnsweredInLinearTime() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        try sandbox.writeConfig(stores: [], extraStores: """
              - name: hostile
                path: \(sandbox.path("hostile.sqlite"))
                model: \(Paths.aircraftModel)
                call_timeout: 500ms

            """)
        let daemon = try DaemonProcess(config: sandbox.configPath)
        defer { daemon.signal(SIGTERM) }
        try await waitForSocket(sandbox.dataSocket)

        let writer = try #require(await RawVarlinkSocket.connect(sandbox.dataSocket))
        let operations: [JSONValue] = (0..<60).map { _ in
            ["op": "insert", "entity": "Aircraft", "values": ["tailNumber": .string(String(repeating: "a", count: 26))]]
        }
        await writer.call("io.strata.Store.Batch", ["store": "hostile", "operations": .array(operations)])
        let seeded = await writer.reply()
        #expect(seeded?.error == nil, "\(String(describing: seeded)) \(daemon.log)")

        var hostile: [RawVarlinkSocket] = []
        for _ in 0..<4 {
            let socket = try #require(await RawVarlinkSocket.connect(sandbox.dataSocket, receiveTimeout: .seconds(15)))
            await socket.call("io.strata.Store.Fetch", ["store": "hostile", "entity": "Aircraft",
                                                       "predicate": "tailNumber MATCHES %@", "arguments": ["(a+)+b"]])
            hostile.append(socket)
        }
        let counter = try #require(await RawVarlinkSocket.connect(sandbox.dataSocket, receiveTimeout: .seconds(15)))
        await counter.call("io.strata.Store.Count", ["store": "hostile", "entity": "Aircraft"])
        let count = await counter.reply()
        #expect(count?.error == nil, "\(String(describing: count))")
        #expect(count?.parameters["count"] == .int(60))
        for socket in hostile {
            let reply = await socket.reply()
            #expect(reply?.error == nil, "\(String(describing: reply))")
            #expect(reply?.parameters["objects"]?.arrayValue?.count == 0, "\(String(describing: reply))")
            // The connection serves the next call: a pattern that matches every row.
            await socket.call("io.strata.Store.Count", ["store": "hostile", "entity": "Aircraft", "predicate": "tailNumber MATCHES %@", "arguments": ["(a+)+"]])
            let next = await socket.reply()
            #expect(next?.parameters["count"] == .int(60), "\(String(describing: next))")
        }
        // A pattern RE2 leaves out (a backreference) is refused, naming its place in the pattern.
        await counter.call("io.strata.Store.Count", ["store": "hostile", "entity": "Aircraft", "predicate": "tailNumber MATCHES %@", "arguments": ["(a)\\1"]])
        let refused = await counter.reply()
        #expect(refused?.error == "io.strata.Store.InvalidPredicate", "\(String(describing: refused))")
        #expect(refused?.parameters["reason"]?.stringValue?.contains("no backreferences or lookaround") == true, "\(String(describing: refused))")
        let admin = try #require(await RawVarlinkSocket.connect(sandbox.adminSocket))
        await admin.call("io.strata.Admin.Status")
        let status = await admin.reply()
        #expect(status?.error == nil)
        #expect(!"\(String(describing: status))".contains("failed"), "\(String(describing: status))")
    }
}
