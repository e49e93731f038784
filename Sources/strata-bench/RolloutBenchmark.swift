import ArgumentParser
import Foundation
import GRDB
import Logging
import Strata
import StrataVarlink

/// `strata-bench rollout`: a live upgrade with clients of two model versions at once, against a
/// real `stratad` process (docs/Rollout.md).
struct RolloutBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rollout",
        abstract: "A live upgrade served to clients of the old and the new model version at once: errors, lost writes, client latency; the cost of a call at an older version.",
        discussion: """
            A store of --rows items at `Roll 1` (Item: code, payload, rank, note) is hosted by \
            stratad (a process of its own, the shipped scheduler settings). --clients client \
            processes of Roll 1 (they name their version, and write code and note) call the data \
            socket, each one call every --interval-ms (insert, insert, update of one of its rows, \
            fetch of it by key); after --before-s seconds the configuration moves the store to \
            `Roll 2` (code renamed label, note removed, tier added with a default, an index on \
            rank) and `stratactl reload` applies it, the Roll 1 clients still calling; then \
            --clients processes of Roll 2 (naming no version) join, and both kinds call for \
            --seconds. The deferred cleanup that drops note stays held for the Roll 1 clients.

            Then the same run with one version only: a copy of the seed opened at Roll 2 from the \
            start, 2 x --clients Roll 2 clients for as long.

            Figures, each with its aim: calls refused or failed (0); acknowledged inserts missing \
            from the store after the run (0; read from the file once the daemon stopped); client \
            p99 of the two-version run / the one-version run (≤ 1.2); client max (≤ 50 ms), \
            with and without the calls that overlapped the reload (a reload closes the store and \
            opens it again: its calls wait for it); and the cost of a call at Roll 1 / the same \
            call at the store's version (≤ 1.2), --cost-calls sequential calls of each kind, \
            interleaved, by key lookups and inserts.

            To tell the daemon's stalls from the machine's: when the slowest call began and how \
            many calls over 50 ms overlapped it, of each version (every call at once points at \
            the store or the machine; only Roll 1's at the version bridge; each such call is \
            listed on standard error), and the longest stall of the block device during each \
            run, from the kernel's pressure stall information (/proc/pressure/io: at least 80% \
            of each 100 ms with a task waiting for I/O).

            Build in release mode for figures (`swift build -c release --product strata-bench \
            --product stratad`); a debug build runs it to check that it works.
            """
    )

    @Option(name: .long, help: "Items in the store.") var rows = 1_000_000
    @Option(name: .long, help: "Client processes per model version.") var clients = 4
    @Option(name: .customLong("interval-ms"), help: "Pause between a client's calls, in milliseconds.") var interval = 5
    @Option(name: .customLong("before-s"), help: "Seconds the Roll 1 clients call before the reload.") var beforeSeconds = 2.0
    @Option(name: .long, help: "Seconds both kinds of clients call after the reload (and the one-version run's length).") var seconds = 10.0
    @Option(name: .customLong("cost-calls"), help: "Calls of each kind measuring the cost of an older version's call.") var costCalls = 2000
    @Option(name: .long, help: "The stratad executable (default: beside this one).") var stratad: String?
    @OptionGroup var options: BenchOptions

    func validate() throws {
        guard rows >= 100 else { throw ValidationError("--rows must be at least 100") }
        guard clients > 0, interval >= 0, beforeSeconds > 0, seconds > 0, costCalls > 0 else {
            throw ValidationError("--clients, --before-s, --seconds and --cost-calls must be positive, --interval-ms not negative")
        }
    }

    func run() async throws {
        let directory = try BenchDirectory(path: options.directory, keep: options.keep)
        defer { directory.cleanUp() }
        let progress = Progress(enabled: !options.json)
        let executable = try UpgradeBenchmark.stratadExecutable(stratad)
        let models = try RolloutModel.write(in: directory.url)
        let seed = directory.url.appending(path: "seed.sqlite")
        progress.say("creating a Roll 1 store with \(rows) items…")
        try RolloutModel.seed(at: seed, models: models, rows: rows)
        let sockets = URL(filePath: "/tmp/sbr-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: sockets, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: sockets) }
        let runner = RolloutRunner(executable: executable, directory: directory.url, sockets: sockets, models: models,
                                   interval: .milliseconds(interval))
        let loadStart = UpgradeBenchmark.loadAverage()

        progress.say("two versions: \(clients) Roll 1 clients, reload to Roll 2 after \(beforeSeconds) s, then \(clients) Roll 2 clients for \(seconds) s…")
        let rollout = try await runner.rollout(seed: seed, clients: clients, before: .milliseconds(Int64(beforeSeconds * 1000)),
                                               after: .milliseconds(Int64(seconds * 1000)), costCalls: costCalls, rows: rows, progress: progress)
        progress.say("one version: \(2 * clients) Roll 2 clients for \(seconds) s…")
        let single = try await runner.singleVersion(seed: seed, clients: 2 * clients, duration: .milliseconds(Int64(seconds * 1000)), rows: rows)

        let report = RolloutReport(rows: rows, clients: clients, interval: interval, loadStart: loadStart, loadEnd: UpgradeBenchmark.loadAverage(),
                                   rollout: rollout, single: single)
        print(options.json ? report.json() : report.text())
    }
}

