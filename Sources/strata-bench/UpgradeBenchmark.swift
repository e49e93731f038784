import ArgumentParser
import Foundation
import Logging
import Strata
import StrataDaemon
import StrataVarlink

/// `strata-bench upgrade`: a deploy of a new model version through the real daemon — exec to
/// `READY=1` with and without deferral and with the shipped defaults (backup included), then
/// finishing the deferred work with `FinishDeferred` while Varlink clients write, against the
/// sqlite3 CLI making the same changes under the live daemon.
struct UpgradeBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upgrade",
        abstract: "A model upgrade through the real stratad: time to READY=1, finishing with clients writing, vs the sqlite3 CLI.",
        discussion: """
            One seed store of --rows items at version Bench 1 (about 250 bytes a row; cached with \
            --seed-cache) is copied for each run of the release `stratad` (next to this binary, or \
            --stratad), spawned with a NOTIFY_SOCKET this benchmark reads. Version Bench 2 removes two \
            attributes, adds an index and turns an ordered to-many unordered.

              deferred  defer_cleanup: true, backup: false  ready_deferred_ms; clients idle; then
                        FinishDeferred(now, wait) with the clients writing: finish_ms (the change;
                        the vacuum is left to the scheduler's idle turns), then FinishDeferred(reclaim)
                        with the clients still writing: reclaim_ms; verification
              default   the shipped store defaults (defer_cleanup: true, backup: true) and scheduler:
                        ready_default_ms; FinishDeferred with clients: finish_default_ms, backup_ms
              sync      defer_cleanup: false, backup: false: ready_sync_ms
              cli       deferral on, then the sqlite3 CLI runs ALTER TABLE … DROP COLUMN ×3 and CREATE INDEX \
            under the live daemon with the clients writing: sqlite_cli_ms
              idle      nobody writing: FinishDeferred(now, wait) right after READY=1, with \
            --idle-batch-budget: finish_idle_ms (the change), then FinishDeferred(reclaim): \
            reclaim_idle_ms (the vacuum); per-task times and rows (row_writes_per_row), the \
            longest write-lock hold per step, stratad's write_bytes and the file size after each
              cli_idle  nobody writing, no daemon: the same sqlite3 CLI change: sqlite_cli_idle_ms
              manual    nobody writing, no daemon: the change by hand in one transaction (new table, \
            INSERT … SELECT, drop, rename, indexes): manual_rewrite_ms, the floor

            --distinct-keys sets the distinct values of the new index's column (rank; default 1,000).

            --clients clients each update a random row of their own every --interval-ms over the \
            data socket (one connection each). Latency is measured per request, round trip. \
            Verification after finishing: the row count, every acknowledged write present, \
            integrity_check, and the schema equal to a fresh Bench 2 store.
            """
    )

    @Option(name: .long, help: "Items in the store.") var rows = 1_000_000
    @Option(name: .long, help: "Concurrent Varlink clients.") var clients = 4
    @Option(name: .customLong("interval-ms"), help: "Pause between a client's updates, in milliseconds.") var interval = 5
    @Option(name: .customLong("idle-s"), help: "How long to measure client latency with nothing running.") var idleSeconds = 3.0
    @Option(name: .long, help: "The stratad executable (default: next to this binary).") var stratad: String?
    @Option(name: .customLong("seed-cache"), help: "Directory where seed stores are kept between runs (default: none, seed every run).")
    var seedCache: String?
    @Option(name: .long, help: "Runs to make, comma-separated: deferred, default, sync, cli, idle, cli_idle, manual.") var runs = "deferred,default,sync,cli"
    @Option(name: .customLong("distinct-keys"), help: "Distinct values of the new index's column (rank).") var distinctKeys = 1000
    @Flag(name: .long, help: "Print the slowest client requests of each phase with their start time (to stderr), to match with the daemon's log.") var trace = false
    @Option(name: .customLong("batch-budget"), help: "scheduler.batch_budget of the deferred run (default: the shipped 5ms).") var batchBudget: String?
    @Option(name: .customLong("pause"), help: "scheduler.forced_pause_between_batches: the cost delay of the deferred run, which `finish-deferred --now` forces (default: the shipped 0s).") var pauseBetweenBatches: String?
    @Option(name: .customLong("idle-batch-budget"), help: "scheduler.idle_batch_budget of the deferred and idle runs (default: the shipped 250ms; 0s: off).")
    var idleBatchBudget: String?
    @Option(name: .customLong("busy-core"), help: "Keep one core busy for this share of the time (a CPU hog process, 1-100 %) for the whole run: the daemon, its clients and the sqlite3 CLI meet it alike.")
    var busyCore: Int?
    @OptionGroup var options: BenchOptions

    static let allRuns = ["deferred", "default", "sync", "cli", "idle", "cli_idle", "manual"]

    func validate() throws {
        guard rows >= 1000 else { throw ValidationError("--rows must be at least 1000") }
        guard distinctKeys >= 1, distinctKeys <= rows else { throw ValidationError("--distinct-keys must be between 1 and --rows") }
        guard clients > 0, interval >= 0, idleSeconds > 0 else { throw ValidationError("--clients, --interval-ms and --idle-s must be positive") }
        for run in runs.split(separator: ",") where !Self.allRuns.contains(String(run)) {
            throw ValidationError("--runs: unknown run '\(run)'; choose from \(Self.allRuns.joined(separator: ", "))")
        }
        if let busyCore, !(1...100).contains(busyCore) { throw ValidationError("--busy-core must be between 1 and 100 (percent of one core)") }
        for (name, value) in [("--batch-budget", batchBudget), ("--pause", pauseBetweenBatches), ("--idle-batch-budget", idleBatchBudget)] {
            if let value, DurationText.parse(value) == nil { throw ValidationError("\(name): '\(value)' is not a duration (e.g. 20ms)") }
        }
    }

    /// The scheduler settings of the deferred and idle runs that differ from the shipped ones.
    var schedulerOverrides: [String: String] {
        ["batch_budget": batchBudget, "forced_pause_between_batches": pauseBetweenBatches, "idle_batch_budget": idleBatchBudget].compactMapValues { $0 }
    }

    func run() async throws {
        let selected = Set(runs.split(separator: ",").map(String.init))
        let hog = try busyCore.map { try BusyCoreCommand.start(percent: $0) }
        defer { hog?.terminate(); hog?.waitUntilExit() }
        let directory = try BenchDirectory(path: options.directory, keep: options.keep)
        defer { directory.cleanUp() }
        let progress = Progress(enabled: !options.json)
        let executable = try Self.stratadExecutable(stratad)
        var logger = Logger(label: "io.strata.bench")
        logger.logLevel = .warning
        let loadStart = Self.loadAverage()

        let models = try Self.writeModels(in: directory.url)
        let seed = try UpgradeSeed.prepare(rows: rows, distinctKeys: distinctKeys, cache: seedCache.map { URL(filePath: $0) }, directory: directory.url, logger: logger, progress: progress)
        let sizeMB = Double((try FileManager.default.attributesOfItem(atPath: seed.path)[.size] as? NSNumber)?.intValue ?? 0) / 1_048_576
        let sockets = URL(filePath: "/tmp/sbu-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: sockets, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: sockets) }
        let launcher = Launcher(executable: executable, directory: directory.url, sockets: sockets, models: models)
        var results = UpgradeResults(rows: rows, clients: clients, interval: interval, storeMB: sizeMB, loadStart: loadStart)
        results.batchBudget = batchBudget ?? "5ms"
        results.pause = pauseBetweenBatches ?? "0s"
        results.distinctKeys = distinctKeys
        results.idleBatchBudget = idleBatchBudget ?? "250ms"
        results.busyCore = busyCore

        if selected.contains("deferred") {
            progress.say("deferred: exec → READY=1 with defer_cleanup, no backup…")
            let store = try DeferralBenchmark.copy(seed, to: directory.url.appending(path: "deferred.sqlite"))
            let daemon = try launcher.launch("deferred", store: store, deferCleanup: true, backup: false,
                                             scheduler: schedulerOverrides)
            results.readyDeferred = daemon.ready
            let load = UpgradeClients(socket: launcher.dataSocket, count: clients, rows: rows, interval: .milliseconds(interval))
            load.start()
            load.set(.idle)
            progress.say("deferred: clients idle for \(idleSeconds) s…")
            try await Task.sleep(for: .milliseconds(Int64(idleSeconds * 1000)))
            progress.say("deferred: FinishDeferred with \(clients) clients writing…")
            load.set(.finish)
            let finish = try await launcher.finishDeferred()
            results.finish = finish.elapsed
            // The vacuum FinishDeferred leaves to the scheduler's idle turns, asked for at once
            // (the scheduler is off here), the clients still writing.
            progress.say("deferred: FinishDeferred(reclaim) with \(clients) clients writing…")
            load.set(.reclaim)
            results.reclaim = try await launcher.finishDeferred(reclaim: true).elapsed
            load.set(.other)
            await load.stop()
            results.duringReclaim = load.results(.reclaim)
            results.finishTasks = Self.taskBreakdowns(daemon.log)
            results.finishTimeSpent = Self.timeSpent(daemon.log).first
            results.verifyTimes = Self.verifyTimes(daemon.log)
            results.lockHolds = Self.lockHolds(daemon.log)
            results.clientWaits = Self.lockHolds(daemon.log, key: "waits_ms")
            results.finishBatches = Self.batchCounts(daemon.log)
            results.rssFinish = daemon.peakRSSMegabytes
            results.idle = load.results(.idle)
            results.duringFinish = load.results(.finish)
            daemon.stop()
            progress.say("deferred: verifying…")
            results.verification = try UpgradeVerification.verify(store, rows: rows, acknowledged: load.acknowledgedValues(), directory: directory.url)
            try Self.remove(store)
        }
        if selected.contains("default") {
            progress.say("default: exec → READY=1 with the shipped defaults (backup: true)…")
            let store = try DeferralBenchmark.copy(seed, to: directory.url.appending(path: "default.sqlite"))
            let daemon = try launcher.launch("default", store: store, deferCleanup: true, backup: true, shippedScheduler: true)
            results.readyDefault = daemon.ready
            let pending = try await launcher.pendingKinds()
            results.backupPendingFirst = pending.first == "backup"
            let load = UpgradeClients(socket: launcher.dataSocket, count: clients, rows: rows, interval: .milliseconds(interval))
            load.start()
            progress.say("default: FinishDeferred (backup first) with \(clients) clients writing…")
            let finish = try await Self.finish(launcher, while: load, recordedAs: .finishDefault)
            results.finishDefault = finish.elapsed
            results.backup = finish.firstTask
            results.rssDefault = daemon.peakRSSMegabytes
            results.duringFinishDefault = load.results(.finishDefault)
            daemon.stop()
            results.backupCheck = try UpgradeVerification.verifyBackup(of: store, rows: rows)
            try Self.remove(store)
        }
        if selected.contains("sync") {
            progress.say("sync: exec → READY=1 with defer_cleanup: false (the cleanup runs before READY)…")
            let store = try DeferralBenchmark.copy(seed, to: directory.url.appending(path: "sync.sqlite"))
            let daemon = try launcher.launch("sync", store: store, deferCleanup: false, backup: false)
            results.readySync = daemon.ready
            daemon.stop()
            try Self.remove(store)
        }
        if selected.contains("cli") {
            progress.say("cli: the sqlite3 CLI under the live daemon, clients writing…")
            let store = try DeferralBenchmark.copy(seed, to: directory.url.appending(path: "cli.sqlite"))
            let daemon = try launcher.launch("cli", store: store, deferCleanup: true, backup: false)
            let load = UpgradeClients(socket: launcher.dataSocket, count: clients, rows: rows, interval: .milliseconds(interval))
            load.start()
            load.set(.other)
            try await Task.sleep(for: .milliseconds(300))
            load.set(.cli)
            let started = ContinuousClock.now
            try DeferralBenchmark.runSQLiteCLI(store, sql: """
                ALTER TABLE "Item" DROP COLUMN "legacyNote";
                ALTER TABLE "Item" DROP COLUMN "legacyScore";
                ALTER TABLE "Item" DROP COLUMN "owner_order";
                CREATE INDEX "Item_byRank" ON "Item" ("rank");
                """)
            results.cli = ContinuousClock.now - started
            load.set(.other)
            await load.stop()
            results.duringCLI = load.results(.cli)
            daemon.stop()
            try Self.remove(store)
        }
        if !selected.isDisjoint(with: ["idle", "cli_idle", "manual"]) {
            results.idleRuns = try await runIdle(selected, seed: seed, launcher: launcher, directory: directory.url, progress: progress)
        }
        results.loadEnd = Self.loadAverage()
        if trace {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            for (name, figures) in [("finish", results.duringFinish), ("finish_default", results.duringFinishDefault)] {
                guard let figures else { continue }
                let lines = figures.slowest.sorted { $0.ms > $1.ms }.prefix(15).map { String(format: "  %8.1f ms at ", $0.ms) + formatter.string(from: $0.at) }
                FileHandle.standardError.write(Data("strata-bench: slowest requests during \(name):\n\(lines.joined(separator: "\n"))\n".utf8))
            }
        }
        if options.json {
            print(results.json)
        } else {
            print(results.text)
        }
    }

    /// The runs with nobody writing (see ``UpgradeIdleFigures``).
    func runIdle(_ selected: Set<String>, seed: URL, launcher: Launcher, directory: URL, progress: Progress) async throws -> UpgradeIdleFigures {
        var figures = UpgradeIdleFigures()
        if selected.contains("idle") {
            progress.say("idle: FinishDeferred with nobody writing…")
            let store = try DeferralBenchmark.copy(seed, to: directory.appending(path: "idle.sqlite"))
            let daemon = try launcher.launch("idle", store: store, deferCleanup: true, backup: false,
                                             scheduler: schedulerOverrides)
            let before = UpgradeIdleFigures.writtenMB(pid: daemon.pid) ?? 0
            let finish = try await launcher.finishDeferred()
            figures.finish = finish.elapsed
            figures.finishWrittenMB = UpgradeIdleFigures.writtenMB(pid: daemon.pid).map { $0 - before }
            figures.changeFileMB = UpgradeIdleFigures.fileMB(store)
            progress.say("idle: FinishDeferred(reclaim): the vacuum it left…")
            let beforeReclaim = UpgradeIdleFigures.writtenMB(pid: daemon.pid) ?? 0
            figures.reclaim = try await launcher.finishDeferred(reclaim: true).elapsed
            figures.reclaimWrittenMB = UpgradeIdleFigures.writtenMB(pid: daemon.pid).map { $0 - beforeReclaim }
            figures.finishTasks = UpgradeIdleFigures.tasks(daemon.log)
            figures.finishLockHolds = Self.lockHolds(daemon.log)
            figures.finishClientWaits = Self.lockHolds(daemon.log, key: "waits_ms")
            daemon.stop()
            figures.finishFileMB = UpgradeIdleFigures.fileMB(store)
            try Self.remove(store)
        }
        for (run, sql) in [("cli_idle", Self.cliSQL), ("manual", selected.contains("manual") ? try UpgradeIdleFigures.manualRewriteSQL(in: directory) : "")]
        where selected.contains(run) {
            progress.say("\(run): the change by the sqlite3 CLI with nobody writing…")
            let store = try DeferralBenchmark.copy(seed, to: directory.appending(path: "\(run).sqlite"))
            // Opened (and migrated to Bench 2 with deferral) by no one: the CLI sees Bench 1's tables.
            let before = UpgradeIdleFigures.childrenWrittenMB()
            let started = ContinuousClock.now
            try DeferralBenchmark.runSQLiteCLI(store, sql: sql)
            let took = ContinuousClock.now - started
            let written = UpgradeIdleFigures.childrenWrittenMB() - before
            if run == "manual" {
                (figures.manual, figures.manualWrittenMB, figures.manualFileMB) = (took, written, UpgradeIdleFigures.fileMB(store))
            } else {
                (figures.cli, figures.cliWrittenMB, figures.cliFileMB) = (took, written, UpgradeIdleFigures.fileMB(store))
            }
            try Self.remove(store)
        }
        return figures
    }

    static let cliSQL = """
        ALTER TABLE "Item" DROP COLUMN "legacyNote";
        ALTER TABLE "Item" DROP COLUMN "legacyScore";
        ALTER TABLE "Item" DROP COLUMN "owner_order";
        CREATE INDEX "Item_byRank" ON "Item" ("rank");
        """

    // MARK: - Helpers

    static func stratadExecutable(_ path: String?) throws -> URL {
        let candidate: URL
        if let path {
            candidate = URL(filePath: path)
        } else {
            let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")).map { URL(filePath: $0) }
                ?? URL(filePath: CommandLine.arguments[0])
            candidate = me.deletingLastPathComponent().appending(path: "stratad")
        }
        guard FileManager.default.isExecutableFile(atPath: candidate.path) else {
            throw BenchError("no stratad at \(candidate.path): build it (swift build -c release --product stratad) or pass --stratad PATH")
        }
        return candidate
    }

    static func writeModels(in directory: URL) throws -> URL {
        let models = directory.appending(path: "models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        try ModelFile.encode(DeferralBenchmark.v1, format: .yaml).write(to: models.appending(path: "Bench 1.yaml"))
        try ModelFile.encode(DeferralBenchmark.v2, format: .yaml).write(to: models.appending(path: "Bench 2.yaml"))
        try "current: Bench 2\nversions:\n  - Bench 1.yaml\n  - Bench 2.yaml\n".write(to: models.appending(path: "versions.yaml"), atomically: true, encoding: .utf8)
        return models
    }

    /// The daemon log's per-task times ("finished deferred task #N: summary … strata.ms=…").
    static func taskTimes(_ log: String) -> [(summary: String, ms: Double)] {
        taskBreakdowns(log).map { ($0.summary, $0.ms) }
    }

    /// Each finished task's time and where it went (the task's log line: `held`, `writer_wait`,
    /// `paused`, `core_wait`, in ms), in the order of the log.
    static func taskBreakdowns(_ log: String) -> [(summary: String, ms: Double, spent: [String: Double])] {
        log.split(separator: "\n").compactMap { line in
            guard let start = line.range(of: "finished deferred task #") else { return nil }
            let rest = line[start.upperBound...]
            guard let colon = rest.range(of: ": "), let msText = logNumber("ms", in: rest) else { return nil }
            let summary = rest[colon.upperBound...].components(separatedBy: " strata.").first ?? ""
            var spent: [String: Double] = [:]
            for key in ["held", "writer_wait", "paused", "core_wait"] {
                if let text = logNumber("\(key)_ms", in: line) { spent[key] = Double(text) }
            }
            return (String(summary.prefix(80)), Double(msText) ?? 0, spent)
        }
    }

    /// Where each deferred work run's time went, in the order of the runs ("deferred work
    /// run: where its time went … strata.held_ms=… strata.writer_wait_ms=… strata.paused_ms=…
    /// strata.other_ms=…"): milliseconds by key (`held`, `writer_wait`, `paused`, `other`).
    static func timeSpent(_ log: String) -> [[String: Double]] {
        log.split(separator: "\n").compactMap { line in
            guard line.contains("deferred work run: where its time went") else { return nil }
            var spent: [String: Double] = [:]
            for key in ["held", "writer_wait", "paused", "other", "core_wait"] {
                guard let text = logNumber("\(key)_ms", in: line) else { continue }
                spent[key] = Double(text)
            }
            return spent
        }
    }

    static func loadAverage() -> Double {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return Double(text.split(separator: " ").first ?? "") ?? 0
    }

    /// `FinishDeferred --wait --now` while `load`'s clients write, their calls recorded as
    /// `phase`; the clients stop when it returns.
    static func finish(_ launcher: Launcher, while load: UpgradeClients, recordedAs phase: UpgradeClients.Phase) async throws -> Launcher.Finish {
        load.set(phase)
        let finish = try await launcher.finishDeferred()
        load.set(.other)
        await load.stop()
        return finish
    }

    static func remove(_ store: URL) throws {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store.path + suffix) }
    }
}

