import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// Slow calls on one store neither delay another store's calls nor starve the watchdog
/// loop: each store's blocking work runs on its own threads.
///
/// The slow calls here are inserts that wait for a write lock another process holds (SQLite's
/// busy handler sleeps), as long as the test decides and without burning the CPU the other
/// tests need. CPU-bound slow calls (a `MATCHES` with catastrophic backtracking) take the
/// same path; their figures are in docs/Security.md.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct SlowCallIsolationTests {
    /// How long the other process holds the write lock of the slow store: twice the watchdog
    /// interval, so a watchdog that waited for the slow calls would miss its deadline by far.
    static let lockHeld: Duration = .seconds(8)

    @Test func slowCallsOnOneStoreDoNotDelayOtherStoresOrTheWatchdog() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else {
            print("SKIPPED slowCallsOnOneStoreDoNotDelayOtherStoresOrTheWatchdog: needs /usr/bin/python3 to hold a write lock")
            return
        }
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        let slowStore = sandbox.path("slow.sqlite")
        try sandbox.writeConfig(stores: ["second"], extraStores: """
              - name: slow
                path: \(slowStore)
                model: \(Paths.aircraftModel)
                busy_timeout: 60s

            """)
        let notify = NotifyListener(path: sandbox.path("notify.sock"))
        defer { notify.close() }
        // WatchdogSec=4s: pings every 4/3 s; the gap must stay under the 4 s systemd enforces.
        // (Not under half of it: on two loaded cores a ping thread that is runnable can wait
        // most of a second for a CPU, which says nothing about the store's threads. A watchdog
        // on a store's thread would go silent for the whole lock, 8 s.)
        let watchdog: Duration = .seconds(4)
        let daemon = try DaemonProcess(config: sandbox.configPath, environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "4000000"])
        defer { daemon.signal(SIGTERM) }
        #expect(await notify.wait { $0.contains("READY=1") } != nil, "\(daemon.log)")

        // Another process takes the slow store's write lock and keeps it.
        let locker = Process()
        locker.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        locker.arguments = ["-c", """
            import sqlite3, sys, time
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("BEGIN IMMEDIATE")
            print("locked", flush=True)
            time.sleep(float(sys.argv[2]))
            db.execute("COMMIT")
            """, slowStore, "\(Self.lockHeld.seconds)"]
        let lockerOutput = Pipe()
        locker.standardOutput = lockerOutput
        try locker.run()
        let locked = await offThread { String(decoding: lockerOutput.fileHandleForReading.availableData, as: UTF8.self) }
        try #require(locked.contains("locked"))

        // As many slow inserts as the store has threads, each on its own connection.
        let started = ContinuousClock.now
        var slow: [RawVarlinkSocket] = []
        for index in 0..<Limits.storeThreads {
            let socket = try #require(await RawVarlinkSocket.connect(sandbox.dataSocket, receiveTimeout: .seconds(90)))
            await socket.call("io.strata.Store.Insert", ["store": "slow", "entity": "Aircraft", "values": ["tailNumber": .string("SLOW-\(index)")]])
            slow.append(socket)
        }
        let finished = Task { [slow] () -> [(VarlinkReply?, ContinuousClock.Instant)] in
            await withTaskGroup(of: (VarlinkReply?, ContinuousClock.Instant).self) { group in
                for socket in slow {
                    group.addTask { (await socket.reply(), .now) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        try await Task.sleep(for: .milliseconds(300))

        // Meanwhile: the other store and the admin socket answer.
        let other = try #require(await RawVarlinkSocket.connect(sandbox.dataSocket))
        await other.call("io.strata.Store.Insert", ["store": "second", "entity": "Aircraft", "values": ["tailNumber": "FAST"]])
        let otherReply = await other.reply()
        #expect(otherReply?.error == nil, "\(String(describing: otherReply))")
        let admin = try #require(await RawVarlinkSocket.connect(sandbox.adminSocket))
        await admin.call("io.strata.Admin.Status")
        #expect(await admin.reply()?.error == nil)
        let othersAnswered = ContinuousClock.now

        let slowDone = await finished.value
        for (reply, _) in slowDone { #expect(reply?.error == nil, "the slow insert: \(String(describing: reply))") }
        let firstSlow = try #require(slowDone.map(\.1).min())
        let lastSlow = try #require(slowDone.map(\.1).max())
        #expect(othersAnswered < firstSlow, """
            the other store and the admin socket answered \(othersAnswered - started) after the start, after the first \
            slow call (\(firstSlow - started)): they waited for it
            """)

        // The watchdog kept pinging while the slow calls ran.
        let pings = notify.arrivals(of: "WATCHDOG=1").filter { $0 >= started.advanced(by: .milliseconds(-1500)) && $0 <= lastSlow }
        let gaps = zip(pings, pings.dropFirst()).map { $1 - $0 } + [lastSlow - (pings.last ?? started)]
        let longest = gaps.max() ?? .zero
        #expect(pings.count >= 2, "pings during \(lastSlow - started) of slow calls: \(pings.count)")
        #expect(longest < watchdog, "longest watchdog gap \(longest) while slow calls ran for \(lastSlow - started)")
        print("slow calls ran \(lastSlow - started); \(pings.count) watchdog pings, longest gap \(longest)")
        await offThread { locker.waitUntilExit() }
    }
}