/// The benchmark's models: `Roll 1` → `Roll 2` renames code to label, removes note (a table
/// rewrite the roll-out holds), adds tier (with a default) and an index on rank.
enum RolloutModel {
    static let v1 = """
        version: Roll 1
        entities:
          - name: Item
            attributes:
              - {name: code, type: string}
              - {name: payload, type: string}
              - {name: rank, type: int64}
              - {name: note, type: string}
        """
    static let v2 = """
        version: Roll 2
        entities:
          - name: Item
            attributes:
              - {name: label, type: string, renamingIdentifier: code}
              - {name: payload, type: string}
              - {name: rank, type: int64}
              - {name: tier, type: string, optional: false, default: basic}
            indexes:
              - name: byRank
                elements: [rank]
        """

    static func write(in directory: URL) throws -> URL {
        let models = directory.appending(path: "models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        try v1.write(to: models.appending(path: "Roll 1.yaml"), atomically: true, encoding: .utf8)
        try v2.write(to: models.appending(path: "Roll 2.yaml"), atomically: true, encoding: .utf8)
        try "versions:\n  - Roll 1.yaml\n  - Roll 2.yaml\n".write(to: models.appending(path: "versions.yaml"), atomically: true, encoding: .utf8)
        return models
    }

    /// A store at Roll 1 with `rows` items.
    static func seed(at url: URL, models: URL, rows: Int) throws {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        let directory = try ModelDirectory(url: models)
        let store = try PersistentStore.open(at: url, model: directory.version(named: "Roll 1")!)
        try store.database.write { db in
            let item = try db.makeStatement(sql: "INSERT INTO Item(_pk, code, payload, rank, note) VALUES (?, ?, ?, ?, ?)")
            let payload = String(repeating: "strata-payload-", count: 12)
            for i in 1...rows { try item.execute(arguments: [i, "seed-\(i)", payload + String(i), i % 1000, "note \(i)"]) }
        }
        try store.checkpoint()
        try store.close()
    }
}

/// One run's figures.
struct RolloutRun: Sendable {
    var latency = LatencyRecorder()
    var maxMs = 0.0
    /// The slowest call that did not overlap the reload.
    var maxOutsideReloadMs = 0.0
    var calls = 0
    var errors: [String] = []
    var acknowledged = 0
    var missing = 0
    var reloadMs: Double?
    /// Held tasks while both versions ran (pending's `held`), as the daemon said it.
    var held: String?
    /// The slowest call: when it began (ms after the reload, or after the run's first call),
    /// and the calls over 50 ms that overlapped it, of each version — a stall every client
    /// meets at once is the machine's or the daemon's, one only older clients meet is the bridge's.
    var worst: (atMs: Double, oldSlow: Int, newSlow: Int)?
    /// The longest stall of the machine's block device during the run (``IOStallWatch``).
    var ioStall: IOStallWatch.Stall?
    /// The instant the run's times are counted from: the reload, or the first call.
    var origin: Int64 = 0
    var ioStallText: String { IOStallWatch.text(ioStall, origin: origin) }
    /// Cost of a call at Roll 1 / at the store's version: (lookup p50 old, new; insert p50 old, new) in µs.
    var cost: (lookupOld: Double, lookupNew: Double, insertOld: Double, insertNew: Double)?
}

/// Runs stratad and the client processes.
struct RolloutRunner {
    let executable: URL
    let directory: URL
    let sockets: URL
    let models: URL
    let interval: Duration

    var adminSocket: String { sockets.appending(path: "admin.sock").path }
    var dataSocket: String { sockets.appending(path: "data.sock").path }