/// Spawns stratad on one store with a configuration per run, and talks to its admin socket.
struct Launcher {
    let executable: URL
    let directory: URL
    let sockets: URL
    let models: URL

    var adminSocket: String { sockets.appending(path: "admin.sock").path }
    var dataSocket: String { sockets.appending(path: "data.sock").path }

    /// `shippedScheduler`: the scheduler section left out (the shipped defaults); otherwise the
    /// scheduler is disabled so that only `FinishDeferred` runs work (same batch settings).
    func launch(_ name: String, store: URL, deferCleanup: Bool, backup: Bool, shippedScheduler: Bool = false,
                scheduler: [String: String] = [:]) throws -> BenchDaemon {
        let config = directory.appending(path: "\(name).yaml").path
        var text = """
            stores:
              - name: bench
                path: \(store.path)
                model: \(models.path)
                defer_cleanup: \(deferCleanup)
                backup: \(backup)
            sockets:
              admin:
                path: \(adminSocket)
                mode: "0600"
              data:
                path: \(dataSocket)
                mode: "0600"
            log_level: info

            """
        if !shippedScheduler {
            text += "scheduler:\n  enabled: false\n"
            for (key, value) in scheduler.sorted(by: { $0.key < $1.key }) { text += "  \(key): \(value)\n" }
        }
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        return try BenchDaemon(executable: executable, config: config, log: directory.appending(path: "\(name).log").path, notifyDirectory: sockets)
    }

