import Foundation
import Strata
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// `FinishDeferred` is finished once the change is complete: the incremental vacuum that gives
/// the old data's pages back is left to the scheduler's idle turns, unless the request asks
/// for `reclaim` (`stratactl finish-deferred --reclaim`).
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ReclaimLaterTests {
    /// A Post 3 store of 2,400 posts, hosted at Post 4 (a rewrite, then its drop and the
    /// vacuum); the daemon started on it with its scheduler paused.
    static func daemon(_ sandbox: DaemonSandbox) async throws -> DaemonProcess {
        try await sandbox.hostPosts(at: sandbox.path("posts.sqlite"))
        let daemon = try DaemonProcess(config: sandbox.configPath)
        try await waitForSocket(sandbox.adminSocket)
        #expect(try await Self.stratactl(sandbox, ["pause", "--reason", "test"]).status == 0)
        return daemon
    }

    static func stratactl(_ sandbox: DaemonSandbox, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await runCommandOffThread(Paths.stratactl, arguments + ["--socket", sandbox.adminSocket])
    }

    static func pendingKinds(_ sandbox: DaemonSandbox) async throws -> [String] {
        let pending = try await VarlinkClient.withConnection(to: sandbox.adminSocket) { try await $0.call("io.strata.Admin.Pending") }
        return (pending["stores"]?.arrayValue?.first?["tasks"]?.arrayValue ?? []).compactMap { $0["kind"]?.stringValue }
    }

    @Test func finishLeavesTheVacuumToTheSchedulersIdleTurns() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        let daemon = try await Self.daemon(sandbox)
        defer { daemon.signal(SIGTERM) }

        let result = try await Self.stratactl(sandbox, ["finish-deferred", "posts", "--wait", "--now", "--json"])
        #expect(result.status == 0, "\(result.output)\n\(daemon.log)")
        let json = try #require(result.output.firstIndex(of: "{").map { String(result.output[$0...]) })
        let reply = try JSONValue.decode(Data(json.utf8))
        #expect(reply["state"] == .string("finished"), "\(result.output)")
        let store = reply["results"]?.arrayValue?.first
        #expect(store?["tasksFinished"] == .int(2), "the rewrite and the old rows' drop: \(result.output)")
        #expect(store?["tasksRemaining"] == .int(1), "\(result.output)")
        #expect(store?["stoppedEarly"] == .bool(false), "\(result.output)")
        #expect(store?["reclaimLeft"] == .bool(true), "\(result.output)")
        #expect((store?["freePages"]?.intValue ?? 0) > 100, "the old rows' pages wait in the file: \(result.output)")
        #expect(try await Self.pendingKinds(sandbox) == ["incrementalVacuum"])
        #expect(daemon.log.contains("deferred change complete; its free pages are given back when the store is idle"), "\(daemon.log)")
        // The status line tells the vacuum apart from unfinished changes.
        let status = try await Self.stratactl(sandbox, ["status"]).output
        #expect(status.contains("status:    1 store ready, 1 with free pages to reclaim") && !status.contains("with deferred work pending"), "\(status)")

        // The scheduler is paused: the vacuum waits (a request's run is over, nobody runs it).
        try await Task.sleep(for: .milliseconds(1500))
        #expect(try await Self.pendingKinds(sandbox) == ["incrementalVacuum"])
        // Resumed, its idle turn gives the pages back (idle_after: 1s in the tests' config; no
        // machine signal counts, so that other tests' load cannot hold it off).
        #expect(try await Self.stratactl(sandbox, ["set", "signals="]).status == 0)
        #expect(try await Self.stratactl(sandbox, ["resume"]).status == 0)
        var left = ["incrementalVacuum"]
        for _ in 0..<300 where !left.isEmpty {
            try await Task.sleep(for: .milliseconds(100))
            left = try await Self.pendingKinds(sandbox)
        }
        #expect(left.isEmpty, "the scheduler's idle turn did not run the vacuum: \(daemon.log)")
        #expect(daemon.log.contains("finished deferred task") && daemon.log.contains("reclaim free pages"), "\(daemon.log)")
    }

    @Test func reclaimRunsTheVacuumInTheRequest() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        let daemon = try await Self.daemon(sandbox)
        defer { daemon.signal(SIGTERM) }

        // The text form of a run that leaves the vacuum says what is left and how to run it now.
        let once = try await Self.stratactl(sandbox, ["finish-deferred", "posts", "--wait", "--now", "--json"])
        #expect(once.status == 0, "\(once.output)")
        let help = try await Self.stratactl(sandbox, ["finish-deferred", "--help"])
        #expect(help.output.contains("--reclaim"), "\(help.output)")

        let text = try await Self.stratactl(sandbox, ["finish-deferred", "posts", "--wait", "--now", "--reclaim"])
        #expect(text.status == 0, "\(text.output)\n\(daemon.log)")
        #expect(text.output.contains("posts: 1 task(s) finished, 0 remaining"), "\(text.output)")
        #expect(!text.output.contains("the change is complete"), "\(text.output)")
        #expect(try await Self.pendingKinds(sandbox).isEmpty)
        let free = try await VarlinkClient.withConnection(to: sandbox.adminSocket) { try await $0.call("io.strata.Admin.ListStores") }
        #expect(free["stores"]?.arrayValue?.first?["pendingTasks"] == .int(0), "\(free)")
    }

    @Test func textSaysTheChangeIsCompleteAndHowToReclaimNow() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        let daemon = try await Self.daemon(sandbox)
        defer { daemon.signal(SIGTERM) }
        let text = try await Self.stratactl(sandbox, ["finish-deferred", "posts", "--wait", "--now"])
        #expect(text.status == 0, "\(text.output)\n\(daemon.log)")
        #expect(text.output.contains("posts: 2 task(s) finished, 1 remaining"), "\(text.output)")
        #expect(text.output.contains("(the change is complete; its ") && text.output.contains(" free pages go back to the file system when the store is idle, or now with --reclaim)"), "\(text.output)")
    }
}
