import ArgumentParser
import Foundation
import Histogram
import Logging
import Strata
import StrataVarlink
import Synchronization

/// `strata-bench history`: what change history costs writes (history on vs off, same work
/// alternated batch by batch, each side first every other batch), and observer fan-out
/// through the real stratad (N observers on one store while clients write at a set rate):
/// writes per second, observer delay, daemon RSS.
struct HistoryBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Write throughput with history on vs off; observer fan-out through stratad (delay p99, RSS).",
        discussion: """
            Throughput: two Strata stores, history on ("strata" column) and off ("raw GRDB" \
            column reads "history off"), get the same inserts (--rows in batches of --batch-size, \
            and --single one-object saves), updates of 10% and deletes of another 10%, alternated \
            batch by batch, each side going first every other batch. Ratio \
            = on / off time; the aim is ≤ 1.15.

            Fan-out: the release stratad (next to this binary, or --stratad) hosts one store; \
            --observers clients call io.strata.Store.Observe; --writers clients insert at \
            --rate objects per second in all (one transaction each) for --seconds. Delay is the \
            observer's receive time minus the transaction's recorded time (ms precision).
            """
    )

    @Option(name: .long, help: "Objects inserted in batches.") var rows = 200_000
    @Option(name: .long, help: "Objects per batch save.") var batchSize = 1_000
    @Option(name: .long, help: "One-object saves.") var single = 5_000
    @Option(name: .long, help: "Observers for the fan-out (0 skips it).") var observers = 100
    @Option(name: .long, help: "Writer connections for the fan-out.") var writers = 4
    @Option(name: .long, help: "Writes per second in all.") var rate = 1_000
    @Option(name: .long, help: "Seconds of writing.") var seconds = 10
    @Option(name: .long, help: "The stratad executable (default: next to this binary).") var stratad: String?
    @OptionGroup var options: BenchOptions

    func validate() throws {
        guard rows > 0, batchSize > 0, single >= 0, observers >= 0, writers > 0, rate > 0, seconds > 0 else {
            throw ValidationError("--rows, --batch-size, --writers, --rate and --seconds must be positive; --single and --observers not negative")
        }
    }

    func run() async throws {
        let directory = try BenchDirectory(path: options.directory, keep: options.keep)
        defer { directory.cleanUp() }
        let progress = Progress(enabled: !options.json)
        var report = BenchReport(scenario: "history")
        report.parameters = [("rows", rows), ("batch_size", batchSize), ("single", single), ("observers", observers), ("rate", rate), ("seconds", seconds)]
        report.targets = ["insert": 1.15, "update": 1.15, "delete": 1.15, "insert_single": 1.15]
        try throughput(in: directory.url, report: &report, progress: progress)
        if observers > 0 {
            try await fanOut(in: directory.url, report: &report, progress: progress)
        }
        report.notes.append("throughput rows: strata = history on, raw GRDB = history off (same Strata code, StoreOptions.recordsHistory); ratio above 1 is history's cost.")
        print(options.json ? report.json : report.text)
    }

    // MARK: - Throughput

    func throughput(in directory: URL, report: inout BenchReport, progress: Progress) throws {
        var logger = Logger(label: "io.strata.bench")
        logger.logLevel = .warning
        let data = CRUDDataSet(rows: rows, batchSize: batchSize)
        let off = try PersistentStore.open(at: directory.appending(path: "raw-grdb.sqlite"), model: CRUDDataSet.model,
                                           options: StoreOptions(logger: logger, recordsHistory: false))
        let on = try PersistentStore.open(at: directory.appending(path: "strata.sqlite"), model: CRUDDataSet.model,
                                          options: StoreOptions(logger: logger, recordsHistory: true))
        let sides = [StrataCRUDWorkload(store: off, data: data), StrataCRUDWorkload(store: on, data: data)]
        defer { for side in sides { try? side.close() } }
        progress.say("insert \(rows) rows in batches of \(batchSize), history off and on…")
        var times = try CRUDBenchmark.timeInTurns(sides, data.insertBatches) { _, side, batch in try side.insert(batch) }
        report.add(BenchFigure(key: "insert", label: "insert \(rows) rows (batches)", unit: "ms", strata: times[1].milliseconds, raw: times[0].milliseconds))
        progress.say("update 10%…")
        times = try CRUDBenchmark.timeInTurns(sides, data.updateBatches, prepare: { side, colors in try side.prepareBatch(colors: colors) }) { _, side, _ in
            _ = try side.updatePrepared()
        }
        report.add(BenchFigure(key: "update", label: "update 10% (batches)", unit: "ms", strata: times[1].milliseconds, raw: times[0].milliseconds))
        progress.say("delete another 10%…")
        times = try CRUDBenchmark.timeInTurns(sides, data.deleteBatches, prepare: { side, colors in try side.prepareBatch(colors: colors) }) { _, side, _ in
            _ = try side.deletePrepared()
        }
        report.add(BenchFigure(key: "delete", label: "delete 10% (batches)", unit: "ms", strata: times[1].milliseconds, raw: times[0].milliseconds))
        if single > 0 {
            progress.say("\(single) one-object saves…")
            let singles = CRUDDataSet(rows: rows + single, batchSize: 1)
            let workloads = [StrataCRUDWorkload(store: off, data: singles), StrataCRUDWorkload(store: on, data: singles)]
            times = try CRUDBenchmark.timeInTurns(workloads, rows..<(rows + single)) { _, side, n in try side.insert(n..<(n + 1)) }
            report.add(BenchFigure(key: "insert_single", label: "insert \(single) × 1 object", unit: "saves/s",
                                   strata: Double(single) / times[1].seconds, raw: Double(single) / times[0].seconds, higherIsBetter: true))
        }
    }

    // MARK: - Fan-out

    func fanOut(in directory: URL, report: inout BenchReport, progress: Progress) async throws {
        let executable = try UpgradeBenchmark.stratadExecutable(stratad)
        let (daemon, dataSocket) = try BenchDaemon.serving(store: "bench", at: directory.appending(path: "fanout.sqlite"), prefix: "fanout",
                                                           in: directory, executable: executable, maxConnections: observers + writers + 16)
        defer { daemon.stop() }
        progress.say("\(observers) observers, \(writers) writers at \(rate) writes/s for \(seconds)s…")
        let total = rate * seconds
        let counters = FanOutCounters()
        let parse = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let rssBefore = Self.rssMegabytes(daemon.pid)
        let (writeTime, observed) = try await withThrowingTaskGroup(of: Duration?.self) { group -> (Duration, Int) in
            for _ in 0..<observers {
                group.addTask {
                    try await VarlinkClient.withConnection(to: dataSocket) { connection in
                        try await connection.send(VarlinkCall(method: StrataStore.Observe.qualifiedName, parameters: ["store": "bench"], more: true))
                        _ = try await connection.nextReply()
                        counters.subscribed.add(1, ordering: .relaxed)
                        var seen = 0
                        while seen < total {
                            let reply = try await connection.nextReply()
                            if let error = reply.error { throw BenchError("observer: \(error) \(reply.parameters)") }
                            let now = Date()
                            guard let time = reply.parameters["transaction"]?["time"]?.stringValue, let at = try? parse.parse(time) else { continue }
                            let micros = UInt64(max(0, now.timeIntervalSince(at)) * 1_000_000)
                            counters.delays.withLock { _ = $0.record(micros) }
                            seen += 1
                            counters.received.add(1, ordering: .relaxed)
                        }
                    }
                    return nil
                }
            }
            while counters.subscribed.load(ordering: .relaxed) < observers { try await Task.sleep(for: .milliseconds(10)) }
            let started = ContinuousClock.now
            for w in 0..<writers {
                group.addTask {
                    let share = total / writers + (w < total % writers ? 1 : 0)
                    let interval = Duration.seconds(Double(writers) / Double(rate))
                    try await VarlinkClient.withConnection(to: dataSocket) { connection in
                        for n in 0..<share {
                            let due = started + interval * n
                            if ContinuousClock.now < due { try await Task.sleep(until: due) }
                            _ = try await connection.call(StrataStore.Insert.self, .init(
                                store: "bench", entity: "Aircraft", values: ["tailNumber": .string("W\(w)-\(n)")]))
                        }
                    }
                    return ContinuousClock.now - started
                }
            }
            var longest = Duration.zero
            for try await result in group { if let result { longest = max(longest, result) } }
            return (longest, counters.received.load(ordering: .relaxed))
        }
        let rssAfter = Self.rssMegabytes(daemon.pid)
        let histogram = counters.delays.withLock { $0 }
        let ms = { (p: Double) in Double(histogram.valueAtPercentile(p)) / 1000 }
        report.add(BenchFigure(key: "fanout_writes", label: "writes/s with \(observers) observers", unit: "writes/s",
                               strata: Double(total) / writeTime.seconds, raw: Double(rate), higherIsBetter: true))
        report.add(BenchFigure(key: "fanout_delay_p50", label: "observer delay p50", unit: "ms", strata: ms(50), raw: 10))
        report.add(BenchFigure(key: "fanout_delay_p99", label: "observer delay p99", unit: "ms", strata: ms(99), raw: 10))
        report.add(BenchFigure(key: "fanout_delay_max", label: "observer delay max", unit: "ms", strata: Double(histogram.max) / 1000, raw: 10))
        report.add(BenchFigure(key: "fanout_rss", label: "stratad RSS before → after", unit: "MiB", strata: rssAfter, raw: rssBefore))
        report.notes.append("fan-out rows: raw GRDB column = the aim (target rate, 10 ms delay) or RSS before the writes; \(observed) of \(total * observers) deliveries counted; peak RSS \(String(format: "%.1f", daemon.peakRSSMegabytes)) MiB.")
    }

    static func rssMegabytes(_ pid: Int32) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else { return 0 }
        return kilobytes / 1024
    }
}

/// What the fan-out's observer tasks share.
final class FanOutCounters: Sendable {
    let delays = Mutex(Histogram<UInt64>(highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: .three))
    let received = Atomic<Int>(0)
    let subscribed = Atomic<Int>(0)
}
