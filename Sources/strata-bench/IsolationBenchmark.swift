import ArgumentParser
import Foundation
import Logging
import Strata
import StrataUnits
import StrataVarlink
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `strata-bench isolation`: calls isolated from each other and from shutdown (issue 45),
/// measured through the release `stratad` with clients over its data socket.
struct IsolationBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "isolation",
        abstract: "Cheap calls beside expensive ones, MATCHES on hostile patterns, SIGTERM with open observers — through the real stratad.",
        discussion: """
            The release `stratad` (next to this binary, or --stratad) hosts two stores of the crud \
            model: `lanes` with --rows objects and `regex` with 60 objects whose tailNumber is 26 \
            a's. Parts (--parts, comma-separated):

              lanes     --lookups Fetch calls by primary key (SELF == %@), one connection, one at a
                        time: alone, then beside --hostile clients each calling Count with
                        `tailNumber MATCHES '(a+)+b'` without pause, then beside as many calling
                        Count with `tailNumber CONTAINS[cd] 'zz'` (a scan folding every row).
                        Aim: p99 ≤ 50 ms beside 4 hostile calls.
              matches   --lookups Count calls with `tailNumber MATCHES '(a+)+b'` on `regex`, one at
                        a time. Aim: ≤ 50 ms (the pattern that backtracks exponentially).
              shutdown  --observers clients each with an open Observe stream, then SIGTERM: time to
                        the daemon's exit, and how many observers got a final reply (an error or
                        continues: false) before their connection closed; the same SIGTERM with no
                        observer for scale. Aim: ≤ 1 s, every observer answered.
            """
    )

    @Option(name: .long, help: "Objects in the lanes store.") var rows = 200_000
    @Option(name: .long, help: "Calls per measured series.") var lookups = 200
    @Option(name: .long, help: "Hostile clients beside the lookups.") var hostile = 4
    @Option(name: .long, help: "Observers open at SIGTERM.") var observers = 10
    @Option(name: .long, help: "Parts to run, comma-separated: lanes, matches, shutdown.") var parts = "lanes,matches,shutdown"
    @Option(name: .long, help: "The stratad executable (default: next to this binary).") var stratad: String?
    @OptionGroup var options: BenchOptions

    static let allParts = ["lanes", "matches", "shutdown"]

    func validate() throws {
        guard rows >= 1000, lookups >= 10, hostile >= 1, observers >= 1 else {
            throw ValidationError("--rows must be at least 1000, --lookups at least 10, --hostile and --observers at least 1")
        }
        for part in parts.split(separator: ",") where !Self.allParts.contains(String(part)) {
            throw ValidationError("--parts: unknown part '\(part)'; choose from \(Self.allParts.joined(separator: ", "))")
        }
    }

    /// One series of calls: latencies, the slowest, errors (``ServeLoadResult``).
    typealias Series = ServeLoadResult

    struct Shutdown {
        var observers: Int
        var stopped: Duration
        var answered: Int
        var replies: [String]
    }

    func run() async throws {
        let selected = Set(parts.split(separator: ",").map(String.init))
        let directory = try BenchDirectory(path: options.directory, keep: options.keep)
        defer { directory.cleanUp() }
        let progress = Progress(enabled: !options.json)
        let executable = try UpgradeBenchmark.stratadExecutable(stratad)
        let loadStart = UpgradeBenchmark.loadAverage()
        progress.say("seeding a store of \(rows) objects…")
        let data = CRUDDataSet(rows: rows, batchSize: 10_000)
        let lanesPath = directory.url.appending(path: "lanes.sqlite")
        try ServeBenchmark.seed(lanesPath, data: data)
        let regexPath = directory.url.appending(path: "regex.sqlite")
        try ServeBenchmark.seed(regexPath, data: CRUDDataSet(rows: 0, batchSize: 10_000))

        var figures: [(key: String, label: String, series: Series)] = []
        var shutdowns: [Shutdown] = []
        let daemon = try Self.start(in: directory.url, lanes: lanesPath, regex: regexPath, executable: executable, name: "isolation",
                                    maxConnections: hostile * 2 + observers + 16)
        defer { daemon.daemon.stop() }
        let socket = daemon.socket
        try await VarlinkClient.withConnection(to: socket) { connection in
            let operations: [JSONValue] = (0..<60).map { _ in
                .object(["op": "insert", "entity": .string(CRUDDataSet.entityName),
                         "values": .object(["tailNumber": .string(String(repeating: "a", count: 26))])])
            }
            _ = try await connection.call(StrataStore.Batch.qualifiedName, ["store": "regex", "operations": .array(operations)])
        }

        if selected.contains("lanes") {
            let lookup: @Sendable (Int) -> VarlinkCall = { n in
                VarlinkCall(method: StrataStore.Fetch.qualifiedName, parameters: [
                    "store": "lanes", "entity": .string(CRUDDataSet.entityName), "predicate": "SELF == %@",
                    "arguments": .array([.int(Int64(1 + (n &* 7919) % data.rows))])])
            }
            progress.say("lanes: \(lookups) lookups by key alone…")
            figures.append(("fetch_id_alone", "Fetch by id, alone", try await Self.series(socket, count: lookups, call: lookup)))
            for (key, label, predicate, argument) in [
                ("fetch_id_beside_matches", "Fetch by id beside \(hostile) × MATCHES '(a+)+b'", "tailNumber MATCHES %@", "(a+)+b"),
                ("fetch_id_beside_scans", "Fetch by id beside \(hostile) × CONTAINS[cd] scans", "tailNumber CONTAINS[cd] %@", "zz"),
            ] {
                let call = VarlinkCall(method: StrataStore.Count.qualifiedName, parameters: [
                    "store": "lanes", "entity": .string(CRUDDataSet.entityName), "predicate": .string(predicate), "arguments": .array([.string(argument)])])
                progress.say("lanes: \(lookups) lookups by key beside \(hostile) clients calling \(predicate) without pause…")
                let load = HostileLoad(socket: socket, clients: hostile, call: call)
                load.start()
                try await Task.sleep(for: .milliseconds(500))
                let series = try await Self.series(socket, count: lookups, call: lookup)
                let hostileSeries = await load.stop()
                figures.append((key, label, series))
                figures.append((key.replacingOccurrences(of: "fetch_id_beside", with: "hostile"), "  the hostile calls themselves", hostileSeries))
            }
        }
        if selected.contains("matches") {
            progress.say("matches: \(lookups) × MATCHES '(a+)+b' over 60 rows of 26 a's…")
            let call = VarlinkCall(method: StrataStore.Count.qualifiedName, parameters: [
                "store": "regex", "entity": .string(CRUDDataSet.entityName), "predicate": "tailNumber MATCHES %@", "arguments": .array(["(a+)+b"])])
            figures.append(("matches_hostile", "Count, MATCHES '(a+)+b', 60 × 26 a's", try await Self.series(socket, count: lookups, call: { _ in call })))
        }
        if selected.contains("shutdown") {
            progress.say("shutdown: SIGTERM with \(observers) observers…")
            shutdowns.append(try await Self.shutdown(daemon.daemon, socket: socket, observers: observers))
            progress.say("shutdown: SIGTERM with no observer, for scale…")
            let again = try Self.start(in: directory.url, lanes: lanesPath, regex: regexPath, executable: executable, name: "isolation-again",
                                       maxConnections: 16)
            shutdowns.append(try await Self.shutdown(again.daemon, socket: again.socket, observers: 0))
        }
        let loadEnd = UpgradeBenchmark.loadAverage()
        print(options.json ? json(figures, shutdowns, load: (loadStart, loadEnd)) : text(figures, shutdowns, load: (loadStart, loadEnd)))
    }

    /// stratad hosting `lanes` and `regex`, the scheduler off.
    static func start(in directory: URL, lanes: URL, regex: URL, executable: URL, name: String, maxConnections: Int) throws -> (daemon: BenchDaemon, socket: String) {
        let models = directory.appending(path: "models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        try ModelFile.encode(CRUDDataSet.model, format: .yaml).write(to: models.appending(path: "Bench 1.yaml"))
        try "current: Bench 1\nversions:\n  - Bench 1.yaml\n".write(to: models.appending(path: "versions.yaml"), atomically: true, encoding: .utf8)
        let run = URL(filePath: "/tmp/sbi-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true)
        let dataSocket = run.appending(path: "data.sock").path
        let config = directory.appending(path: "\(name).yaml").path
        try """
            stores:
              - {name: lanes, path: \(lanes.path), model: \(models.path), backup: false}
              - {name: regex, path: \(regex.path), model: \(models.path), backup: false}
            sockets:
              admin: {path: \(run.appending(path: "admin.sock").path), mode: "0600", users: ["\(getuid())"]}
              data: {path: \(dataSocket), mode: "0600", allow_any_peer: true}
            limits: {max_connections: \(maxConnections)}
            scheduler: {enabled: false}
            log_level: warning

            """.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try BenchDaemon(executable: executable, config: config, log: directory.appending(path: "\(name).log").path, notifyDirectory: run)
        return (daemon, dataSocket)
    }

    /// `count` calls one after another on one connection, round trip each.
    static func series(_ socket: String, count: Int, call: @Sendable (Int) -> VarlinkCall) async throws -> Series {
        try await VarlinkClient.withConnection(to: socket) { connection in
            var series = Series()
            for n in 0..<count {
                let started = ContinuousClock.now
                try await connection.send(call(n))
                let reply = try await connection.nextReply()
                series.record(ContinuousClock.now - started, error: reply.error.map { "\($0) \(reply.parameters)" })
            }
            return series
        }
    }

    /// Observers open on `lanes`, then SIGTERM: how long the daemon took to exit, and which
    /// observers got a final reply.
    static func shutdown(_ daemon: BenchDaemon, socket: String, observers: Int) async throws -> Shutdown {
        let opened = OpenedCount()
        let watchers = (0..<observers).map { _ in
            Task { () -> String in
                do {
                    return try await VarlinkClient.withConnection(to: socket) { connection in
                        try await connection.send(VarlinkCall(method: StrataStore.Observe.qualifiedName,
                                                              parameters: ["store": "lanes"], more: true))
                        opened.value.add(1, ordering: .relaxed)
                        while true {
                            let reply = try await connection.nextReply()
                            if let error = reply.error { return error }
                            if !reply.continues { return "continues: false" }
                        }
                    }
                } catch {
                    return "closed without a final reply (\(error))"
                }
            }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while opened.value.load(ordering: .relaxed) < observers, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(200))
        let started = ContinuousClock.now
        daemon.stop(timeout: .seconds(30))
        let stopped = ContinuousClock.now - started
        var replies: [String] = []
        for watcher in watchers { replies.append(await watcher.value) }
        return Shutdown(observers: observers, stopped: stopped, answered: replies.filter { !$0.hasPrefix("closed") }.count, replies: replies)
    }

    func text(_ figures: [(key: String, label: String, series: Series)], _ shutdowns: [Shutdown], load: (Double, Double)) -> String {
        var lines = ["strata-bench isolation",
                     "rows=\(rows) lookups=\(lookups) hostile=\(hostile) observers=\(observers) load=\(String(format: "%.2f→%.2f", load.0, load.1))",
                     "machine: \(MachineDescription.current.summary)", "",
                     Self.padded("series") + "   p50 ms    p99 ms    max ms   calls  errors"]
        for (key, label, series) in figures {
            var line = Self.padded(label) + String(format: " %9.2f %9.2f %9.2f %7d %7d", series.p50Milliseconds, series.p99Milliseconds, series.maxMilliseconds, series.calls, series.errors)
            if key.hasPrefix("fetch_id_beside") || key == "matches_hostile" {
                line += "   aim p99 ≤ 50 ms: \(series.p99Milliseconds <= 50 && series.errors == 0 ? "ok" : "MISSED")"
            }
            lines.append(line)
            if let error = series.firstError { lines.append("    first error: \(error.prefix(300))") }
        }
        for shutdown in shutdowns {
            var line = String(format: "SIGTERM with %2d observers: stopped in %8.1f ms, %d of %d with a final reply", shutdown.observers,
                              shutdown.stopped.milliseconds, shutdown.answered, shutdown.observers)
            if shutdown.observers > 0 {
                line += "   aim ≤ 1000 ms, all answered: \(shutdown.stopped <= .seconds(1) && shutdown.answered == shutdown.observers ? "ok" : "MISSED")"
                if let reply = shutdown.replies.first { line += "\n    first reply: \(reply.prefix(200))" }
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    static func padded(_ text: String, to width: Int = 52) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    func json(_ figures: [(key: String, label: String, series: Series)], _ shutdowns: [Shutdown], load: (Double, Double)) -> String {
        var object: [String: Any] = ["scenario": "isolation", "machine": MachineDescription.current.jsonObject, "rows": rows, "lookups": lookups,
                                     "hostile": hostile, "load_start": load.0, "load_end": load.1]
        for (key, _, series) in figures {
            object[key] = ["p50_ms": series.p50Milliseconds, "p99_ms": series.p99Milliseconds, "max_ms": series.maxMilliseconds, "calls": series.calls, "errors": series.errors]
        }
        object["shutdown"] = shutdowns.map { ["observers": $0.observers, "stopped_ms": $0.stopped.milliseconds, "answered": $0.answered] }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}

/// How many observers have sent their call.
final class OpenedCount: Sendable {
    let value = Atomic<Int>(0)
}

/// Clients each calling one expensive call without pause, one connection each, until stopped.
final class HostileLoad: Sendable {
    private let socket: String
    private let clients: Int
    private let call: VarlinkCall
    private let running = Atomic<Bool>(true)
    private let tasks = Mutex<[Task<IsolationBenchmark.Series, Never>]>([])

    init(socket: String, clients: Int, call: VarlinkCall) {
        self.socket = socket
        self.clients = clients
        self.call = call
    }

    func start() {
        let (socket, call) = (self.socket, self.call)
        tasks.withLock { tasks in
            tasks = (0..<clients).map { _ in
                Task { [self] in
                    var series = IsolationBenchmark.Series()
                    _ = try? await VarlinkClient.withConnection(to: socket) { connection in
                        while running.load(ordering: .relaxed) {
                            let started = ContinuousClock.now
                            try await connection.send(call)
                            let reply = try await connection.nextReply()
                            series.record(ContinuousClock.now - started, error: reply.error.map { "\($0) \(reply.parameters)" })
                        }
                    }
                    return series
                }
            }
        }
    }

    /// Stops the clients (each after its call in flight) and returns their calls, merged.
    func stop() async -> IsolationBenchmark.Series {
        running.store(false, ordering: .relaxed)
        var merged = IsolationBenchmark.Series()
        for task in tasks.withLock({ $0 }) {
            merged.add(await task.value)
        }
        return merged
    }
}
