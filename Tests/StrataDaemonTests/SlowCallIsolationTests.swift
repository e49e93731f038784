import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon

/// Hostile slow calls on one store neither delay another store's calls nor starve the
/// watchdog loop: each store's blocking work runs on its own threads.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct SlowCallIsolationTests {
    /// A regular expression with catastrophic backtracking against strings it cannot match:
    /// ICU spends about 2.4 s on each such row here, so a Fetch over the hostile rows takes
    /// about 5 s — long next to any scheduling delay of a loaded machine, which slows the
    /// hostile calls as much as anything else.
    static let hostileTails = ["a", "b"].map { String(repeating: "a", count: 30) + "!" + $0 }
    static let hostilePredicate = "tailNumber MATCHES '(a+)+b'"

    @Test func slowCallsOnOneStoreDoNotDelayOtherStoresOrTheWatchdog() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        try sandbox.writeConfig(stores: ["aircraft", "second"])
        let notify = NotifyListener(path: sandbox.path("notify.sock"))
        defer { notify.close() }
        // WatchdogSec=4s: pings every 4/3 s; the gap must stay under half of it.
        let watchdog: Duration = .seconds(4)
        let daemon = try DaemonProcess(config: sandbox.configPath, environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "4000000"])
        defer { daemon.signal(SIGTERM) }
        #expect(await notify.wait { $0.contains("READY=1") } != nil, "\(daemon.log)")

        let setup = try #require(await RawVarlinkSocket.connect(sandbox.dataSocket))
        for tail in Self.hostileTails {
            await setup.call("io.strata.Store.Insert", ["store": "aircraft", "entity": "Aircraft", "values": ["tailNumber": .string(tail)]])
            #expect(await setup.reply()?.error == nil)
        }

        // Two hostile fetches (all of the store's threads), each on its own connection.
        let started = ContinuousClock.now
        var hostile: [RawVarlinkSocket] = []
        for _ in 0..<Limits.storeThreads {
            if let socket = await RawVarlinkSocket.connect(sandbox.dataSocket, receiveTimeout: .seconds(90)) { hostile.append(socket) }
        }
        #expect(hostile.count == Limits.storeThreads)
        for socket in hostile {
            await socket.call("io.strata.Store.Fetch", ["store": "aircraft", "entity": "Aircraft", "predicate": .string(Self.hostilePredicate)])
        }
        let finished = Task { [hostile] () -> [ContinuousClock.Instant] in
            await withTaskGroup(of: ContinuousClock.Instant.self) { group in
                for socket in hostile {
                    group.addTask {
                        _ = await socket.reply()
                        return .now
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        try await Task.sleep(for: .milliseconds(200))

        // Meanwhile: the other store and the admin socket answer.
        let other = try #require(await RawVarlinkSocket.connect(sandbox.dataSocket))
        await other.call("io.strata.Store.Count", ["store": "second", "entity": "Aircraft"])
        let otherReply = await other.reply()
        #expect(otherReply?.parameters["count"] == .int(0), "\(String(describing: otherReply))")
        let admin = try #require(await RawVarlinkSocket.connect(sandbox.adminSocket))
        await admin.call("io.strata.Admin.Status")
        #expect(await admin.reply()?.error == nil)
        let adminAnswered = ContinuousClock.now

        let hostileDone = await finished.value
        let firstHostile = try #require(hostileDone.min())
        let lastHostile = try #require(hostileDone.max())
        // The other store and the admin socket answered while the hostile calls still ran.
        #expect(adminAnswered < firstHostile, """
            the first hostile call ended \(firstHostile - started) after the start, before the other store and the admin \
            socket answered (\(adminAnswered - started)): they waited for it, or it is too fast to prove anything \
            (add hostileTails)
            """)

        // The watchdog kept pinging while they ran.
        let pings = notify.arrivals(of: "WATCHDOG=1").filter { $0 >= started.advanced(by: .milliseconds(-1500)) && $0 <= lastHostile }
        let gaps = zip(pings, pings.dropFirst()).map { $1 - $0 } + [lastHostile - (pings.last ?? started)]
        let longest = gaps.max() ?? .zero
        #expect(pings.count >= 2, "pings during \(lastHostile - started) of hostile calls: \(pings.count)")
        #expect(longest < watchdog / 2, "longest watchdog gap \(longest) while hostile calls ran for \(lastHostile - started)")
        print("hostile calls ran \(lastHostile - started); \(pings.count) watchdog pings, longest gap \(longest)")
    }
}
