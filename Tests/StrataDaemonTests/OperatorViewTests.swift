import Foundation
@testable import Strata
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// What an operator sees while deferred work runs on request (issue 19): Ctrl-C on
/// `finish-deferred --wait` detaches and says so, a second `--wait` follows the run to its
/// end; `status`, `pending`, the metrics and the log tell the same story at every sample;
/// `set` reaches the run at its next batch; the two socket mistakes get errors that say what
/// to do.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct OperatorViewTests {
    static let rows = 40_000

    static func config(_ sandbox: DaemonSandbox, models: String) -> String {
        sandbox.loadStoreConfig(models: models, scheduler: ["enabled: false", "batch_budget: 2ms", "pause_between_batches: 300ms", "forced_pause_between_batches: 300ms",
                                                            "idle_batch_budget: 0s"])
    }

    /// `stratactl ARGS --socket ADMIN`.
    static func stratactl(_ sandbox: DaemonSandbox, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await runCommandOffThread(Paths.stratactl, arguments + ["--socket", sandbox.adminSocket])
    }

    /// One sample of everything that says what the daemon does, taken while a request runs.
    static func sampleAgrees(_ sandbox: DaemonSandbox, _ daemon: DaemonProcess, sample: Int) async throws {
        let status = try await stratactl(sandbox, ["status"]).output
        #expect(status.contains("scheduler: running — running: finishing deferred work on load on request"), "sample \(sample): \(status)")
        #expect(!status.contains("no deferred work pending"), "sample \(sample): \(status)")
        let pending = try await stratactl(sandbox, ["pending", "--json"]).output
        let stores = (try JSONSerialization.jsonObject(with: Data(pending.utf8)) as? [String: Any])?["stores"] as? [[String: Any]]
        let tasks = stores?.first?["tasks"] as? [[String: Any]] ?? []
        #expect(!tasks.isEmpty, "sample \(sample): \(pending)")
        for task in tasks {
            let fraction = task["fraction"] as? Double ?? -1
            let done = task["rowsDone"] as? Int ?? -1, total = task["rowsTotal"] as? Int ?? -1
            #expect(fraction >= 0 && fraction < 1 && done <= total, "sample \(sample): progress past the total: \(task)")
        }
        let metrics = try await stratactl(sandbox, ["metrics"]).output
        #expect(metrics.contains("strata_store_deferred_running{store=\"load\"} 2"), "sample \(sample): \(metrics)")
        #expect(!daemon.log.contains("no deferred work left to run"), "sample \(sample): \(daemon.log)")
    }

    @Test func ctrlCDetachesASecondWaitFollowsAndEverySourceAgrees() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        let models = try LoadModel.write(in: sandbox.directory.path)
        try LoadModel.seed(at: sandbox.path("load.sqlite"), models: models, rows: Self.rows)
        try Self.config(sandbox, models: models).write(toFile: sandbox.configPath, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(config: sandbox.configPath)
        try await waitForSocket(sandbox.adminSocket)

        // `finish-deferred --wait --now`, slowly paced; Ctrl-C once it has shown progress.
        let first = Process()
        first.executableURL = URL(fileURLWithPath: Paths.stratactl)
        first.arguments = ["finish-deferred", "load", "--wait", "--now", "--socket", sandbox.adminSocket]
        let output = PipeCapture()
        try output.run(first)
        var text: String { output.text }
        let deadline = ContinuousClock.now + .seconds(60)
        while text.components(separatedBy: "load task ").count < 3, ContinuousClock.now < deadline, first.isRunning {
            try await Task.sleep(for: .milliseconds(20))
        }
        try #require(text.components(separatedBy: "load task ").count >= 3, "no progress: \(text)\n\(daemon.log)")
        first.interrupt()
        first.waitUntilExit()
        #expect(first.terminationStatus == 130, "\(text)")
        #expect(text.contains("detached: the deferred work goes on in the daemon; `stratactl finish-deferred load --wait` follows it again"), "\(text)")

        // The work goes on; every source says a request runs it, and no progress passes 100%.
        for sample in 0..<3 {
            try await Self.sampleAgrees(sandbox, daemon, sample: sample)
            try await Task.sleep(for: .milliseconds(100))
        }
        // Without --wait, the error says how to follow it.
        let again = try await Self.stratactl(sandbox, ["finish-deferred", "load", "--now"])
        #expect(again.status == 1 && again.output.contains("finish-deferred --wait` follows it to the end"), "\(again.output)")

        // A second --wait follows the run to its end with the progress bar (no permission asked:
        // it runs). It starts while the run is still paced slowly, so it attaches to work in
        // flight whatever the machine's speed, and follows it through the changes below.
        async let follow = Self.stratactl(sandbox, ["finish-deferred", "load", "--wait"])
        #expect(await daemon.logContains("following deferred work already running on request"), "\(daemon.log)")

        // `set` and a reload reach the run at its next batch, and the log shows the new values.
        // (A forced run's cost delay is forced_pause_between_batches. A pause still long enough
        // that the run is in flight for the reload below, however fast the machine: the reload
        // then takes the pause to 0.)
        #expect(try await Self.stratactl(sandbox, ["set", "forced_pause_between_batches=250ms"]).status == 0)
        #expect(await daemon.logContains("strata.pause_ms=250.0 strata.previous_budget_ms=2.0 strata.previous_pause_ms=300.0"), "\(daemon.log)")
        try Self.config(sandbox, models: models).replacingOccurrences(of: "batch_budget: 2ms", with: "batch_budget: 40ms")
            .replacingOccurrences(of: "pause_between_batches: 300ms", with: "pause_between_batches: 0ms")
            .write(toFile: sandbox.configPath, atomically: true, encoding: .utf8)
        let reload = try await Self.stratactl(sandbox, ["reload"])
        #expect(reload.status == 0, "\(reload.output)")
        #expect(await daemon.logContains("strata.budget_ms=40.0"), "\(daemon.log)")
        #expect(daemon.log.contains("deferred work in flight takes new pacing from its next batch"), "\(daemon.log)")

        let followed = try await follow
        #expect(followed.status == 0, "\(followed.output)\n\(daemon.log)")
        #expect(followed.output.contains("load: ") && followed.output.contains("1 remaining") && followed.output.contains("the change is complete"), "\(followed.output)")
        #expect(daemon.log.contains("following deferred work already running on request"), "\(daemon.log)")
        let percents = followed.output.split(separator: "\n").compactMap { line -> Int? in
            guard let close = line.firstIndex(of: "]") else { return nil }
            return Int(line[line.index(after: close)...].drop { $0 == " " }.prefix { $0.isNumber })
        }
        #expect(percents.allSatisfy { $0 <= 100 }, "\(followed.output)")
        // Left for the scheduler's idle turn: the vacuum alone.
        let left = try await Self.stratactl(sandbox, ["pending"]).output
        #expect(left.contains("load: no deferred work pending") || (left.contains("load: 1 task(s) pending") && left.contains("incrementalVacuum")), "\(left)")
        let done = try await Self.stratactl(sandbox, ["status"]).output
        #expect(done.contains("no deferred work pending") || !done.contains("running"), "\(done)")
        await daemon.stop()
    }

    /// A scheduled run: every sample of status, pending and the metrics says a scheduler turn
    /// runs; a store alone keeps its turn past `store_turn` (no "paused deferred task" line
    /// per turn), and the log ends with "no deferred work left to run".
    @Test func aScheduledRunTellsOneStoryAndAStoreAloneKeepsItsTurn() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        let models = try LoadModel.write(in: sandbox.directory.path)
        try LoadModel.seed(at: sandbox.path("load.sqlite"), models: models, rows: Self.rows)
        let config = Self.config(sandbox, models: models)
            .replacingOccurrences(of: "  enabled: false\n", with: """
                  enabled: true
                  idle_after: 0s
                  signals: requests
                  store_turn: 100ms

                """)
            // Short pauses: the old table's drop goes in batches of one 2 ms budget each (about
            // 2,400 of them in a debug build), and the test only needs the run to last a few samples.
            .replacingOccurrences(of: "pause_between_batches: 300ms", with: "pause_between_batches: 5ms")
        try config.write(toFile: sandbox.configPath, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(config: sandbox.configPath)
        try await waitForSocket(sandbox.adminSocket)

        var samples = 0
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            let status = try await Self.stratactl(sandbox, ["status"]).output
            let pending = try await Self.stratactl(sandbox, ["pending"]).output
            if pending.contains("load: no deferred work pending") { break }
            guard status.contains("scheduler: running — running: deferred work on load") else {
                try await Task.sleep(for: .milliseconds(20))
                continue
            }
            let metrics = try await Self.stratactl(sandbox, ["metrics"]).output
            let still = try await Self.stratactl(sandbox, ["pending"]).output
            // (The turn may end between two reads: then the work is done.)
            if !still.contains("no deferred work pending") {
                #expect(metrics.contains("strata_store_deferred_running{store=\"load\"} 1"), "\(metrics)")
                #expect(!status.contains("no deferred work pending"), "\(status)")
                samples += 1
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(samples >= 2, "status never showed the scheduler's turn twice: \(daemon.log)")
        #expect(await daemon.logContains("no deferred work left to run", within: .seconds(60)), "\(daemon.log)")
        #expect(try await Self.stratactl(sandbox, ["pending"]).output.contains("load: no deferred work pending"))
        #expect(!daemon.log.contains("paused deferred task"), "a store alone lost its turn every store_turn: \(daemon.log)")
        #expect(daemon.log.contains("finished deferred task"), "\(daemon.log)")
        await daemon.stop()
    }

    @Test func socketMistakesSayWhatHappenedAndWhatToDo() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        try sandbox.writeConfig()
        let daemon = try DaemonProcess(config: sandbox.configPath)
        try await waitForSocket(sandbox.adminSocket)

        let empty = try await runCommandOffThread(Paths.stratactl, ["status"], environment: ["STRATA_ADMIN_SOCKET": ""])
        #expect(empty.status == 2, "\(empty.output)")
        #expect(empty.output.contains("STRATA_ADMIN_SOCKET is set but empty") && empty.output.contains("Unset STRATA_ADMIN_SOCKET"), "\(empty.output)")
        #expect(!empty.output.contains("cannot connect to :"), "\(empty.output)")

        let data = try await runCommandOffThread(Paths.stratactl, ["status", "--socket", sandbox.dataSocket])
        #expect(data.status == 2, "\(data.output)")
        #expect(data.output.contains("does not serve io.strata.Admin") && data.output.contains("the data socket serves io.strata.Store only")
                && data.output.contains("Point --socket or STRATA_ADMIN_SOCKET at the admin socket"), "\(data.output)")
        await daemon.stop()
    }

    @Test("progress shown never passes 100% nor reaches it before the task is done")
    func shownProgress() {
        var task = DeferredTask(id: 1, kind: .rewriteTable, table: "Aircraft", summary: "rewrite", state: .running, rowsDone: 201_153, rowsTotal: 200_000, createdAt: Date())
        var shown = ShownProgress(task)
        #expect(shown.done == 201_153 && shown.total == 201_153 && shown.fraction == 0.99)
        task.state = .done
        shown = ShownProgress(task)
        #expect(shown.fraction == 1)
        task = DeferredTask(id: 2, kind: .incrementalVacuum, table: nil, summary: "vacuum", state: .pending, rowsDone: 0, rowsTotal: 0, createdAt: Date())
        #expect(ShownProgress(task).fraction == 0)
    }
}
