import ArgumentParser
import Foundation
import Logging
import Strata
import StrataUnits
import StrataVarlink

/// `strata-bench serve`: calls per second and latency through the real stratad's data socket,
/// beside the same operations in-process through the library and the transport floor (a
/// server on the same SwiftNIO stack answering replies of the same size without a store).
struct ServeBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Calls per second and p50/p99 through stratad's data socket, next to in-process calls and the transport floor.",
        discussion: """
            The release stratad (next to this binary, or --stratad) hosts one store of --rows \
            Aircraft objects (the crud scenario's model). For each operation — Fetch by id, \
            Fetch of about 100 objects by an indexed predicate, Insert, Update, Batch of 100 \
            inserts — three things are measured for --seconds each:

              in-process  the same operation through the library on a copy of the store, one \
            thread, a fresh ObjectContext per call (as the daemon does), no JSON
              stratad     --connections Varlink connections (StrataVarlink's client), each \
            keeping --depth calls in flight (pipelined); and one connection, one call at a time
              floor       the same clients against `strata-bench transport-floor`: a SwiftNIO \
            server on the same stack answering each message with stratad's reply to the same \
            call, without a store or JSON parsing
              ceiling     the floor running the same operation through the library on a \
            third copy of the store before each reply, on the event loop that read the \
            message: what any daemon on this stack and library could at best serve

            Figures: stratad calls/s as a fraction of the floor's (aim ≥ 0.70 for Fetch by id), \
            stratad p99 over the floor's p99 (aim ≤ 2), the daemon's cost per call over \
            in-process (one connection, one call at a time, minus the in-process mean), and \
            stratad's and the floor's calls/s against the store ceiling's.
            """
    )

    @Option(name: .long, help: "Objects in the store.") var rows = 100_000
    @Option(name: .long, help: "Client connections for the throughput runs.") var connections = 8
    @Option(name: .long, help: "Calls in flight per connection (pipelining).") var depth = 4
    @Option(name: .long, help: "Seconds per measured run.") var seconds = 3.0
    @Option(name: .long, parsing: .upToNextOption, help: "Operations to run (default: all): \(ServeOperation.allCases.map(\.rawValue).joined(separator: ", ")).")
    var operations: [String] = []
    @Option(name: .long, help: "The stratad executable (default: next to this binary).") var stratad: String?
    @OptionGroup var options: BenchOptions

    func validate() throws {
        guard rows >= 1000, connections > 0, connections <= 200, depth > 0, depth <= 64, seconds > 0 else {
            throw ValidationError("--rows must be at least 1000, --connections 1 to 200, --depth 1 to 64, --seconds positive")
        }
        for name in operations where ServeOperation(rawValue: name) == nil {
            throw ValidationError("unknown operation '\(name)'; operations: \(ServeOperation.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    func run() async throws {
        let directory = try BenchDirectory(path: options.directory, keep: options.keep)
        defer { directory.cleanUp() }
        let progress = Progress(enabled: !options.json)
        let selected = operations.isEmpty ? ServeOperation.allCases : operations.compactMap(ServeOperation.init(rawValue:))
        let data = CRUDDataSet(rows: rows, batchSize: 10_000)
        let me = URL(filePath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        let executable = try UpgradeBenchmark.stratadExecutable(stratad)

        progress.say("seeding a store of \(rows) objects, copied for stratad, in-process and the ceiling…")
        let daemonStorePath = directory.url.appending(path: "served.sqlite")
        let localStorePath = directory.url.appending(path: "in-process.sqlite")
        let ceilingStorePath = directory.url.appending(path: "ceiling.sqlite")
        // Seeded once: a closed store is whole in its one file (no WAL left), so copies are alike.
        try Self.seed(daemonStorePath, data: data)
        for url in [localStorePath, ceilingStorePath] { _ = try DeferralBenchmark.copy(daemonStorePath, to: url) }

        let (daemon, socket) = try startDaemon(in: directory.url, storePath: daemonStorePath, executable: executable)
        defer { daemon.stop() }
        var logger = Logger(label: "io.strata.bench")
        logger.logLevel = .warning
        let local = try PersistentStore.open(at: localStorePath, model: CRUDDataSet.model, options: StoreOptions(logger: logger))
        defer { try? local.close() }

        var report = BenchReport(scenario: "serve")
        report.parameters = [("rows", rows), ("connections", connections), ("depth", depth), ("seconds", seconds)]
        let duration = Duration.seconds(seconds)
        let (connections, depth) = (self.connections, self.depth)
        for operation in selected {
            progress.say("\(operation.label): in-process…")
            let inProcess = try Self.inProcess(operation, store: local, data: data, duration: duration)
            // stratad's reply to a representative call: the floor sends it back for every message.
            let replyFile = directory.url.appending(path: "\(operation.rawValue).reply").path
            let sample = try await VarlinkClient.withConnection(to: socket) { connection in
                try await connection.send(operation.call(n: 1_000_000, connection: 0, connections: 1, data: data))
                return try await connection.nextReply()
            }
            if let error = sample.error { throw BenchError("\(operation.label): stratad answered \(error) \(sample.parameters)") }
            try sample.encoded().write(to: URL(filePath: replyFile))
            let floor = try TransportFloorProcess(executable: me, socket: directory.url.appending(path: "floor.sock").path, replyFile: replyFile)
            defer { floor.stop() }
            let ceiling = try TransportFloorProcess(executable: me, socket: directory.url.appending(path: "ceiling.sock").path, replyFile: replyFile,
                                                    store: (ceilingStorePath.path, operation, data.rows))
            defer { ceiling.stop() }
            let call: @Sendable (Int, Int) -> VarlinkCall = { n, c in operation.call(n: n, connection: c, connections: connections, data: data) }
            progress.say("\(operation.label): stratad and floor, 1 connection…")
            let single = try await ServeLoad(socket: socket, connections: 1, depth: 1, duration: duration).run(call)
            let floorSingle = try await ServeLoad(socket: floor.socket, connections: 1, depth: 1, duration: duration).run(call)
            progress.say("\(operation.label): stratad and floor, \(connections) connections × \(depth)…")
            let loaded = try await ServeLoad(socket: socket, connections: connections, depth: depth, duration: duration).run(call)
            let floorLoaded = try await ServeLoad(socket: floor.socket, connections: connections, depth: depth, duration: duration).run(call)
            progress.say("\(operation.label): store ceiling, 1 connection and \(connections) connections × \(depth)…")
            let ceilingSingle = try await ServeLoad(socket: ceiling.socket, connections: 1, depth: 1, duration: duration).run(call)
            let ceilingLoaded = try await ServeLoad(socket: ceiling.socket, connections: connections, depth: depth, duration: duration).run(call)
            for result in [single, loaded] where result.errors > 0 {
                throw BenchError("\(operation.label): \(result.errors) error replies from stratad, the first: \(result.firstError ?? "?")")
            }
            Self.add(operation, inProcess: inProcess, single: single, floorSingle: floorSingle, loaded: loaded, floorLoaded: floorLoaded,
                     replyBytes: sample.encoded().count, load: "\(connections)×\(depth)", to: &report)
            Self.addCeiling(operation, single: single, loaded: loaded, floorLoaded: floorLoaded, ceilingSingle: ceilingSingle,
                            ceilingLoaded: ceilingLoaded, load: "\(connections)×\(depth)", to: &report)
        }
        report.targets = ["fetch_id_throughput": 1 / 0.7, "fetch_id_p99": 2]
        report.notes.append("strata = stratad, raw GRDB column = the transport floor (same NIO stack, canned reply of the same size) or, for in_process rows, the library in-process.")
        report.notes.append("throughput ratio = floor calls/s ÷ stratad calls/s (aim ≤ 1.43, i.e. stratad ≥ 70% of the floor); cost_per_call = stratad round trip (1 connection) − in-process mean.")
        report.notes.append("ceiling = the floor running the operation through the library before each reply, on its event loop: in _vs_ceiling rows the raw GRDB column is the ceiling; in _ceiling_vs_floor rows the strata column is the ceiling and the raw GRDB column the floor.")
        report.notes.append("stratad peak RSS \(String(format: "%.1f", daemon.peakRSSMegabytes)) MiB.")
        print(options.json ? report.json : report.text)
    }

    static func add(_ operation: ServeOperation, inProcess: ServeLoadResult, single: ServeLoadResult, floorSingle: ServeLoadResult,
                    loaded: ServeLoadResult, floorLoaded: ServeLoadResult, replyBytes: Int, load: String, to report: inout BenchReport) {
        let key = operation.rawValue
        let name = operation.label
        report.add(BenchFigure(key: "\(key)_throughput", label: "\(name): calls/s (\(load))", unit: "calls/s",
                               strata: loaded.callsPerSecond, raw: floorLoaded.callsPerSecond, higherIsBetter: true))
        report.add(BenchFigure(key: "\(key)_p50", label: "\(name): p50", unit: "µs", strata: loaded.latencies.p50Microseconds, raw: floorLoaded.latencies.p50Microseconds))
        report.add(BenchFigure(key: "\(key)_p99", label: "\(name): p99", unit: "µs", strata: loaded.latencies.p99Microseconds, raw: floorLoaded.latencies.p99Microseconds))
        report.add(BenchFigure(key: "\(key)_max", label: "\(name): max", unit: "µs", strata: loaded.maxMicroseconds, raw: floorLoaded.maxMicroseconds))
        report.add(BenchFigure(key: "\(key)_single", label: "\(name): round trip, 1 connection", unit: "µs",
                               strata: single.latencies.meanMicroseconds, raw: floorSingle.latencies.meanMicroseconds))
        report.add(BenchFigure(key: "\(key)_in_process", label: "\(name): stratad round trip vs in-process", unit: "µs",
                               strata: single.latencies.meanMicroseconds, raw: inProcess.latencies.meanMicroseconds))
        report.add(BenchFigure(key: "\(key)_cost_per_call", label: "\(name): daemon cost per call (reply \(replyBytes) B)", unit: "µs",
                               strata: single.latencies.meanMicroseconds - inProcess.latencies.meanMicroseconds, raw: inProcess.latencies.meanMicroseconds))
    }

    /// stratad and the floor against the store ceiling (the floor doing the library's work).
    static func addCeiling(_ operation: ServeOperation, single: ServeLoadResult, loaded: ServeLoadResult, floorLoaded: ServeLoadResult,
                           ceilingSingle: ServeLoadResult, ceilingLoaded: ServeLoadResult, load: String, to report: inout BenchReport) {
        let key = operation.rawValue
        let name = operation.label
        report.add(BenchFigure(key: "\(key)_throughput_vs_ceiling", label: "\(name): calls/s, stratad vs ceiling (\(load))", unit: "calls/s",
                               strata: loaded.callsPerSecond, raw: ceilingLoaded.callsPerSecond, higherIsBetter: true))
        report.add(BenchFigure(key: "\(key)_p99_vs_ceiling", label: "\(name): p99, stratad vs ceiling", unit: "µs",
                               strata: loaded.latencies.p99Microseconds, raw: ceilingLoaded.latencies.p99Microseconds))
        report.add(BenchFigure(key: "\(key)_single_vs_ceiling", label: "\(name): round trip, stratad vs ceiling", unit: "µs",
                               strata: single.latencies.meanMicroseconds, raw: ceilingSingle.latencies.meanMicroseconds))
        report.add(BenchFigure(key: "\(key)_ceiling_vs_floor", label: "\(name): calls/s, ceiling vs floor (\(load))", unit: "calls/s",
                               strata: ceilingLoaded.callsPerSecond, raw: floorLoaded.callsPerSecond, higherIsBetter: true))
    }

    /// Runs `operation` in-process, one call after another, for `duration`.
    static func inProcess(_ operation: ServeOperation, store: PersistentStore, data: CRUDDataSet, duration: Duration) throws -> ServeLoadResult {
        var result = ServeLoadResult()
        let clock = ContinuousClock()
        let started = clock.now
        var n = 0
        while clock.now - started < duration {
            let before = clock.now
            _ = try operation.runInProcess(n: n, store: store, data: data)
            let elapsed = clock.now - before
            result.latencies.record(elapsed)
            result.maxMicroseconds = max(result.maxMicroseconds, Double(elapsed.nanoseconds) / 1000)
            n += 1
        }
        result.calls = n
        result.elapsed = clock.now - started
        return result
    }

    /// A store of `data.rows` objects (batches of 10,000), closed.
    static func seed(_ url: URL, data: CRUDDataSet) throws {
        var logger = Logger(label: "io.strata.bench")
        logger.logLevel = .warning
        let store = try PersistentStore.open(at: url, model: CRUDDataSet.model, options: StoreOptions(logger: logger, recordsHistory: false))
        let workload = StrataCRUDWorkload(store: store, data: data)
        for batch in data.insertBatches { try workload.insert(batch) }
        try store.close()
    }

    /// Starts the release stratad on the store; returns it and its data socket.
    func startDaemon(in directory: URL, storePath: URL, executable: URL) throws -> (BenchDaemon, String) {
        try BenchDaemon.serving(store: ServeOperation.store, at: storePath, prefix: "serve", in: directory, executable: executable,
                                maxConnections: connections + 16)
    }
}

