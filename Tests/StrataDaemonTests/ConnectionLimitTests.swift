import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// Connection-level bounds on a real stratad over raw sockets: the connection limit, peers
/// refused before they hold a slot, the per-message deadline, JSON nesting, and the fetch and
/// batch bounds. Each failure gets its documented Varlink error and the daemon keeps serving.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ConnectionLimitTests {
    /// Starts stratad on a fresh sandbox with `limits` (YAML lines under `limits:`).
    private func withDaemon(limits: String = "", dataAnyPeer: Bool = false,
                            _ body: (DaemonSandbox, DaemonProcess) async throws -> Void) async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        try sandbox.writeConfig(limits: limits.isEmpty ? "" : "limits:\n" + limits, dataAnyPeer: dataAnyPeer)
        let daemon = try DaemonProcess(config: sandbox.configPath)
        // Both sockets: the daemon binds them one after the other, and a test that goes
        // straight to the data socket could otherwise find it not yet there.
        try await waitForSocket(sandbox.adminSocket)
        try await waitForSocket(sandbox.dataSocket)
        try await body(sandbox, daemon)
        await daemon.stop()
    }

    private func status(_ socket: RawVarlinkSocket) async -> VarlinkReply? {
        await socket.call("io.strata.Admin.Status")
        return await socket.reply()
    }

    // MARK: - Connection limit

    @Test func theConnectionPastTheLimitIsRefusedPolitelyAndTheDaemonLives() async throws {
        // An idle timeout longer than the test: opening 256 connections beside the parallel
        // suite once took over the default 60 s, the first ones were closed as idle, and the
        // 257th was admitted into a freed slot.
        try await withDaemon(limits: "  idle_timeout: 1h\n") { sandbox, daemon in
            // The default limit: 256 connections per socket.
            var held: [RawVarlinkSocket] = []
            for index in 0..<256 {
                let socket = try #require(await RawVarlinkSocket.connect(sandbox.adminSocket), "connection \(index)")
                held.append(socket)
            }
            #expect(await status(held[255])?.error == nil)
            // The 257th and later: TooManyConnections, then closed — no crash.
            for _ in 0..<20 {
                let extra = try #require(await RawVarlinkSocket.connect(sandbox.adminSocket))
                let reply = await status(extra)
                #expect(reply?.error == "io.strata.Varlink.TooManyConnections", "\(String(describing: reply))")
                #expect(reply?.parameters["limit"] == .int(256))
                #expect(await extra.isClosedByPeer())
            }
            #expect(daemon.process.isRunning, "stratad died:\n\(daemon.log)")
            #expect(await daemon.logContains("connection refused: too many connections"))
            // Every admitted connection still works; a freed slot is taken by the next client.
            #expect(await status(held[0])?.error == nil)
            held.removeLast()
            var admitted = false
            for _ in 0..<100 where !admitted {
                let next = try #require(await RawVarlinkSocket.connect(sandbox.adminSocket))
                admitted = await status(next)?.error == nil
                if !admitted { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(admitted, "a freed slot was never given to a new client")
        }
    }

    @Test func refusedPeersHoldNoConnectionSlot() async throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
              FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else {
            print("SKIPPED refusedPeersHoldNoConnectionSlot: needs root, setpriv and python3 to connect as another user")
            return
        }
        try await withDaemon(limits: "  max_connections: 4\n") { sandbox, daemon in
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: sandbox.directory.path)
            // 30 connections as nobody, held open without a word until told why.
            let script = """
                import socket, sys, time
                socks = []
                for _ in range(30):
                    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    s.connect(sys.argv[1]); s.settimeout(10); socks.append(s)
                print("opened", flush=True)
                replies = [s.recv(4096) for s in socks]
                print(sum(b"io.strata.Varlink.NotAuthorized" in r for r in replies), flush=True)
                print(sum(s.recv(1) == b"" for s in socks), flush=True)
                """
            let nobody = Process()
            nobody.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            nobody.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script, sandbox.adminSocket]
            let output = Pipe()
            nobody.standardOutput = output
            try nobody.run()
            let reader = output.fileHandleForReading
            let first = await offThread { String(decoding: reader.availableData, as: UTF8.self) }
            #expect(first.contains("opened"), "\(first)")
            // While the 30 refused connections are open, all 4 slots are free for authorized clients.
            var clients: [RawVarlinkSocket] = []
            for _ in 0..<4 { if let client = await RawVarlinkSocket.connect(sandbox.adminSocket) { clients.append(client) } }
            #expect(clients.count == 4)
            for client in clients { #expect(await status(client)?.error == nil) }
            let tail = await offThread { () -> String in
                nobody.waitUntilExit()
                return String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
            }
            let rest = (first + tail).split(separator: "\n")
            #expect(rest.count == 3 && rest[1] == "30" && rest[2] == "30", "refused peer's view: \(rest)\n\(daemon.log)")
            #expect(await daemon.logContains("refused peer"))
        }
    }

    // MARK: - Per-message deadline

    @Test func aClientTricklingBytesIsDisconnected() async throws {
        try await withDaemon(limits: "  message_timeout: 1s\n  idle_timeout: 30s\n") { sandbox, daemon in
            let socket = try #require(await RawVarlinkSocket.connect(sandbox.adminSocket))
            // One byte every 200 ms: never silent for the idle timeout, never a whole message.
            var reply: VarlinkReply?
            let message = Array(#"{"method":"io.strata.Admin.Status","parameters":{"padding":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}"#.utf8)
            let trickler = Task {
                for byte in message {
                    guard await socket.write([byte]) else { return }
                    try await Task.sleep(for: .milliseconds(200))
                }
            }
            reply = await socket.reply()
            trickler.cancel()
            #expect(reply?.error == "io.strata.Varlink.MessageTimeout", "\(String(describing: reply))")
            #expect(reply?.parameters["seconds"]?.doubleValue == 1)
            #expect(await socket.isClosedByPeer())
            #expect(await daemon.logContains("client did not complete a message in time, disconnecting"))
            #expect(daemon.process.isRunning)
        }
    }

    @Test func wholeMessagesSentSlowlyAreServed() async throws {
        try await withDaemon(limits: "  message_timeout: 1s\n  idle_timeout: 30s\n") { sandbox, _ in
            // The deadline runs per message: pauses between complete messages are only bound
            // by the idle timeout.
            let socket = try #require(await RawVarlinkSocket.connect(sandbox.adminSocket))
            for _ in 0..<3 {
                #expect(await status(socket)?.error == nil)
                try await Task.sleep(for: .milliseconds(1500))
            }
            // A message split in two writes, completed in time, is served too.
            let message = Array(VarlinkCall(method: "io.strata.Admin.Status").encoded()) + [0]
            await socket.write(Array(message[..<10]))
            try await Task.sleep(for: .milliseconds(300))
            await socket.write(Array(message[10...]))
            #expect(await socket.reply()?.error == nil)
        }
    }

    // MARK: - Message content bounds

    @Test func deeplyNestedJSONIsRefusedBeforeDecoding() async throws {
        try await withDaemon(limits: "  max_message_size: 1MiB\n") { sandbox, daemon in
            let socket = try #require(await RawVarlinkSocket.connect(sandbox.dataSocket))
            for depth in [65, 511, 100_000] {
                let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
                await socket.write(Array(#"{"method":"io.strata.Store.Count","parameters":{"store":"aircraft","entity":"Aircraft","arguments":\#(nested)}}"#.utf8) + [0])
                let reply = await socket.reply()
                #expect(reply?.error == "io.strata.Varlink.LimitExceeded", "depth \(depth): \(String(describing: reply))")
                #expect(reply?.parameters["limit"] == .string("json_depth"))
                #expect(reply?.parameters["maximum"] == .int(64))
            }
            // 64 levels are fine (the arguments are then refused for what they are).
            let nested = String(repeating: "[", count: 60) + String(repeating: "]", count: 60)
            await socket.write(Array(#"{"method":"io.strata.Store.Count","parameters":{"store":"aircraft","entity":"Aircraft","arguments":[\#(nested)]}}"#.utf8) + [0])
            #expect(await socket.reply()?.error == "org.varlink.service.InvalidParameter")
            #expect(await status(try #require(await RawVarlinkSocket.connect(sandbox.adminSocket)))?.error == nil)
            #expect(daemon.process.isRunning)
        }
    }

    @Test func fetchAndBatchSizesAreBounded() async throws {
        try await withDaemon(limits: "  max_fetch_objects: 5\n  max_batch_operations: 3\n") { sandbox, _ in
            let socket = try #require(await RawVarlinkSocket.connect(sandbox.dataSocket))
            func insert(_ tail: String) -> JSONValue { ["op": "insert", "entity": "Aircraft", "values": ["tailNumber": .string(tail)]] }
            func call(_ method: String, _ parameters: [String: JSONValue]) async -> VarlinkReply? {
                await socket.call("io.strata.Store.\(method)", parameters.merging(["store": "aircraft"]) { $1 })
                return await socket.reply()
            }
            let tooBig = await call("Batch", ["operations": [insert("A1"), insert("A2"), insert("A3"), insert("A4")]])
            #expect(tooBig?.error == "io.strata.Varlink.LimitExceeded")
            #expect(tooBig?.parameters["limit"] == .string("max_batch_operations"))
            #expect(tooBig?.parameters["parameter"] == .string("operations"))
            #expect(await call("Count", ["entity": "Aircraft"])?.parameters["count"] == .int(0), "nothing of a refused batch is written")
            #expect(await call("Batch", ["operations": [insert("A1"), insert("A2"), insert("A3")]])?.error == nil)

            let limit = await call("Fetch", ["entity": "Aircraft", "limit": 6])
            #expect(limit?.error == "io.strata.Varlink.LimitExceeded")
            #expect(limit?.parameters["limit"] == .string("max_fetch_objects"))
            #expect(await call("Fetch", ["entity": "Aircraft"])?.parameters["objects"]?.arrayValue?.count == 3)
            #expect(await call("Batch", ["operations": [insert("A4"), insert("A5"), insert("A6")]])?.error == nil)
            let unbounded = await call("Fetch", ["entity": "Aircraft"])
            #expect(unbounded?.error == "io.strata.Varlink.LimitExceeded", "6 matches, no limit: \(String(describing: unbounded))")
            #expect(unbounded?.parameters["reason"]?.stringValue?.contains("page with limit and offset") == true)
            #expect(await call("Fetch", ["entity": "Aircraft", "limit": 5, "offset": 5])?.parameters["objects"]?.arrayValue?.count == 1)
            #expect(await call("Count", ["entity": "Aircraft"])?.parameters["count"] == .int(6))
        }
    }

    @Test func pipelinedCallsAreAllAnsweredInOrder() async throws {
        try await withDaemon { sandbox, _ in
            // Calls on one connection run one at a time; a client that writes 300 at once is
            // read as fast as they are answered (NIO stops reading past two waiting messages).
            let socket = try #require(await RawVarlinkSocket.connect(sandbox.dataSocket))
            var bytes: [UInt8] = []
            for index in 0..<300 {
                bytes += Array(VarlinkCall(method: "org.varlink.service.GetInterfaceDescription",
                                           parameters: ["interface": .string(index % 2 == 0 ? "io.strata.Store" : "nope.\(index)")]).encoded()) + [0]
            }
            let writer = Task { await socket.write(bytes) }
            for index in 0..<300 {
                let reply = await socket.reply()
                if index % 2 == 0 {
                    #expect(reply?.parameters["description"] != nil, "reply \(index)")
                } else {
                    #expect(reply?.parameters["interface"] == .string("nope.\(index)"), "reply \(index)")
                }
            }
            #expect(await writer.value)
        }
    }
}