    func admin<M: VarlinkMethod>(_ method: M.Type, _ parameters: M.Parameters) async throws -> M.Reply {
        try await VarlinkClient.withConnection(to: adminSocket) { try await $0.call(method, parameters) }
    }

    /// Writes the configuration (the store at `version`, the shipped scheduler).
    func configure(_ name: String, store: URL, version: String) throws -> String {
        let config = directory.appending(path: "\(name).yaml").path
        try """
            stores:
              - name: bench
                path: \(store.path)
                model: \(models.path)
                version: \(version)
                backup: false
            sockets:
              admin: {path: \(adminSocket), mode: "0600"}
              data: {path: \(dataSocket), mode: "0600"}
            log_level: info

            """.write(toFile: config, atomically: true, encoding: .utf8)
        return config
    }

    /// The two-version run.
    func rollout(seed: URL, clients: Int, before: Duration, after: Duration, costCalls: Int, rows: Int, progress: Progress) async throws -> RolloutRun {
        let store = try DeferralBenchmark.copy(seed, to: directory.appending(path: "rollout.sqlite"))
        let config = try configure("rollout", store: store, version: "Roll 1")
        let daemon = try BenchDaemon(executable: executable, config: config, log: directory.appending(path: "rollout.log").path, notifyDirectory: sockets)
        defer { daemon.stop() }
        let load = RolloutClientProcesses(socket: dataSocket, interval: interval)
        let stalls = IOStallWatch()
        try load.start(count: clients, firstNumber: 0, version: "Roll 1", old: true)
        try await Task.sleep(for: before)
        _ = try configure("rollout", store: store, version: "Roll 2")
        let reloadStart = monotonicNanoseconds()
        let reload = try await admin(StrataAdmin.Reload.self, VarlinkEmpty())
        let reloadEnd = monotonicNanoseconds()
        guard reload.opened == ["bench"] else { throw BenchError("the reload did not reopen the store: \(reload)") }
        try load.start(count: clients, firstNumber: clients, version: nil, old: false)
        try await Task.sleep(for: after)
        let held = try await admin(StrataAdmin.Pending.self, .init(store: "bench")).stores.first?.tasks.compactMap(\.held).first
        let answers = await load.stop()
        let stall = stalls.stop()

        progress.say("cost of a call at Roll 1 vs Roll 2: \(costCalls) of each…")
        let cost = try await Self.cost(socket: dataSocket, calls: costCalls, rows: rows)
        daemon.stop()
        var run = Self.figures(answers, reload: (reloadStart, reloadEnd), stall: stall)
        run.reloadMs = Double(reloadEnd - reloadStart) / 1e6
        run.held = held
        run.cost = cost
        run.missing = try Self.missing(answers.acknowledged, in: store, key: "label")
        return run
    }

    /// The one-version run: the store at Roll 2 from the start, every client of Roll 2.
    func singleVersion(seed: URL, clients: Int, duration: Duration, rows: Int) async throws -> RolloutRun {
        let store = try DeferralBenchmark.copy(seed, to: directory.appending(path: "single.sqlite"))
        let config = try configure("single", store: store, version: "Roll 2")
        let daemon = try BenchDaemon(executable: executable, config: config, log: directory.appending(path: "single.log").path, notifyDirectory: sockets)
        defer { daemon.stop() }
        let load = RolloutClientProcesses(socket: dataSocket, interval: interval)
        let stalls = IOStallWatch()
        try load.start(count: clients, firstNumber: 0, version: nil, old: false)
        try await Task.sleep(for: duration)
        let answers = await load.stop()
        let stall = stalls.stop()
        daemon.stop()
        var run = Self.figures(answers, reload: nil, stall: stall)
        run.missing = try Self.missing(answers.acknowledged, in: store, key: "label")
        return run
    }

