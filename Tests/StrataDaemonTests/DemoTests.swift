import Foundation
import Synchronization
import Testing
@testable import StrataDaemon
import StrataVarlink

/// The demo of `make run` (README "Watch it work"), smaller: scripts/demo-seed.sh seeds the
/// store at Aircraft 1, stratad serves it with config/stratad.yaml itself (from a directory
/// holding `config` and `var`, as the checkout does), the migration at start leaves deferred
/// work, the scheduler picks it up, and `stratactl finish-deferred --wait` takes over and
/// finishes it. scripts/demo-client.py calls the data socket. Every `stratactl` command of
/// README.md's console blocks runs here in the same story, and every line the README shows for
/// it must be in its real output (``ReadmeConsole``: numbers, times and the bar may differ).
@Suite("make run: the demo", .serialized, .timeLimit(.minutes(5)))
struct DemoTests {
    static let rows = 6_000

    /// A directory like the checkout: `scripts` (a link to the package's), `config` (the
    /// package's models and a copy of its stratad.yaml whose scheduler waits an hour of quiet),
    /// `var/`.
    struct DemoDirectory {
        let sandbox: DaemonSandbox
        var path: String { sandbox.directory.path }

        init() throws {
            sandbox = try DaemonSandbox()
            let fm = FileManager.default
            let packageConfig = Paths.packageRoot.appendingPathComponent("config")
            try fm.createSymbolicLink(atPath: sandbox.path("scripts"), withDestinationPath: Paths.packageRoot.appendingPathComponent("scripts").path)
            try fm.createDirectory(atPath: sandbox.path("config"), withIntermediateDirectories: true)
            try fm.createSymbolicLink(atPath: sandbox.path("config/models"), withDestinationPath: packageConfig.appendingPathComponent("models").path)
            // The shipped configuration, with one change: `idle_after: 1h`, so that the
            // scheduler cannot start the work before the test has looked at the pending list
            // (idle_after 10 s can pass before that on a loaded machine); the test sets it at
            // run time when the README's story gets there.
            let shipped = try String(contentsOf: packageConfig.appendingPathComponent("stratad.yaml"), encoding: .utf8)
            let waiting = shipped.replacingOccurrences(of: #"\n  idle_after: [0-9a-z]+ "#, with: "\n  idle_after: 1h ", options: .regularExpression)
            guard waiting != shipped else { throw DemoSetupError(reason: "config/stratad.yaml has no `  idle_after: …` line under scheduler:") }
            try waiting.write(toFile: sandbox.path("config/stratad.yaml"), atomically: true, encoding: .utf8)
            try fm.createDirectory(atPath: sandbox.path("var/run"), withIntermediateDirectories: true)
        }

        /// Runs a command from the directory, as the Makefile and the README do.
        func run(_ command: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
            try runCommand("/bin/sh", ["-c", "cd \"$0\" && exec \"$@\"", path, command] + arguments)
        }

        func stratactl(_ arguments: [String]) throws -> (status: Int32, output: String) {
            try run(Paths.stratactl, arguments + ["--socket", "var/run/admin.sock"])
        }
    }

    /// The outputs of the README's commands, by command and occurrence.
    final class Console {
        private(set) var outputs: [ReadmeConsole.Key: String] = [:]
        private var seen: [String: Int] = [:]

        /// Records `output` as the next occurrence of `command` (as the README types it).
        func record(_ command: String, _ output: String) {
            seen[command, default: 0] += 1
            outputs[ReadmeConsole.Key(command: command, occurrence: seen[command]!)] = output
        }
    }

    @Test func seedOpenSchedulerAndFinish() async throws {
        let demo = try DemoDirectory()
        defer { demo.sandbox.remove() }
        let seed = try demo.run("scripts/demo-seed.sh", ["var/aircraft.sqlite", "\(Self.rows)", Paths.stratactl])
        #expect(seed.status == 0 && seed.output.contains("var/aircraft.sqlite ready"), "\(seed.output)")
        let inspect = try demo.run(Paths.stratactl, ["inspect", "var/aircraft.sqlite"])
        #expect(inspect.output.contains("Model       Aircraft 1") && inspect.output.contains(" \(Self.rows)\n"), "\(inspect.output)")
        let again = try demo.run("scripts/demo-seed.sh", ["var/aircraft.sqlite", "5", Paths.stratactl])
        #expect(again.status == 0 && again.output.isEmpty, "a second run leaves the store alone: \(again.output)")

        // `make run`: stratad on config/stratad.yaml, from the directory.
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: Paths.stratad)
        daemon.arguments = ["--config", "config/stratad.yaml"]
        daemon.currentDirectoryURL = demo.sandbox.directory
        let log = PipeCapture()
        try log.run(daemon)
        defer {
            if daemon.isRunning { daemon.terminate(); daemon.waitUntilExit() }
        }
        try await waitForSocket(demo.sandbox.path("var/run/admin.sock"))
        var daemonLog: String { log.text }

