import Foundation
import Strata
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// The `disk` signal through the real daemon: a store on a small file system (a tmpfs) with
/// less free space than the shipped `min_free_space` (1 GiB). Deferred work holds, the status,
/// the log and the metrics say why; lowering `min_free_space` at run time lets it finish.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct DiskSpaceHoldTests {
    @Test func deferredWorkHoldsWhileTheStoresFileSystemIsShortOfSpace() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        guard let disk = try sandbox.smallDisk(size: "64m", for: "deferredWorkHoldsWhileTheStoresFileSystemIsShortOfSpace") else { return }
        defer { sandbox.unmountSmallDisk(disk) }
        let models = try LoadModel.write(in: sandbox.directory.path)
        let path = disk + "/load.sqlite"
        try LoadModel.seed(at: path, models: models, rows: 5_000)
        // The shipped min_free_space (1GiB): not set here.
        try sandbox.loadStoreConfig(models: models, store: path, scheduler: ["idle_after: 1s", "load_window: 1s", "signals: requests,transactions,disk"])
            .write(toFile: sandbox.configPath, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(config: sandbox.configPath)
        defer { daemon.signal(SIGKILL) }
        try await waitForSocket(sandbox.adminSocket)

        // 1. Under 64 MiB free against 1024: the work holds, and says so.
        let held = try await ReplicationLagTests.eventually(.seconds(15)) {
            try await ReplicationLagTests.status(sandbox).scheduler.reason.contains("free space in \(disk) ")
        }
        let status = try await ReplicationLagTests.status(sandbox)
        #expect(held, "\(status.scheduler)\n\(daemon.log)")
        #expect(status.scheduler.reason.hasSuffix(" < 1024 MiB (store load)"), "\(status.scheduler.reason)")
        let signal = status.scheduler.signals?.first { $0.signal == "disk" }
        #expect(signal?.busy == true && (signal?.value ?? 100) < 64 && signal?.threshold == 1024, "\(String(describing: signal))")
        try await Task.sleep(for: .seconds(2))   // past idle_after: every other signal is quiet
        let before = try await ReplicationLagTests.rowsDone(sandbox)
        #expect(before.done == 0 && before.tasks > 0, "deferred work ran short of space: \(before)")
        #expect(await daemon.logContains("deferred work holds: too little free space for it to grow its files"), "\(daemon.log)")
        let metrics = try await VarlinkClient.withConnection(to: sandbox.adminSocket) { try await $0.call(StrataAdmin.Metrics.self) }.text
        #expect(metrics.contains("strata_scheduler_signal{signal=\"disk\",reading=\"free space in \(disk)\"}"), "\(metrics)")

        // 2. The operator lowers the bound at run time: the work goes on and finishes.
        let set = try await runCommandOffThread(Paths.stratactl, ["set", "min_free_space=8MiB", "--socket", sandbox.adminSocket])
        #expect(set.status == 0, "\(set.output)")
        let finished = try await ReplicationLagTests.eventually(.seconds(60)) { try await ReplicationLagTests.rowsDone(sandbox).tasks == 0 }
        let reason = try await ReplicationLagTests.status(sandbox).scheduler.reason
        #expect(finished, "\(reason)\n\(daemon.log)")
        await daemon.stop()
        #expect(try StoreFile.int(path, "SELECT count(*) FROM Item") == 5_000)
        #expect(try StoreFile.string(path, "PRAGMA integrity_check") == "ok")
    }
}
