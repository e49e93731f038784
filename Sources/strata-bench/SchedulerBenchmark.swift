import ArgumentParser
import Foundation
import GRDB
import Logging
import ServiceLifecycle
import Strata
import StrataDaemon
import StrataVarlink
import Synchronization

/// `strata-bench scheduler`: the idle scheduler under a stop-and-go client load, against a
/// real `stratad` running in this process (its Varlink sockets, its scheduler).
struct SchedulerBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scheduler",
        abstract: "Client latency with the idle scheduler finishing deferred work vs no deferred work; pause latency; time to finish.",
        discussion: """
            A store of --rows items is opened by stratad (in this process) at a model version that \
            leaves deferred work (a dropped attribute: a table rewrite; a new index). --clients \
            clients call the data socket — inserts, updates of random items, or both in turn \
            (--operation) — each every --interval-ms, in load phases of --load-s seconds separated \
            by quiet phases of --quiet-s seconds; with --external-clients each client is a process \
            of its own, as an application's are. The scheduler runs with the shipped settings \
            (batch_budget, pause_between_batches, idle_batch_budget; --batch-ms, --pause-ms and \
            --idle-batch-ms override them), idle_after --idle-after and signals --signals; it runs \
            the deferred work in the quiet phases and must step aside when each load phase starts. \
            Cycles repeat until the store is finished. Then the same number of cycles runs against \
            a copy of the store with no deferred work at all (migrated before the daemon starts).

            Figures, each with its aim: client p99 with the scheduler on / with no deferred work \
            (≤ 1.10); client max (≤ 50 ms or 1.2x the no-work run's); pause latency, from the first \
            busy reading to the work having stopped, as the daemon measures it (p99 ≤ 25 ms: about \
            one batch), and from the first request of a load phase to the work having stopped, as \
            the clients see it; the time to finish. Beside them, the longest stall of the \
            machine's block device in each run (/proc/pressure/io: at least 80% of each 100 ms \
            with a task waiting for I/O), which stops every client whoever runs.
            """
    )

    @Option(name: .long, help: "Items in the store.") var rows = 800_000
    @Option(name: .long, help: "Concurrent clients.") var clients = 4
    @Option(name: .customLong("interval-ms"), help: "Pause between a client's inserts, in milliseconds.") var interval = 5
    @Option(name: .customLong("load-s"), help: "Length of a load phase, in seconds.") var loadSeconds = 2.0
    @Option(name: .customLong("quiet-s"), help: "Length of a quiet phase, in seconds (the work gets what is left after load_window and idle_after).") var quietSeconds = 3.0
    @Option(name: .customLong("max-cycles"), help: "Give up after this many cycles.") var maxCycles = 100
    @Option(name: .customLong("batch-ms"), help: "Scheduler batch_budget, in milliseconds (default: the shipped setting).") var batchMilliseconds: Int?
    @Option(name: .customLong("pause-ms"), help: "Scheduler pause_between_batches, in milliseconds (default: the shipped setting).") var pauseMilliseconds: Int?
    @Option(name: .customLong("idle-batch-ms"), help: "Scheduler idle_batch_budget, in milliseconds (default: the shipped setting; 0: off).") var idleBatchMilliseconds: Int?
    @Option(name: .long, help: "What each client call does: insert, update (a random existing item) or mixed (in turn).") var operation = ClientOperation.mixed
    @Flag(name: .customLong("external-clients"), help: "Run each client as a process of its own (this executable's `scheduler-client`), as an application's clients are; default: tasks of this process.")
    var externalClients = false
    @Option(name: .customLong("idle-after"), help: "Scheduler idle_after (and load_window).") var idleAfter = "1s"
    @Option(name: .long, help: "Scheduler signals (the machine-wide ones are off by default: other work on a shared machine would gate the run).")
    var signals = "requests,transactions"
    @Option(name: .customLong("seed-cache"), help: "Directory where the seed store and its migrated copy are kept between runs (default: none, seed every run).")
    var seedCache: String?
    @Flag(name: .long, help: "Print the slowest client requests with their time into the load phase (to stderr).") var trace = false
    @Option(name: .customLong("log-level"), help: "The in-process daemon's log level, printed to stderr with timestamps (info shows long write-lock holds and slow checkpoints; notice each pause with its latency).")
    var logLevel = "warning"
    @OptionGroup var options: BenchOptions

    func validate() throws {
        guard rows >= 1000 else { throw ValidationError("--rows must be at least 1000") }
        guard clients > 0, interval >= 0, loadSeconds > 0, quietSeconds > 0, maxCycles > 0 else { throw ValidationError("counts and durations must be positive") }
        guard DurationText.parse(idleAfter) != nil else { throw ValidationError("--idle-after: '\(idleAfter)' is not a duration") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level: '\(logLevel)' is not a log level; use trace, debug, info, notice, warning, error or critical") }
        var settings = SchedulerSettings()
        do { try settings.set("signals", to: signals) } catch { throw ValidationError("--signals: \(error.reason)") }
    }

    func run() async throws {
        let directory = try BenchDirectory(path: options.directory, keep: options.keep)
        defer { directory.cleanUp() }
        let progress = Progress(enabled: !options.json)
        if logLevel != "warning" { LoggingSystem.bootstrap(StreamLogHandler.standardError) }
        var logger = Logger(label: "io.strata.bench")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .warning

        let models = try BenchModel.write(in: directory.url)
        let (seed, migrated) = try BenchModel.prepare(rows: rows, models: models, cache: seedCache.map { URL(filePath: $0) },
                                                      directory: directory.url, logger: logger, progress: progress)
        let scheduled = try DeferralBenchmark.copy(seed, to: directory.url.appending(path: "scheduled.sqlite"))
        let baseline = try DeferralBenchmark.copy(migrated, to: directory.url.appending(path: "baseline.sqlite"))

        progress.say("scheduler on: load \(loadSeconds) s / quiet \(quietSeconds) s cycles until the deferred work is done…")
        let on = try await runDaemon(store: scheduled, models: models, directory: directory.url, cycles: nil, logger: logger, progress: progress)
        guard let finish = on.finish else {
            throw BenchError("the deferred work did not finish within \(maxCycles) cycles; raise --max-cycles or --quiet-s, or lower --rows")
        }
        progress.say("no deferred work: \(on.cycles) cycles…")
        let base = try await runDaemon(store: baseline, models: models, directory: directory.url, cycles: on.cycles, logger: logger, progress: progress)

        var pauses = LatencyRecorder()
        var loadToStop = LatencyRecorder()
        for pause in on.pauses {
            pauses.record(.nanoseconds(Int64(pause.latencyMs * 1e6)))
            if let restart = on.loadStarts.last(where: { $0 <= pause.at }) {
                loadToStop.record(.nanoseconds(Int64(max(0, pause.at.timeIntervalSince(restart)) * 1e9)))
            }
        }
        let ratio = on.latency.p99Microseconds / max(base.latency.p99Microseconds, 1e-9)
        let settings = try schedulerSettings()
        // The aims (issue 44): p99 within 1.10x of no deferred work; max within 50 ms or 1.2x
        // the no-work run's; the daemon's pause p99 within 25 ms.
        let maxAim = max(50_000, 1.2 * base.maxMicroseconds)
        let results: [(String, Any)] = [
            ("rows", rows), ("clients", clients), ("external_clients", externalClients), ("operation", operation.rawValue),
            ("interval_ms", interval), ("load_s", loadSeconds), ("quiet_s", quietSeconds),
            ("batch_ms", settings.batchBudget.milliseconds), ("pause_ms", settings.pauseBetweenBatches.milliseconds),
            ("idle_batch_ms", settings.idleBatchBudget.milliseconds), ("idle_after", idleAfter), ("signals", signals), ("cycles", on.cycles),
            ("client_p50_ms", Self.ms(on.latency.p50Microseconds)), ("client_p99_ms", Self.ms(on.latency.p99Microseconds)),
            ("client_max_ms", Self.ms(on.maxMicroseconds)), ("client_requests", Int(on.latency.count)),
            ("baseline_p50_ms", Self.ms(base.latency.p50Microseconds)), ("baseline_p99_ms", Self.ms(base.latency.p99Microseconds)),
            ("baseline_max_ms", Self.ms(base.maxMicroseconds)), ("baseline_requests", Int(base.latency.count)),
            ("client_p99_ratio", DeferralBenchmark.round(ratio)), ("client_max_aim_ms", Self.ms(maxAim)),
            ("pauses", Int(pauses.count)), ("pause_p50_ms", Self.ms(pauses.p50Microseconds)), ("pause_p99_ms", Self.ms(pauses.p99Microseconds)),
            ("pause_max_ms", Self.ms(Double(pauses.histogram.max) / 1000)),
            ("load_to_stop_p50_ms", Self.ms(loadToStop.p50Microseconds)), ("load_to_stop_p99_ms", Self.ms(loadToStop.p99Microseconds)),
            ("load_to_stop_max_ms", Self.ms(Double(loadToStop.histogram.max) / 1000)),
            ("finish_s", DeferralBenchmark.round(finish.seconds)), ("work_s", DeferralBenchmark.round(on.workSeconds)),
            ("delay_s", DeferralBenchmark.round(on.delaySeconds)), ("rows_processed", on.rowsProcessed), ("batches", on.batches),
            ("client_errors", on.errors + base.errors), ("load_average", Self.loadAverage()),
            ("client_wait_max_ms_by_step", on.waits),
            ("io_stall_s", DeferralBenchmark.round(on.ioStallSeconds)), ("baseline_io_stall_s", DeferralBenchmark.round(base.ioStallSeconds)),
        ]
        if options.json {
            var object: [String: Any] = ["scenario": "scheduler", "machine": MachineDescription.current.jsonObject]
            for (key, value) in results { object[key] = value }
            let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
            return
        }
        func check(_ ok: Bool) -> String { ok ? "ok" : "MISSED" }
        func row(_ label: String, _ r: LatencyRecorder, max: Double) -> String {
            label.padding(toLength: 34, withPad: " ", startingAt: 0)
                + String(format: "%9.2f %9.2f %9.2f %9d", r.p50Microseconds / 1000, r.p99Microseconds / 1000, max / 1000, r.count)
        }
        let loadMax = Double(loadToStop.histogram.max) / 1000
        print("""
            strata-bench scheduler
            rows=\(rows) clients=\(clients) (\(externalClients ? "processes of their own" : "in this process"), \(operation.rawValue)) interval=\(interval) ms load=\(loadSeconds) s quiet=\(quietSeconds) s
            batch_budget=\(DurationText.format(settings.batchBudget)) pause_between_batches=\(DurationText.format(settings.pauseBetweenBatches)) idle_batch_budget=\(DurationText.format(settings.idleBatchBudget)) idle_after=\(idleAfter) signals=\(signals)
            machine: \(MachineDescription.current.summary); load average \(Self.loadAverage())

            client latency (ms)                    p50       p99       max  requests
            \(row("scheduler on, deferred work", on.latency, max: on.maxMicroseconds))
            \(row("no deferred work", base.latency, max: base.maxMicroseconds))
            client p99 ratio                  \(String(format: "%9.2f", ratio))   target ≤ 1.10: \(check(ratio <= 1.10))
            client max                        \(String(format: "%9.2f", on.maxMicroseconds / 1000))   target ≤ \(String(format: "%.1f", maxAim / 1000)) ms (50 ms or 1.2x no work): \(check(on.maxMicroseconds <= maxAim))
            device I/O stall (PSI), longest   \(String(format: "%9.2f", on.ioStallSeconds)) s with deferred work, \(String(format: "%.2f", base.ioStallSeconds)) s without (a device stall stops every client, deferred work or not)

            pause latency (ms)                     p50       p99       max    pauses
            \(row("first busy reading → stopped", pauses, max: Double(pauses.histogram.max) / 1000))   p99 target ≤ 25 ms: \(check(pauses.p99Microseconds <= 25_000))
            \(row("first request → stopped", loadToStop, max: loadMax))

            longest possible wait behind a step (ms): \(on.waits.sorted { $0.value > $1.value }.prefix(8).map { "\($0.key) \(String(format: "%.1f", $0.value))" }.joined(separator: ", "))

            finished the deferred work in \(String(format: "%.1f", finish.seconds)) s over \(on.cycles) cycles: \(String(format: "%.1f", on.workSeconds)) s of work (\(String(format: "%.1f", on.delaySeconds)) s cost delay), \(on.rowsProcessed) rows in \(on.batches) batches
            """)
    }

    /// The scheduler settings of the run: the shipped ones, with the benchmark's overrides.
    func schedulerSettings() throws -> SchedulerSettings {
        var settings = SchedulerSettings()
        try settings.set("load_window", to: idleAfter)
        try settings.set("signals", to: signals)
        if let batchMilliseconds { try settings.set("batch_budget", to: "\(batchMilliseconds)ms") }
        if let pauseMilliseconds { try settings.set("pause_between_batches", to: "\(pauseMilliseconds)ms") }
        if let idleBatchMilliseconds { try settings.set("idle_batch_budget", to: "\(idleBatchMilliseconds)ms") }
        return settings
    }

    /// The 1-minute load average, as /proc/loadavg says (the machine's load during the run).
    static func loadAverage() -> String {
        ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "").split(separator: " ").prefix(3).joined(separator: " ")
    }

    static func ms(_ microseconds: Double) -> Double { (microseconds / 10).rounded() / 100 }

    // MARK: - One daemon run

    struct Run {
        var latency = LatencyRecorder()
        var maxMicroseconds = 0.0
        var cycles = 0
        var finish: Duration?
        var loadStarts: [Date] = []
        var pauses: [(latencyMs: Double, at: Date)] = []
        var workSeconds = 0.0
        var delaySeconds = 0.0
        var rowsProcessed: Int64 = 0
        var batches: Int64 = 0
        var errors = 0
        /// The daemon's longest possible client wait behind each step (`clientWaitMaxMs`).
        var waits: [String: Double] = [:]
        /// The block device's longest stall during the run (``IOStallWatch``), in seconds.
        var ioStallSeconds = 0.0
    }

    /// Runs stratad on `store` and the load cycles: until the deferred work is done (`cycles`
    /// nil), or `cycles` of them.
    func runDaemon(store: URL, models: URL, directory: URL, cycles: Int?, logger: Logger, progress: Progress) async throws -> Run {
        let sockets = directory.appending(path: "run")
        try FileManager.default.createDirectory(at: sockets, withIntermediateDirectories: true)
        var settings = try schedulerSettings()
        try settings.set("idle_after", to: "10s")  // until the clients run (set below)
        let admin = sockets.appending(path: "admin.sock").path
        let data = sockets.appending(path: "data.sock").path
        let configuration = DaemonConfiguration(
            stores: [StoreConfiguration(name: "bench", path: store.path, modelDirectory: models.path, backupBeforeMigration: false)],
            adminSocket: SocketConfiguration(path: admin, mode: 0o600), dataSocket: SocketConfiguration(path: data, mode: 0o600),
            scheduler: settings, logLevel: logLevel)
        let daemon = StrataDaemon(configuration: configuration, source: .init(path: "(strata-bench)", overrides: .init()), logger: logger)
        let group = ServiceGroup(services: [daemon], gracefulShutdownSignals: [], logger: logger)
        let service = Task { try await group.run() }
        defer { service.cancel() }
        let client = BenchAdmin(socket: admin)
        try await client.waitUntilServing()
        let started = ContinuousClock.now

        var run = Run()
        let stalls = IOStallWatch()
        let calls = ClientCalls(operation: operation, rows: rows, interval: .milliseconds(interval))
        let load: any PhasedLoad = externalClients ? try ExternalBenchClients(socket: data, count: clients, calls: calls)
            : BenchClients(socket: data, count: clients, calls: calls)
        var seenPauses = Set<String>()
        while run.cycles < (cycles ?? maxCycles) {
            run.cycles += 1
            run.loadStarts.append(Date())
            let phase = Task { await load.run(for: .milliseconds(Int64(loadSeconds * 1000))) }
            if run.cycles == 1 {
                try await Task.sleep(for: .milliseconds(300))
                _ = try await client.call(StrataAdmin.SetSetting.self, .init(key: "idle_after", value: idleAfter))
            }
            await phase.value
            if cycles == nil {
                for pause in try await client.status().scheduler.stats?.recentPauses ?? [] {
                    guard seenPauses.insert(pause.at).inserted, let date = Self.date(pause.at) else { continue }
                    run.pauses.append((pause.latencyMs, date))
                }
            }
            if cycles != nil, run.cycles == cycles { break }
            // Quiet: the scheduler's turn. Watch for the end of the work.
            let quietEnds = ContinuousClock.now + .milliseconds(Int64(quietSeconds * 1000))
            while ContinuousClock.now < quietEnds {
                if cycles == nil, run.finish == nil, try await client.pendingTasks() == 0 {
                    run.finish = ContinuousClock.now - started
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            if run.finish != nil { break }
            if cycles == nil { progress.say("cycle \(run.cycles): \(try await client.rowsDone()) rows done") }
        }
        await load.close()
        run.ioStallSeconds = stalls.stop()?.seconds ?? 0
        let (latency, maxMicroseconds, errors) = load.figures.results()
        if trace {
            FileHandle.standardError.write(Data("strata-bench: load phases (\(cycles == nil ? "scheduler on" : "no deferred work")):\n\(load.figures.phaseSummaries().joined(separator: "\n"))\n".utf8))
            let lines = load.figures.slowestRequests(30).map { String(format: "  %8.2f ms at %7.1f ms into load phase %d", $0.latencyMs, $0.intoPhaseMs, $0.phase) }
            FileHandle.standardError.write(Data("strata-bench: slowest requests (\(cycles == nil ? "scheduler on" : "no deferred work")):\n\(lines.joined(separator: "\n"))\n".utf8))
        }
        run.latency = latency
        run.maxMicroseconds = maxMicroseconds
        run.errors = errors
        if let stats = try await client.status().scheduler.stats {
            run.workSeconds = stats.workSeconds
            run.delaySeconds = stats.delaySeconds
            run.rowsProcessed = stats.rowsProcessed
            run.batches = Int64(stats.batches)
            run.waits = stats.clientWaitMaxMs ?? [:]
        }
        await group.triggerGracefulShutdown()
        _ = try? await service.value
        return run
    }

    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }
}

