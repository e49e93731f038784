import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// Every kind of bad client input gets an error or a disconnect, and the daemon keeps serving.
@Suite(.serialized, .timeLimit(.minutes(2)))
final class BadInputTests {
    let sandbox: DaemonSandbox
    let daemon: DaemonProcess

    init() async throws {
        sandbox = try DaemonSandbox()
        // idle_timeout: short for stalledClientIsDisconnected, long enough that a test process
        // slowed by a busy machine does not lose its connection between connect and send (3 s
        // was not, once, beside the parallel suite).
        try sandbox.writeConfig(limits: "limits:\n  max_message_size: 2KiB\n  idle_timeout: 6s\n", dataAnyPeer: false)
        daemon = try DaemonProcess(config: sandbox.configPath)
        try await waitForSocket(sandbox.adminSocket)
    }

    deinit {
        daemon.signal(SIGTERM)
        sandbox.remove()
    }

    /// Sends raw bytes and returns the reply (nil when the daemon closed the connection).
    func exchange(_ raw: String, socket: String? = nil) async throws -> VarlinkReply? {
        try await VarlinkClient.withConnection(to: socket ?? sandbox.adminSocket) { connection in
            try await connection.sendRaw(Array(raw.utf8))
            return try? await connection.nextReply()
        }
    }

    func stillServing() async throws {
        let status = try await VarlinkClient.withConnection(to: sandbox.adminSocket) { try await $0.call("io.strata.Admin.Status") }
        #expect(status["status"]?.stringValue == "1 store ready")
    }

    @Test(arguments: [
        ("{not json", "io.strata.Varlink.MalformedMessage"),
        ("[1,2]", "io.strata.Varlink.MalformedMessage"),
        (#"{"parameters":{}}"#, "io.strata.Varlink.MalformedMessage"),
        (#"{"method":"io.strata.Admin.Status","more":"yes"}"#, "io.strata.Varlink.MalformedMessage"),
        (#"{"method":"io.nope.Thing.Do"}"#, "org.varlink.service.InterfaceNotFound"),
        (#"{"method":"io.strata.Admin.Explode"}"#, "org.varlink.service.MethodNotFound"),
        (#"{"method":"io.strata.Admin.Pending","parameters":{"store":42}}"#, "org.varlink.service.InvalidParameter"),
        (#"{"method":"io.strata.Admin.Status","parameters":{"extra":1}}"#, "org.varlink.service.InvalidParameter"),
        (#"{"method":"io.strata.Store.Fetch","parameters":{"store":"aircraft"}}"#, "org.varlink.service.InvalidParameter"),
        (#"{"method":"io.strata.Store.Fetch","parameters":{"store":"nope","entity":"Aircraft"}}"#, "io.strata.Store.NoSuchStore"),
        (#"{"method":"io.strata.Store.Fetch","parameters":{"store":"aircraft","entity":"Aircraft","predicate":"tailNumber ==="}}"#, "io.strata.Store.InvalidPredicate"),
        (#"{"method":"io.strata.Store.Insert","parameters":{"store":"aircraft","entity":"Nope","values":{}}}"#, "io.strata.Store.ObjectError"),
        (#"{"method":"io.strata.Store.Update","parameters":{"store":"aircraft","entity":"Aircraft","id":999,"values":{}}}"#, "io.strata.Store.ObjectNotFound"),
        (#"{"method":"org.varlink.service.GetInterfaceDescription","parameters":{"interface":"x.y"}}"#, "org.varlink.service.InterfaceNotFound"),
    ])
    func badCallGetsAnError(raw: String, expected: String) async throws {
        let reply = try await exchange(raw)
        #expect(reply?.error == expected, "reply: \(String(describing: reply))")
        try await stillServing()
    }

    @Test func oversizedMessageIsRefusedAndDisconnected() async throws {
        let big = #"{"method":"io.strata.Admin.Status","parameters":{"x":""# + String(repeating: "a", count: 4096) + #""}}"#
        let (reply, closed) = try await VarlinkClient.withConnection(to: sandbox.adminSocket) { connection -> (VarlinkReply?, Bool) in
            try await connection.sendRaw(Array(big.utf8))
            let reply = try? await connection.nextReply()
            let closed = (try? await connection.nextReply()) == nil
            return (reply, closed)
        }
        #expect(reply?.error == "io.strata.Varlink.MessageTooLarge")
        #expect(reply?.parameters["limit"] == .int(2048))
        #expect(closed)
        try await stillServing()
    }

    @Test func stalledClientIsDisconnected() async throws {
        let started = ContinuousClock.now
        let closed = try await VarlinkClient.withConnection(to: sandbox.adminSocket) { connection -> Bool in
            // Half a message, then silence.
            try await connection.sendRaw([])  // one (empty, malformed) message, then silence
            _ = try? await connection.nextReply()
            return (try? await connection.nextReply()) == nil
        }
        #expect(closed)
        // The idle timeout (6 s) and no more than 7 s beside it.
        #expect(ContinuousClock.now - started < .seconds(13))
        // The log line is written before the close, but reaches us through a pipe: wait for it.
        var logged = false
        for _ in 0..<100 where !logged {
            logged = daemon.log.contains("idle client disconnected")
            if !logged { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(logged, "\(daemon.log)")
        try await stillServing()
    }

    @Test func refusedPeerGetsAnErrorAndALogLine() async throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
              FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else {
            print("SKIPPED refusedPeerGetsAnErrorAndALogLine: needs root, setpriv and python3 to connect as another user")
            return
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: sandbox.directory.path)
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sys.argv[1])
            s.sendall(b'{"method":"io.strata.Admin.Status"}\\0')
            print(s.recv(4096).rstrip(b'\\0').decode())
            """
        let result = try runCommand("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script, sandbox.adminSocket])
        #expect(result.output.contains("io.strata.Varlink.NotAuthorized"), "\(result.output)")
        #expect(await daemon.logContains("refused peer"))
        try await stillServing()
    }
}