    /// What `FinishDeferred(now, wait)` took, and its first task's time.
    struct Finish {
        var elapsed: Duration
        var firstTask: Duration?
    }

    /// `reclaim`: the vacuum too (FinishDeferred leaves it to the scheduler's idle turns otherwise);
    /// `ignoreLag`: not paced by a replicated store's replica lag (`--ignore-lag`).
    func finishDeferred(reclaim: Bool = false, ignoreLag: Bool = false) async throws -> Finish {
        let started = ContinuousClock.now
        var firstTaskId: Int64?
        var firstTaskEnded: ContinuousClock.Instant?
        let last = try await VarlinkClient.withConnection(to: adminSocket) { admin in
            try await admin.callMore(StrataAdmin.FinishDeferred.self, .init(store: "bench", wait: true, now: true, reclaim: reclaim ? true : nil,
                                                                     ignoreLag: ignoreLag ? true : nil)) { reply in
                guard let id = reply.progress?.taskId else { return }
                if firstTaskId == nil { firstTaskId = id }
                if id != firstTaskId, firstTaskEnded == nil { firstTaskEnded = ContinuousClock.now }
            }
        }
        let elapsed = ContinuousClock.now - started
        if last.state != .finished || last.results.contains(where: { $0.error != nil }) {
            throw BenchError("FinishDeferred did not finish: \(last)")
        }
        return Finish(elapsed: elapsed, firstTask: firstTaskEnded.map { $0 - started })
    }

    /// Pauses or resumes the daemon's idle scheduler (`stratactl pause` / `resume`).
    func setPaused(_ paused: Bool) async throws {
        try await VarlinkClient.withConnection(to: adminSocket) { admin in
            if paused {
                _ = try await admin.call(StrataAdmin.Pause.self, .init(reason: "strata-bench: clients run alone first"))
            } else {
                _ = try await admin.call(StrataAdmin.Resume.self)
            }
        }
    }

    func pendingKinds() async throws -> [String] {
        try await VarlinkClient.withConnection(to: adminSocket) { admin in
            try await admin.call(StrataAdmin.Pending.self, .init(store: "bench")).stores.first?.tasks.map(\.kind.rawValue) ?? []
        }
    }
}