/// The admin socket, for the benchmark.
struct BenchAdmin {
    let socket: String

    func call<M: VarlinkMethod>(_ method: M.Type, _ parameters: M.Parameters) async throws -> M.Reply {
        try await VarlinkClient.withConnection(to: socket) { try await $0.call(method, parameters) }
    }

    func status() async throws -> StrataAdmin.Status.Reply { try await call(StrataAdmin.Status.self, VarlinkEmpty()) }

    func waitUntilServing() async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if (try? await status()) != nil { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw BenchError("stratad did not start serving \(socket)")
    }

    private func tasks() async throws -> [StrataAdmin.DeferredTaskInfo] {
        try await call(StrataAdmin.Pending.self, .init(store: "bench")).stores.first?.tasks ?? []
    }

    func pendingTasks() async throws -> Int { try await tasks().count }
    func rowsDone() async throws -> Int64 { try await tasks().reduce(0) { $0 + $1.rowsDone } }
}

/// The benchmark's model: version 1 → 2 drops an attribute (a table rewrite) and adds an index.
enum BenchModel {
    static let v1 = version(1, lastly: "      - {name: legacyNote, type: string}")
    static let v2 = version(2, lastly: "    indexes:\n      - name: byRank\n        elements: [rank]")

    /// `Bench N`: Item's name, payload and rank, then `lastly` (v1's extra attribute, v2's index).
    private static func version(_ number: Int, lastly: String) -> String {
        """
        version: Bench \(number)
        entities:
          - name: Item
            attributes:
              - {name: name, type: string}
              - {name: payload, type: string}
              - {name: rank, type: int64}
        """ + "\n" + lastly
    }