        // The migration at start left the cleanup pending.
        let console = Console()
        let pending = try demo.stratactl(["pending"])
        #expect(pending.status == 0)
        console.record("stratactl pending", pending.output)
        // (The shipped `backup: true`: the copy is the first task, taken online; nothing was
        // copied before the daemon was ready.)
        #expect(pending.output.contains("aircraft: 3 task(s) pending"), "\(pending.output)")
        #expect(pending.output.contains("#1 backup back up the store to ") && pending.output.contains("aircraft.sqlite.pre-migration-"), "\(pending.output)")
        #expect(pending.output.contains("rewrite table Aircraft: restore the declared column order [pending] 0/\(Self.rows) rows"), "\(pending.output)")
        #expect(daemonLog.contains("migrated store") && daemonLog.contains("strata.to=\"Aircraft 2\""), "\(daemonLog)")
        // The demo's scheduler: its own clients only, and soon.
        #expect(try demo.stratactl(["get", "signals"]).output.contains("requests,transactions"))
        #expect(try demo.stratactl(["get", "idle_after"]).output.contains("1h"), "the test's copy of the configuration")

        // A client: its calls succeed (scripts/demo-client.py, stopped with Ctrl-C).
        let client = Process()
        client.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        client.arguments = ["scripts/demo-client.py", "var/run/data.sock"]
        client.currentDirectoryURL = demo.sandbox.directory
        let clientOutput = Pipe()
        client.standardOutput = clientOutput
        client.standardError = clientOutput
        try client.run()
        // `stratactl status` while it runs: the scheduler waits, and says why.
        var busy = ""
        for _ in 0..<200 {
            busy = try demo.stratactl(["status"]).output
            if busy.contains("scheduler: waiting — waiting: daemon requests") { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        console.record("stratactl status", busy)
        try await Task.sleep(for: .seconds(0.5))
        client.interrupt()
        for _ in 0..<200 where client.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        if client.isRunning {
            Issue.record("demo-client.py did not stop on SIGINT")
            kill(client.processIdentifier, SIGKILL)
        }
        client.waitUntilExit()
        let clientText = String(decoding: clientOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(client.terminationStatus == 0 && clientText.contains("demo-client: stopped"), "\(clientText)")
        let count = try await VarlinkClient.withConnection(to: demo.sandbox.path("var/run/data.sock")) {
            try await $0.call("io.strata.Store.Count", ["store": "aircraft", "entity": "Aircraft", "predicate": "tailNumber BEGINSWITH 'D-'"])
        }
        #expect((count["count"]?.intValue ?? 0) > 0, "the client inserted aircraft: \(count)")

        // The scheduler picks the work up once the client's calls are out of its window (sooner
        // than the demo's 10 s + 10 s, for the test), and `status` and `pending` show the
        // rewrite running (the backup, the first task, done).
        // (Slower than the demo, so that the test sees each step on a loaded machine.)
        #expect(try demo.stratactl(["set", "pause_between_batches=500ms"]).status == 0)
        // Small batches too: the rewrite (a copy and its check, its indexes carried over) must
        // still be running when `finish-deferred --wait` attaches on a loaded machine.
        #expect(try demo.stratactl(["set", "batch_budget=1ms"]).status == 0)
        #expect(try demo.stratactl(["set", "idle_after=1s"]).status == 0)
        #expect(try demo.stratactl(["set", "load_window=1s"]).status == 0)
        var sawRunning = false
        for _ in 0..<2000 {
            let status = try demo.stratactl(["status"]).output
            let running = try demo.stratactl(["pending"]).output
            if status.contains("scheduler: running"), running.contains("rewriteTable"), running.contains("[running]"), !running.contains("backup") {
                console.record("stratactl status", status)
                console.record("stratactl pending", running)
                sawRunning = true
                break
            }
            if status.contains("no deferred work pending") { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(sawRunning, "the scheduler never ran the demo's rewrite: \(daemonLog)")
        // The metrics and the log tell the same: a scheduler turn runs.
        #expect(try demo.stratactl(["metrics"]).output.contains("strata_store_deferred_running{store=\"aircraft\"} 1"))
        #expect(daemonLog.contains("machine idle: starting deferred work") && !daemonLog.contains("no deferred work left to run"), "\(daemonLog)")

        // …and `finish-deferred --wait` takes the store over from the scheduler's turn and
        // finishes it; the rest at full speed (the demo's batch budget, no cost delay): `set`
        // reaches the running work at its next batch.
        let finishing = Task.detached { try demo.stratactl(["finish-deferred", "--wait"]) }
        for _ in 0..<2000 where !daemonLog.contains("deferred work on aircraft handed over to a request") {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(daemonLog.contains("deferred work on aircraft handed over to a request"), "\(daemonLog)")
        #expect(try demo.stratactl(["set", "pause_between_batches=0ms"]).status == 0)
        let finish = try await finishing.value
        #expect(finish.status == 0, "\(finish.output)")
        #expect(daemonLog.contains("deferred work in flight takes new pacing from its next batch"), "\(daemonLog)")
        console.record("stratactl finish-deferred --wait", finish.output)
        // The change is complete; the vacuum is left to the scheduler's next idle turn.
        #expect(finish.output.contains("aircraft: ") && finish.output.contains("1 remaining") && finish.output.contains("the change is complete"), "\(finish.output)")
        #expect(!finish.output.contains("failed"), "\(finish.output)")
        var pendingAfter = try demo.stratactl(["pending"]).output
        for _ in 0..<600 where !pendingAfter.contains("aircraft: no deferred work pending") {
            try await Task.sleep(for: .milliseconds(100))
            pendingAfter = try demo.stratactl(["pending"]).output
        }
        #expect(pendingAfter.contains("aircraft: no deferred work pending"), "the scheduler's idle turn did not give the pages back: \(pendingAfter)\n\(daemonLog)")
        console.record("stratactl pending", pendingAfter)
        #expect(!daemonLog.contains("error stratad"), "\(daemonLog)")
        let status = try demo.stratactl(["status", "--json"]).output
        let scheduler = (try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any])?["scheduler"] as? [String: Any]
        let stats = scheduler?["stats"] as? [String: Any]
        #expect(stats?["errors"] as? Int == 0, "\(status)")
        // (Its first batches may all be the backup's, counted in pages, not rows.)
        #expect((stats?["batches"] as? Int ?? 0) > 0, "the scheduler did part of the work: \(status)")
        let backups = try FileManager.default.contentsOfDirectory(atPath: demo.sandbox.path("var")).filter { $0.hasPrefix("aircraft.sqlite.pre-migration-") }
        #expect(backups.count == 1 && !backups[0].hasSuffix(".partial"), "the online backup was written: \(backups)")
        console.record("stratactl inspect var/aircraft.sqlite", try demo.run(Paths.stratactl, ["inspect", "var/aircraft.sqlite"]).output)

        // README.md's console blocks: every documented line is in the real output.
        let readme = try ReadmeConsole()
        #expect(readme.stratactl.count >= 6, "README.md's console blocks: \(readme.commands)")
        for (key, lines) in readme.stratactl {
            guard let output = console.outputs[key] else {
                Issue.record("README.md runs \(key), the demo test does not")
                continue
            }
            let missing = ReadmeConsole.missing(lines, in: output, directory: demo.sandbox.directory.path)
            #expect(missing.isEmpty, "README.md shows lines for \(key) that the real run does not print:\n\(missing.joined(separator: "\n"))\n--- real output:\n\(output)")
        }
        // The daemon's log lines the README quotes.
        for quoted in ReadmeConsole.quotedLogLines() {
            let real = daemonLog.components(separatedBy: "\n").map { ReadmeConsole.normalized($0) }
            #expect(real.contains { $0.contains(ReadmeConsole.normalized(quoted)) }, "README.md quotes `\(quoted)`, the daemon's log has no such line\n\(daemonLog)")
        }
    }
}

/// The demo directory could not be laid out as the test needs.
struct DemoSetupError: Error, CustomStringConvertible {
    let reason: String
    var description: String { "demo directory: \(reason)" }
}
