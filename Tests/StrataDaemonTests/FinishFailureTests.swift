import Foundation
import Strata
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// A deferred-work run that fails part-way (the disk fills up and the batch rolls back) is
/// reported as failed, with the error and the tasks the ledger still holds — through the
/// daemon's admin reply and `stratactl finish-deferred`.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct FinishFailureTests {
    @Test func diskFullMidFinishIsReportedWithTheWorkThatRemains() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        guard let disk = try sandbox.smallDisk(size: "32m", for: "diskFullMidFinishIsReportedWithTheWorkThatRemains") else { return }
        defer { sandbox.unmountSmallDisk(disk) }

        // A Post 3 store of ~2.4 MB: opened at Post 4, its deferred rewrite copies every row,
        // which will not fit once the disk is shrunk to what is in use plus a little.
        try await sandbox.hostPosts(at: disk + "/posts.sqlite")
        let daemon = try DaemonProcess(config: sandbox.configPath)
        defer { daemon.signal(SIGTERM) }
        try await waitForSocket(sandbox.adminSocket)
        let pending = try await VarlinkClient.withConnection(to: sandbox.adminSocket) { try await $0.call("io.strata.Admin.Pending") }
        let tasks = pending["stores"]?.arrayValue?.first?["tasks"]?.arrayValue ?? []
        try #require(tasks.count == 2, "deferred tasks at Post 4: \(tasks)\n\(daemon.log)")
        let space = try FileManager.default.attributesOfFileSystem(forPath: disk)
        let used = (space[.systemSize] as? Int ?? 0) - (space[.systemFreeSize] as? Int ?? 0)
        let shrunk = try await runCommandOffThread("/bin/mount", ["-o", "remount,size=\((used + (512 << 10)) >> 10)k", disk])
        try #require(shrunk.status == 0, "remount: \(shrunk.output)")

        let result = try await runCommandOffThread(Paths.stratactl, ["finish-deferred", "posts", "--wait", "--now", "--json", "--socket", sandbox.adminSocket])
        #expect(result.status == 1, "exit status \(result.status): \(result.output)")
        let json = try #require(result.output.firstIndex(of: "{").map { String(result.output[$0...]) })
        let reply = try JSONValue.decode(Data(json.utf8))
        #expect(reply["state"] == .string("failed"), "\(result.output)")
        let store0 = reply["results"]?.arrayValue?.first
        #expect(store0?["error"]?.stringValue?.contains("full") == true, "\(result.output)")
        #expect(store0?["tasksRemaining"] == .int(2), "\(result.output)")
        #expect(store0?["tasksFinished"] == .int(0))
        #expect(store0?["stoppedEarly"] == .bool(true))

        let text = try await runCommandOffThread(Paths.stratactl, ["finish-deferred", "posts", "--wait", "--now", "--socket", sandbox.adminSocket])
        #expect(text.status == 1)
        #expect(text.output.contains("posts: failed:") && text.output.contains("2 task(s) remaining"), "\(text.output)")
        #expect(daemon.process.isRunning)
    }
}