    static func figures(_ answers: RolloutClientProcesses.Answers, reload: (Int64, Int64)?, stall: IOStallWatch.Stall?) -> RolloutRun {
        var run = RolloutRun()
        let firstCall = answers.calls.map(\.start).min() ?? 0
        run.origin = reload?.0 ?? firstCall
        run.ioStall = stall
        for call in answers.calls {
            run.latency.record(.nanoseconds(call.took))
            let ms = Double(call.took) / 1e6
            run.maxMs = max(run.maxMs, ms)
            let overlaps = reload.map { call.start < $0.1 && call.start + call.took > $0.0 } ?? false
            if !overlaps { run.maxOutsideReloadMs = max(run.maxOutsideReloadMs, ms) }
        }
        if let worst = answers.calls.max(by: { $0.took < $1.took }) {
            let origin = run.origin
            let overlapping = answers.calls.filter { call in
                call.took > 50_000_000 && call.start < worst.start + worst.took && call.start + call.took > worst.start
            }
            run.worst = (Double(worst.start - origin) / 1e6, overlapping.filter(\.old).count, overlapping.filter { !$0.old }.count)
            for call in answers.calls.filter({ $0.took > 50_000_000 }).sorted(by: { $0.start < $1.start }).prefix(20) {
                let when = reload == nil
                    ? String(format: "%.3f s after the first call", Double(call.start - firstCall) / 1e9)
                    : String(format: "%+.3f s after the reload (%.3f s after the first call)", Double(call.start - origin) / 1e9, Double(call.start - firstCall) / 1e9)
                FileHandle.standardError.write(Data("strata-bench: a call over 50 ms: \(String(format: "%.1f", Double(call.took) / 1e6)) ms, began \(when), \(call.old ? "Roll 1" : "Roll 2") client\n".utf8))
            }
        }
        run.calls = answers.calls.count
        run.errors = answers.errors
        run.acknowledged = answers.acknowledged.count
        return run
    }

    /// The acknowledged inserts not in the store file (read after the daemon stopped): by
    /// primary key, with the code the client wrote under its own name of the column.
    static func missing(_ acknowledged: [Int64: String], in store: URL, key: String) throws -> Int {
        let queue = try DatabaseQueue(path: store.path)
        let found = try queue.read { db in
            try Dictionary(Row.fetchAll(db, sql: "SELECT _pk, \(key) FROM Item WHERE _pk >= ?", arguments: [acknowledged.keys.min() ?? 0])
                .map { ($0["_pk"] as Int64, $0[key] as String? ?? "") }, uniquingKeysWith: { first, _ in first })
        }
        return acknowledged.filter { found[$0.key] != $0.value }.count
    }

    /// p50 of lookups by key and inserts at Roll 1 and at the store's version, interleaved on
    /// one connection, in µs.
    static func cost(socket: String, calls: Int, rows: Int) async throws -> (Double, Double, Double, Double) {
        var lookups = [LatencyRecorder(), LatencyRecorder()], inserts = [LatencyRecorder(), LatencyRecorder()]
        try await VarlinkClient.withConnection(to: socket) { data in
            let clock = ContinuousClock()
            for i in 0..<calls {
                for (index, version) in [(0, "Roll 1" as String?), (1, nil)] {
                    let id = Int64(1 + (i * 7919) % rows)
                    var start = clock.now
                    _ = try await data.call(StrataStore.Fetch.self, .init(store: "bench", entity: "Item", predicate: "SELF == %@", arguments: [.int(id)], version: version))
                    lookups[index].record(clock.now - start)
                    let values: [String: JSONValue] = index == 0 ? ["code": .string("cost-\(i)"), "note": "n"] : ["label": .string("cost-\(i)"), "tier": "t"]
                    start = clock.now
                    _ = try await data.call(StrataStore.Insert.self, .init(store: "bench", entity: "Item", values: .object(values), version: version))
                    inserts[index].record(clock.now - start)
                }
            }
        }
        return (lookups[0].p50Microseconds, lookups[1].p50Microseconds, inserts[0].p50Microseconds, inserts[1].p50Microseconds)
    }
}

/// What `strata-bench rollout` prints.
struct RolloutReport {
    let rows: Int
    let clients: Int
    let interval: Int
    let loadStart: Double
    let loadEnd: Double
    let rollout: RolloutRun
    let single: RolloutRun

    var p99Ratio: Double { rollout.latency.p99Microseconds / max(single.latency.p99Microseconds, 1) }
    var lookupRatio: Double? { rollout.cost.map { $0.lookupOld / max($0.lookupNew, 1) } }
    var insertRatio: Double? { rollout.cost.map { $0.insertOld / max($0.insertNew, 1) } }