    static func write(in directory: URL) throws -> URL {
        let models = directory.appending(path: "models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        try v1.write(to: models.appending(path: "Bench 1.yaml"), atomically: true, encoding: .utf8)
        try v2.write(to: models.appending(path: "Bench 2.yaml"), atomically: true, encoding: .utf8)
        try "current: Bench 2\nversions:\n  - Bench 1.yaml\n  - Bench 2.yaml\n".write(to: models.appending(path: "versions.yaml"), atomically: true, encoding: .utf8)
        return models
    }

    /// The seed store (`Bench 1`) and a copy migrated to `Bench 2` with no deferred work left,
    /// created once per row count and kept in `cache` when one is given.
    static func prepare(rows: Int, models: URL, cache: URL?, directory: URL, logger: Logger, progress: Progress) throws -> (seed: URL, migrated: URL) {
        let folder = cache ?? directory
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // The models' text in the name: a cached seed of another model is never reused.
        var hash: UInt64 = 5381
        for byte in (v1 + v2).utf8 { hash = (hash &* 33) &+ UInt64(byte) }
        let tag = "scheduler-\(rows)-\(String(hash, radix: 36))"
        let seed = folder.appending(path: "\(tag)-seed.sqlite"), migrated = folder.appending(path: "\(tag)-migrated.sqlite")
        if FileManager.default.fileExists(atPath: seed.path), FileManager.default.fileExists(atPath: migrated.path) {
            progress.say("seed: reusing \(seed.path)")
            return (seed, migrated)
        }
        progress.say("creating a version-1 store with \(rows) items…")
        let partial = folder.appending(path: "\(tag).partial.sqlite")
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: partial.path + suffix) }
        try Self.seed(at: partial, models: models, rows: rows, logger: logger)
        let partialMigrated = try DeferralBenchmark.copy(partial, to: folder.appending(path: "\(tag).partial-migrated.sqlite"))
        try migrateNow(partialMigrated, models: models, logger: logger)
        for url in [seed, migrated] { try? FileManager.default.removeItem(at: url) }
        try FileManager.default.moveItem(at: partialMigrated, to: migrated)
        try FileManager.default.moveItem(at: partial, to: seed)
        return (seed, migrated)
    }

    static func seed(at url: URL, models: URL, rows: Int, logger: Logger) throws {
        let directory = try ModelDirectory(url: models)
        let store = try PersistentStore.open(at: url, model: directory.version(named: "Bench 1")!, options: StoreOptions(logger: logger))
        try store.database.write { db in
            let item = try db.makeStatement(sql: "INSERT INTO Item(_pk, name, payload, rank, legacyNote) VALUES (?, ?, ?, ?, ?)")
            let payload = String(repeating: "strata-payload-", count: 12)
            for i in 1...rows { try item.execute(arguments: [i, "item \(i)", payload + String(i), i % 1000, "legacy note \(i)"]) }
        }
        try store.checkpoint()
        try store.close()
    }

    /// Migrates a copy to version 2 with the cleanup done at open: no deferred work left.
    static func migrateNow(_ url: URL, models: URL, logger: Logger) throws {
        let directory = try ModelDirectory(url: models)
        var migration = MigrationOptions.immediate
        migration.knownVersions = directory.versions
        let store = try PersistentStore.open(at: url, model: directory.current, options: StoreOptions(migration: migration, logger: logger))
        guard try store.pendingDeferredWork().isEmpty else { throw BenchError("the baseline store still has deferred work") }
        try store.checkpoint()
        try store.close()
    }
}
