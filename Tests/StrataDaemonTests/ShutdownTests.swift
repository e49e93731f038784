import Foundation
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
/// The running call is an insert that waits for a write lock another process holds (SQLite's
/// busy handler), for as long as the test decides.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ShutdownTests {
    /// Holds `store`'s write lock for `seconds` in another process; returns once it holds it.
    static func holdWriteLock(_ store: String, seconds: Int) async throws -> Process {
        let locker = Process()
        locker.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        locker.arguments = ["-c", """
            import sqlite3, sys, time
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("BEGIN IMMEDIATE")
            print("locked", flush=True)
            time.sleep(float(sys.argv[2]))
            db.execute("COMMIT")
            """, store, "\(seconds)"]
        let output = Pipe()
        locker.standardOutput = output
        try locker.run()
        let locked = await offThread { String(decoding: output.fileHandleForReading.availableData, as: UTF8.self) }
        try #require(locked.contains("locked"))
        return locker
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

        let locker = try await Self.holdWriteLock(sandbox.path("slow.sqlite"), seconds: 3)
        let idle = try #require(await RawVarlinkSocket.connect(sandbox.adminSocket, receiveTimeout: .seconds(20)))
        let busy = try #require(await RawVarlinkSocket.connect(sandbox.dataSocket, receiveTimeout: .seconds(20)))
        await busy.call("io.strata.Store.Insert", ["store": "slow", "entity": "Aircraft", "values": ["tailNumber": "LAST"]])
        let reply = Task { await busy.reply() }
        try await Task.sleep(for: .milliseconds(300))

        daemon.signal(SIGTERM)
        let stopping = await notify.wait { $0.contains("STOPPING=1") }
        #expect(stopping?.contains("STATUS=stopping: draining 2 connection(s)") == true, "\(notify.all)")
        // The idle connection closes now, long before the lock is released.
        #expect(await idle.isClosedByPeer(), "the idle connection stayed open")
        #expect(locker.isRunning, "the idle connection closed only after the lock was released")
        // Nobody new gets in: the listeners are closed.
        let late = await RawVarlinkSocket.connect(sandbox.dataSocket, receiveTimeout: .seconds(5))
        if let late {
            await late.call("io.strata.Admin.Status")
            let refused = await late.reply()
            #expect(refused == nil || refused?.error == "io.strata.Varlink.ShuttingDown", "\(String(describing: refused))")
        }
        // The running insert finishes once the lock is released, and is answered.
        let answer = await reply.value
        #expect(answer?.error == nil && answer?.parameters["object"]?["tailNumber"] == "LAST", "\(String(describing: answer))\n\(daemon.log)")
        #expect(await daemon.waitForExit() == 0, "\(daemon.log)")
        #expect(daemon.log.contains("notice stratad: stopped"))
        await offThread { locker.waitUntilExit() }
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

        let locker = try await Self.holdWriteLock(sandbox.path("slow.sqlite"), seconds: 60)
        defer { locker.terminate() }
        let busy = try #require(await RawVarlinkSocket.connect(sandbox.dataSocket, receiveTimeout: .seconds(30)))
        await busy.call("io.strata.Store.Insert", ["store": "slow", "entity": "Aircraft", "values": ["tailNumber": "NEVER"]])
        try await Task.sleep(for: .milliseconds(300))

        daemon.signal(SIGTERM)
        // The lock is held for a minute; the daemon does not wait for it.
        #expect(await daemon.waitForExit(timeout: .seconds(20)) == 0, "\(daemon.log)")
        #expect(locker.isRunning)
        #expect(await busy.reply() == nil, "the cut-off call was answered")
    }
}
