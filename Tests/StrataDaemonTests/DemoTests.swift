import Foundation
import Synchronization
import Testing
@testable import StrataDaemon
import StrataVarlink

/// The demo of `make run` (README "Watch it work"), smaller: scripts/demo-seed.sh seeds the
/// store at Aircraft 1, stratad serves it with config/stratad.yaml itself (from a directory
/// holding `config` and `var`, as the checkout does), the migration at start leaves deferred
/// work, the scheduler picks it up, and `stratactl finish-deferred --wait` takes over and
/// finishes it. scripts/demo-client.py calls the data socket.
@Suite("make run: the demo", .serialized, .timeLimit(.minutes(3)))
struct DemoTests {
    static let rows = 6_000

    /// A directory like the checkout: `scripts` (a link to the package's), `config` (the
    /// package's models and a copy of its stratad.yaml that starts with the scheduler
    /// disabled), `var/`.
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
            // The shipped configuration, with one change: `enabled: false`, so that the
            // scheduler cannot start the work before the test has looked at the pending list
            // (idle_after 10 s can pass before that on a loaded machine); the test enables it
            // at run time when the README's story gets there.
            let shipped = try String(contentsOf: packageConfig.appendingPathComponent("stratad.yaml"), encoding: .utf8)
            let disabled = shipped.replacingOccurrences(of: "\n  enabled: true ", with: "\n  enabled: false")
            guard disabled != shipped else { throw DemoSetupError(reason: "config/stratad.yaml has no `  enabled: true` line under scheduler:") }
            try disabled.write(toFile: sandbox.path("config/stratad.yaml"), atomically: true, encoding: .utf8)
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
        let log = Pipe()
        daemon.standardError = log
        daemon.standardOutput = log
        let captured = Mutex(Data())
        log.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            captured.withLock { $0.append(data) }
        }
        try daemon.run()
        defer {
            if daemon.isRunning { daemon.terminate(); daemon.waitUntilExit() }
        }
        try await waitForSocket(demo.sandbox.path("var/run/admin.sock"))
        var daemonLog: String { String(decoding: captured.withLock { $0 }, as: UTF8.self) }

        // The migration at start left the cleanup pending.
        let pending = try demo.stratactl(["pending"])
        #expect(pending.status == 0)
        // (The shipped `backup: true`: the copy is the first task, taken online; nothing was
        // copied before the daemon was ready.)
        #expect(pending.output.contains("aircraft: 3 task(s) pending"), "\(pending.output)")
        #expect(pending.output.contains("#1 backup back up the store to ") && pending.output.contains("aircraft.sqlite.pre-migration-"), "\(pending.output)")
        #expect(pending.output.contains("rewrite table Aircraft: restore the declared column order [pending] 0/\(Self.rows) rows"), "\(pending.output)")
        #expect(daemonLog.contains("migrated store") && daemonLog.contains("strata.to=\"Aircraft 2\""), "\(daemonLog)")
        // The demo's scheduler: its own clients only, and soon.
        #expect(try demo.stratactl(["get", "signals"]).output.contains("requests,transactions"))
        #expect(try demo.stratactl(["get", "idle_after"]).output.contains("10s"))
        #expect(try demo.stratactl(["get", "enabled"]).output.contains("false"), "the test's copy of the configuration")

        // A client: its calls succeed (scripts/demo-client.py, stopped with Ctrl-C).
        let client = Process()
        client.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        client.arguments = ["scripts/demo-client.py", "var/run/data.sock", "50"]
        client.currentDirectoryURL = demo.sandbox.directory
        let clientOutput = Pipe()
        client.standardOutput = clientOutput
        client.standardError = clientOutput
        try client.run()
        try await Task.sleep(for: .seconds(1.5))
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
        // than the demo's 10 s + 10 s, for the test)…
        #expect(try demo.stratactl(["set", "idle_after=1s"]).status == 0)
        #expect(try demo.stratactl(["set", "load_window=1s"]).status == 0)
        #expect(try demo.stratactl(["set", "enabled=true"]).status == 0)
        var sawRunning = false
        for _ in 0..<400 {
            let status = try demo.stratactl(["status"]).output
            if status.contains("scheduler: running") { sawRunning = true; break }
            if status.contains("no deferred work pending") { break }
            try await Task.sleep(for: .milliseconds(25))
        }
        #expect(sawRunning, "the scheduler never ran the demo's work: \(daemonLog)")

        // …and `finish-deferred --wait` takes the store over and finishes it.
        let finish = try demo.stratactl(["finish-deferred", "--wait"])
        #expect(finish.status == 0, "\(finish.output)")
        #expect(finish.output.contains("aircraft: ") && finish.output.contains("0 remaining"), "\(finish.output)")
        #expect(!finish.output.contains("failed"), "\(finish.output)")
        #expect(try demo.stratactl(["pending"]).output.contains("aircraft: no deferred work pending"))
        #expect(!daemonLog.contains("error stratad"), "\(daemonLog)")
        let status = try demo.stratactl(["status", "--json"]).output
        let scheduler = (try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any])?["scheduler"] as? [String: Any]
        let stats = scheduler?["stats"] as? [String: Any]
        #expect(stats?["errors"] as? Int == 0, "\(status)")
        // (Its first batches may all be the backup's, counted in pages, not rows.)
        #expect((stats?["batches"] as? Int ?? 0) > 0, "the scheduler did part of the work: \(status)")
        let backups = try FileManager.default.contentsOfDirectory(atPath: demo.sandbox.path("var")).filter { $0.hasPrefix("aircraft.sqlite.pre-migration-") }
        #expect(backups.count == 1 && !backups[0].hasSuffix(".partial"), "the online backup was written: \(backups)")
    }
}

/// The demo directory could not be laid out as the test needs.
struct DemoSetupError: Error, CustomStringConvertible {
    let reason: String
    var description: String { "demo directory: \(reason)" }
}