    func text() -> String {
        func check(_ ok: Bool) -> String { ok ? "ok" : "MISSED" }
        func ms(_ microseconds: Double) -> String { String(format: "%.2f ms", microseconds / 1000) }
        var lines = [
            "strata-bench rollout: \(rows) rows, \(clients) Roll 1 + \(clients) Roll 2 client processes, one call every \(interval) ms each; load average \(String(format: "%.2f", loadStart)) → \(String(format: "%.2f", loadEnd))",
            "",
            "                         two versions      one version",
            "calls                    \(pad(rollout.calls))\(single.calls)",
            "errors                   \(pad(rollout.errors.count))\(single.errors.count)    aim 0: \(check(rollout.errors.isEmpty))",
            "acknowledged inserts     \(pad(rollout.acknowledged))\(single.acknowledged)",
            "  missing from the store \(pad(rollout.missing))\(single.missing)    aim 0: \(check(rollout.missing == 0 && single.missing == 0))",
            "client p50               \(pad(ms(rollout.latency.p50Microseconds)))\(ms(single.latency.p50Microseconds))",
            "client p99               \(pad(ms(rollout.latency.p99Microseconds)))\(ms(single.latency.p99Microseconds))    ratio \(String(format: "%.2f", p99Ratio)) (aim ≤ 1.2: \(check(p99Ratio <= 1.2)))",
            "client max               \(pad(String(format: "%.2f ms", rollout.maxMs)))\(String(format: "%.2f ms", single.maxMs))    aim ≤ 50 ms: \(check(rollout.maxMs <= 50))",
            "  outside the reload     \(pad(String(format: "%.2f ms", rollout.maxOutsideReloadMs)))",
            "  slowest call (> 50 ms) \(pad(Self.worstText(rollout.worst)))\(Self.worstText(single.worst))",
            "device I/O stall (PSI)   \(pad(rollout.ioStallText))\(single.ioStallText)",
            "reload (close, migrate, open)  \(rollout.reloadMs.map { String(format: "%.1f ms", $0) } ?? "-")",
            "cleanup while both ran   \(rollout.held ?? "not held")",
        ]
        if let cost = rollout.cost, let lookupRatio, let insertRatio {
            lines += [
                "",
                "cost of a call at Roll 1 vs the store's version (p50, one connection, interleaved):",
                "  lookup by key          \(ms(cost.lookupOld)) vs \(ms(cost.lookupNew))    ratio \(String(format: "%.2f", lookupRatio)) (aim ≤ 1.2: \(check(lookupRatio <= 1.2)))",
                "  insert                 \(ms(cost.insertOld)) vs \(ms(cost.insertNew))    ratio \(String(format: "%.2f", insertRatio)) (aim ≤ 1.2: \(check(insertRatio <= 1.2)))",
            ]
        }
        for error in rollout.errors.prefix(5) { lines.append("error: \(error)") }
        return lines.joined(separator: "\n")
    }

    /// "+12.3 s, 7 slow (4 old)": when the slowest call began (after the reload; in the
    /// one-version run, after its first call), and the calls over 50 ms beside it.
    static func worstText(_ worst: (atMs: Double, oldSlow: Int, newSlow: Int)?) -> String {
        guard let worst, worst.oldSlow + worst.newSlow > 0 else { return "none over 50 ms" }
        return String(format: "%+.1f s", worst.atMs / 1000) + ", \(worst.oldSlow + worst.newSlow) slow (\(worst.oldSlow) old)"
    }

    private func pad(_ value: Any) -> String {
        let text = "\(value)"
        return text + String(repeating: " ", count: max(1, 18 - text.count))
    }

    func json() -> String {
        var object: [String: Any] = [
            "rows": rows, "clients": clients, "intervalMs": interval, "loadStart": loadStart, "loadEnd": loadEnd,
            "errors": rollout.errors.count, "singleErrors": single.errors.count,
            "acknowledged": rollout.acknowledged, "missing": rollout.missing, "singleMissing": single.missing,
            "p50Ms": rollout.latency.p50Microseconds / 1000, "p99Ms": rollout.latency.p99Microseconds / 1000,
            "singleP50Ms": single.latency.p50Microseconds / 1000, "singleP99Ms": single.latency.p99Microseconds / 1000,
            "p99Ratio": p99Ratio, "maxMs": rollout.maxMs, "maxOutsideReloadMs": rollout.maxOutsideReloadMs, "singleMaxMs": single.maxMs,
            "reloadMs": rollout.reloadMs ?? 0, "held": rollout.held ?? "",
        ]
        object["ioStallSeconds"] = rollout.ioStall?.seconds ?? 0
        object["singleIOStallSeconds"] = single.ioStall?.seconds ?? 0
        if let worst = rollout.worst { object["worstAtMs"] = worst.atMs; object["worstOldSlow"] = worst.oldSlow; object["worstNewSlow"] = worst.newSlow }
        if let lookupRatio, let insertRatio { object["lookupCostRatio"] = lookupRatio; object["insertCostRatio"] = insertRatio }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
