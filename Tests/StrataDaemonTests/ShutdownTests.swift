import Foundation
import GRDB
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// Graceful shutdown through the daemon's service group: SIGTERM sends `STOPPING=1`, both
/// sockets stop accepting, idle connections close at once, a running call finishes and gets
/// its reply; past `limits.shutdown_timeout` the calls still running are cut off and the
/// daemon exits all the same.
///
/// The running call is an insert (or a batch) that waits for a write lock another process holds (SQLite's
/// busy handler) until the test releases it.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ShutdownTests {
    /// Another process holding a store's write lock until ``release()`` (or until it is
    /// terminated).
    final class WriteLock {
        let process = Process()
        private let input = Pipe()

        /// Returns once the lock is held.
        init(_ store: String) async throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = ["-c", """
                import sqlite3, sys
                db = sqlite3.connect(sys.argv[1], isolation_level=None)
                db.execute("BEGIN IMMEDIATE")
                print("locked", flush=True)
                sys.stdin.readline()
                db.execute("COMMIT")
                """, store]
            let output = Pipe()
            process.standardOutput = output
            process.standardInput = input
            try process.run()
            let locked = await offThread { String(decoding: output.fileHandleForReading.availableData, as: UTF8.self) }
            try #require(locked.contains("locked"))
        }

        var isHeld: Bool { process.isRunning }

        func release() async {
            input.fileHandleForWriting.write(Data("\n".utf8))
            let process = self.process
            await offThread { process.waitUntilExit() }
        }

        deinit { if process.isRunning { process.terminate() } }
    }

    static func config(_ sandbox: DaemonSandbox, shutdownTimeout: String) throws {
        try sandbox.writeConfig(stores: [], extraStores: """
              - name: slow
                path: \(sandbox.path("slow.sqlite"))
                model: \(Paths.aircraftModel)
                busy_timeout: 60s

            """, limits: "limits:\n  shutdown_timeout: \(shutdownTimeout)")
    }

    @Test func aRunningCallFinishesAndIdleConnectionsClose() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else {
            print("SKIPPED aRunningCallFinishesAndIdleConnectionsClose: needs /usr/bin/python3 to hold a write lock")
            return
        }
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        try Self.config(sandbox, shutdownTimeout: "30s")
        let notify = NotifyListener(path: sandbox.path("notify.sock"))
        defer { notify.close() }
        let daemon = try DaemonProcess(config: sandbox.configPath, environment: ["NOTIFY_SOCKET": notify.path])
        #expect(await notify.wait { $0.contains("READY=1") } != nil, "\(daemon.log)")

        let lock = try await WriteLock(sandbox.path("slow.sqlite"))
        let idle = try #require(await RawVarlinkSocket.connect(sandbox.adminSocket, receiveTimeout: .seconds(20)))
        let busy = try #require(await RawVarlinkSocket.connect(sandbox.dataSocket, receiveTimeout: .seconds(20)))
        await busy.call("io.strata.Store.Insert", ["store": "slow", "entity": "Aircraft", "values": ["tailNumber": "LAST"]])
        let reply = Task { await busy.reply() }
        try await Task.sleep(for: .milliseconds(300))

        daemon.signal(SIGTERM)
        let stopping = await notify.wait { $0.contains("STOPPING=1") }
        #expect(stopping?.contains("STATUS=stopping: draining 2 connection(s)") == true, "\(notify.all)")
        // The idle connection closes now, while the call still runs.
        #expect(await idle.isClosedByPeer(), "the idle connection stayed open")
        // Nobody new gets in: the listeners are closed.
        let late = await RawVarlinkSocket.connect(sandbox.dataSocket, receiveTimeout: .seconds(5))
        if let late {
            await late.call("io.strata.Admin.Status")
            let refused = await late.reply()
            #expect(refused == nil || refused?.error == "io.strata.Varlink.ShuttingDown", "\(String(describing: refused))")
        }
        // The running insert finishes once the lock is released, and is answered.
        #expect(lock.isHeld)
        await lock.release()
        let answer = await reply.value
        #expect(answer?.error == nil && answer?.parameters["object"]?["tailNumber"] == "LAST", "\(String(describing: answer))\n\(daemon.log)")
        #expect(await daemon.waitForExit() == 0, "\(daemon.log)")
        #expect(daemon.log.contains("notice stratad: stopped"))
    }

    /// A `Batch` (one transaction, no `more`) waiting for the lock when SIGTERM comes, released
    /// at once so that it ends while the sockets quiesce: it is answered with every result and
    /// committed, and its connection closes after the reply.
    @Test func aBatchRunningAtSigtermIsAnsweredAndCommitted() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else {
            print("SKIPPED aBatchRunningAtSigtermIsAnsweredAndCommitted: needs /usr/bin/python3 to hold a write lock")
            return
        }
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        try Self.config(sandbox, shutdownTimeout: "30s")
        let notify = NotifyListener(path: sandbox.path("notify.sock"))
        defer { notify.close() }
        let daemon = try DaemonProcess(config: sandbox.configPath, environment: ["NOTIFY_SOCKET": notify.path])
        #expect(await notify.wait { $0.contains("READY=1") } != nil, "\(daemon.log)")

        let lock = try await WriteLock(sandbox.path("slow.sqlite"))
        let busy = try #require(await RawVarlinkSocket.connect(sandbox.dataSocket, receiveTimeout: .seconds(20)))
        await busy.call("io.strata.Store.Batch", ["store": "slow", "operations": [
            ["op": "insert", "entity": "Aircraft", "values": ["tailNumber": "B-ONE"]],
            ["op": "insert", "entity": "Aircraft", "values": ["tailNumber": "B-TWO"]],
        ]])
        let reply = Task { await busy.reply() }
        try await Task.sleep(for: .milliseconds(300))

        daemon.signal(SIGTERM)
        #expect(await notify.wait { $0.contains("STOPPING=1") } != nil, "\(notify.all)")
        await lock.release()
        let answer = await reply.value
        #expect(answer?.error == nil && answer?.continues == false, "\(String(describing: answer))\n\(daemon.log)")
        guard case .array(let results) = answer?.parameters["results"] else {
            Issue.record("no results: \(String(describing: answer))\n\(daemon.log)")
            return
        }
        #expect(results.map { $0["tailNumber"] } == ["B-ONE", "B-TWO"], "\(results)")
        #expect(await busy.isClosedByPeer(), "the connection stayed open after its reply")
        #expect(await daemon.waitForExit() == 0, "\(daemon.log)")

        var readOnly = Configuration()
        readOnly.readonly = true
        let file = try DatabaseQueue(path: sandbox.path("slow.sqlite"), configuration: readOnly)
        let rows = try await file.read { db in try String.fetchAll(db, sql: "SELECT tailNumber FROM Aircraft ORDER BY tailNumber") }
        #expect(rows == ["B-ONE", "B-TWO"])
    }

    @Test func pastTheShutdownTimeoutRunningCallsAreCutOff() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else {
            print("SKIPPED pastTheShutdownTimeoutRunningCallsAreCutOff: needs /usr/bin/python3 to hold a write lock")
            return
        }
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        try Self.config(sandbox, shutdownTimeout: "1s")
        let daemon = try DaemonProcess(config: sandbox.configPath)
        try await waitForSocket(sandbox.dataSocket)

        let lock = try await WriteLock(sandbox.path("slow.sqlite"))
        let busy = try #require(await RawVarlinkSocket.connect(sandbox.dataSocket, receiveTimeout: .seconds(30)))
        await busy.call("io.strata.Store.Insert", ["store": "slow", "entity": "Aircraft", "values": ["tailNumber": "NEVER"]])
        try await Task.sleep(for: .milliseconds(300))

        daemon.signal(SIGTERM)
        // The lock stays held; the daemon does not wait for it.
        #expect(await daemon.waitForExit(timeout: .seconds(20)) == 0, "\(daemon.log)")
        #expect(lock.isHeld)
        #expect(await busy.reply() == nil, "the cut-off call was answered")
    }

    /// Ten observers waiting for commits when SIGTERM comes (issue 45): each gets a final reply
    /// at once — `ShuttingDown`, naming the token to observe again from — and the daemon stops
    /// well within the shutdown timeout instead of at its end.
    @Test func observersGetAFinalReplyAtSigtermAndTheDaemonStopsAtOnce() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        try sandbox.writeConfig(limits: "limits:\n  shutdown_timeout: 20s")
        let daemon = try DaemonProcess(config: sandbox.configPath)
        try await waitForSocket(sandbox.dataSocket)
        var observers: [RawVarlinkSocket] = []
        for _ in 0..<10 {
            let observer = try #require(await RawVarlinkSocket.connect(sandbox.dataSocket, receiveTimeout: .seconds(15)))
            let raw = #"{"method":"io.strata.Store.Observe","parameters":{"store":"aircraft"},"more":true}"#
            #expect(await observer.write(Array(raw.utf8) + [0]))
            let first = await observer.reply()
            #expect(first?.parameters["token"] != nil, "\(String(describing: first))")
            observers.append(observer)
        }
        let signalled = ContinuousClock.now
        daemon.signal(SIGTERM)
        for observer in observers {
            let last = await observer.reply()
            #expect(last?.error == "io.strata.Varlink.ShuttingDown", "\(String(describing: last))")
            #expect(last?.parameters["reason"]?.stringValue?.contains("observe again with since 0") == true, "\(String(describing: last))")
        }
        let answered = ContinuousClock.now - signalled
        #expect(await daemon.waitForExit() == 0, "\(daemon.log)")
        let stopped = ContinuousClock.now - signalled
        // Before: every observer held the daemon for the whole shutdown timeout, and got no reply.
        #expect(answered < .seconds(5) && stopped < .seconds(8), "answered after \(answered), stopped after \(stopped)\n\(daemon.log)")
    }

    /// An observer whose client closed its socket gives its connection slot back at once, not
    /// at the store's next commit (issue 45): the connection count falls with no write at all.
    @Test func anObserverWhosePeerClosedFreesItsSlotAtOnce() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        try sandbox.writeConfig()
        let daemon = try DaemonProcess(config: sandbox.configPath)
        defer { daemon.signal(SIGKILL) }
        try await waitForSocket(sandbox.dataSocket)
        func dataConnections() async throws -> Int {
            let text = try await VarlinkClient.withConnection(to: sandbox.adminSocket) { try await $0.call(StrataAdmin.Metrics.self) }.text
            let line = text.split(separator: "\n").first { $0.hasPrefix("strata_varlink_connections{socket=\"data\"}") }
            return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) } ?? -1
        }
        var observers: [RawVarlinkSocket] = []
        for _ in 0..<5 {
            let observer = try #require(await RawVarlinkSocket.connect(sandbox.dataSocket, receiveTimeout: .seconds(10)))
            let raw = #"{"method":"io.strata.Store.Observe","parameters":{"store":"aircraft"},"more":true}"#
            #expect(await observer.write(Array(raw.utf8) + [0]))
            #expect(await observer.reply() != nil)
            observers.append(observer)
        }
        #expect(try await dataConnections() == 5)
        for observer in observers { Glibc.shutdown(observer.fd, Int32(SHUT_RDWR)) }
        let deadline = ContinuousClock.now + .seconds(3)
        var count = try await dataConnections()
        while count != 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            count = try await dataConnections()
        }
        #expect(count == 0, "\(count) data connections left with their peers gone and nothing committed\n\(daemon.log)")
    }
}
