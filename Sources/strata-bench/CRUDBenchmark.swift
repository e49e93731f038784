import ArgumentParser
import Foundation
import Logging
import Strata

/// `strata-bench crud`: batch insert, fetch by an indexed composite leaf, update and delete
/// 10%, each next to raw GRDB running the same SQL.
struct CRUDBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crud",
        abstract: "Insert, fetch, update and delete through Strata and through raw GRDB; print the ratios.",
        discussion: """
            Two stores with the same schema (created by Strata, same connection settings) get \
            the same work, alternating raw GRDB and Strata batch by batch (fetch by fetch):

              insert  --rows objects in batches of --batch-size, one transaction per batch
              fetch   --fetches fetches of "colorScheme.primary == %@" (an indexed composite \
            leaf; about 100 objects each), after --warmup untimed ones; mean, p50, p99
              update  flightHours of 10% of the objects (batches of about --batch-size, one \
            transaction each; loading the batch is not timed)
              delete  another 10%, the same way

            Ratios are Strata / raw GRDB time: 1.00 means no overhead. Targets: insert ≤ 1.15, \
            fetch ≤ 1.1, update ≤ 1.2, delete ≤ 1.15 (issue 25). Strata's store records change history \
            unless --no-history. Build with -c release for meaningful figures.
            """
    )

    @Option(name: .long, help: "Objects to insert.")
    var rows = 1_000_000

    @Option(name: .long, help: "Objects per save (transaction).")
    var batchSize = 10_000

    @Option(name: .long, help: "Timed fetches per side.")
    var fetches = 2_000

    @Option(name: .long, help: "Untimed fetches per side before the timed ones.")
    var warmup = 200

    @Flag(name: .long, help: "Strata's store records no change history (the object layer alone; history's own cost is the history scenario's).")
    var noHistory = false

    @Flag(name: .long, help: "Compare StrataData's typed layer (@Model, FetchDescriptor, #Predicate) with GRDB's Codable records and query interface, instead of the string-keyed API with raw GRDB.")
    var typed = false

    @OptionGroup var options: BenchOptions

    func validate() throws {
        guard rows > 0, batchSize > 0, fetches > 0, warmup >= 0 else {
            throw ValidationError("--rows, --batch-size and --fetches must be positive, --warmup not negative")
        }
    }

    func run() throws {
        let directory = try BenchDirectory(path: options.directory, keep: options.keep)
        defer { directory.cleanUp() }
        let data = CRUDDataSet(rows: rows, batchSize: batchSize)
        var logger = Logger(label: "io.strata.bench")
        logger.logLevel = .warning
        let storeOptions = StoreOptions(logger: logger)
        let rawStore = try PersistentStore.open(at: directory.url.appending(path: "raw-grdb.sqlite"), model: CRUDDataSet.model, options: storeOptions)
        let strataStore = try PersistentStore.open(at: directory.url.appending(path: "strata.sqlite"), model: CRUDDataSet.model,
                                                   options: StoreOptions(logger: logger, recordsHistory: !noHistory))
        // Index 0 is the baseline, 1 Strata.
        let sides: [any CRUDWorkload] = typed
            ? [GRDBRecordsCRUDWorkload(store: rawStore, data: data), TypedCRUDWorkload(store: strataStore, data: data)]
            : [try RawGRDBCRUDWorkload(store: rawStore, data: data), StrataCRUDWorkload(store: strataStore, data: data)]
        defer { for side in sides { try? side.close() } }

        let progress = Progress(enabled: !options.json)
        var report = BenchReport(scenario: typed ? "crud-typed" : "crud")
        if typed { report.columnNames = ("typed", "GRDB records") }
        report.parameters = [("rows", rows), ("batch_size", batchSize), ("fetches", fetches), ("colors", data.colors), ("history", !noHistory),
                             ("typed", typed)]
        // Typed (issue 46): every figure within 1.15x of GRDB's Codable records.
        report.targets = typed ? ["insert": 1.15, "fetch": 1.15, "update": 1.15, "delete": 1.15, "fetch_all": 1.15]
            : ["insert": 1.15, "fetch": 1.10, "update": 1.20, "delete": 1.15]

        // Each phase alternates the two sides batch by batch (fetch by fetch), each going first
        // every other round, so that load from other processes hits both alike.

        // Insert.
        progress.say("insert \(rows) rows in batches of \(batchSize)…")
        let insertTimes = try Self.timeInTurns(sides, data.insertBatches) { _, side, batch in try side.insert(batch) }
        report.add(BenchFigure(key: "insert", label: "insert \(rows) rows", unit: "ms", strata: insertTimes[1].milliseconds, raw: insertTimes[0].milliseconds))
        report.add(BenchFigure(key: "insert_rate", label: "insert rate", unit: "rows/s", strata: Double(rows) / insertTimes[1].seconds,
                               raw: Double(rows) / insertTimes[0].seconds, higherIsBetter: true))

        // Fetch.
        progress.say("fetch × \(fetches) per side…")
        for n in 0..<warmup {
            for side in sides { _ = try side.fetch(color: data.fetchColor(n)) }
        }
        var latencies = [LatencyRecorder(), LatencyRecorder()]
        var checksums = [0, 0]
        for n in 0..<fetches {
            for (i, side) in Self.turns(sides, round: n) { checksums[i] &+= try latencies[i].measure { try side.fetch(color: data.fetchColor(n)) } }
        }
        if checksums[0] != checksums[1] { throw BenchError("fetch results differ between raw GRDB and Strata (checksums \(checksums))") }
        report.add(BenchFigure(key: "fetch", label: "fetch by colorScheme.primary (mean)", unit: "µs",
                               strata: latencies[1].meanMicroseconds, raw: latencies[0].meanMicroseconds))
        report.add(BenchFigure(key: "fetch_p50", label: "fetch p50", unit: "µs", strata: latencies[1].p50Microseconds, raw: latencies[0].p50Microseconds))
        report.add(BenchFigure(key: "fetch_p99", label: "fetch p99", unit: "µs", strata: latencies[1].p99Microseconds, raw: latencies[0].p99Microseconds))

        // Fetch all (typed runs only: the issue's fetch-all figure), a few rounds.
        if typed {
            progress.say("fetch all × 3 per side…")
            var counts = [0, 0]
            let times = try Self.timeInTurns(sides, 0..<3) { i, side, _ in counts[i] = try side.fetchAll() }
            if counts[0] != counts[1] { throw BenchError("fetch all read \(counts[0]) rows with GRDB records but \(counts[1]) typed") }
            report.add(BenchFigure(key: "fetch_all", label: "fetch all \(counts[1]) rows (×3)", unit: "ms", strata: times[1].milliseconds, raw: times[0].milliseconds))
        }

        // Update and delete 10%.
        for (key, batches) in [("update", data.updateBatches), ("delete", data.deleteBatches)] {
            progress.say("\(key) 10%…")
            var counts = [0, 0]
            let times = try Self.timeInTurns(sides, batches, prepare: { side, colors in try side.prepareBatch(colors: colors) }) { i, side, _ in
                counts[i] += key == "update" ? try side.updatePrepared() : try side.deletePrepared()
            }
            if counts[0] != counts[1] { throw BenchError("\(key) touched \(counts[0]) rows with raw GRDB but \(counts[1]) with Strata") }
            report.add(BenchFigure(key: key, label: "\(key) \(counts[1]) rows", unit: "ms", strata: times[1].milliseconds, raw: times[0].milliseconds))
        }
        report.notes.append(typed
            ? "ratio = StrataData typed / GRDB Codable records (time); above 1 means the typed layer is slower. Same schema, batches and transactions."
            : "ratio = Strata / raw GRDB (time); above 1 means Strata is slower. Same schema, SQL, batches and transactions.")
        print(options.json ? report.json : report.text)
    }

    /// The two sides with their indexes, in turn order for `round`: first one first, then the
    /// other first (ABBA), so that what one side's writes leave behind (dirty pages the kernel
    /// writes back, a warm or cold cache) falls on each side alike.
    static func turns<Side>(_ sides: [Side], round: Int) -> [(offset: Int, element: Side)] {
        let enumerated = sides.enumerated().map { (offset: $0.offset, element: $0.element) }
        return round % 2 == 0 ? enumerated : enumerated.reversed()
    }

    /// Each side's total time of `measure` over `rounds`, the sides taking turns in each round
    /// (``turns(_:round:)``); `prepare` runs before each measured step, untimed. `measure` gets
    /// the side's index.
    static func timeInTurns<Side, Round>(_ sides: [Side], _ rounds: some Sequence<Round>,
                                         prepare: (Side, Round) throws -> Void = { _, _ in },
                                         measure: (Int, Side, Round) throws -> Void) rethrows -> [Duration] {
        var times = Array(repeating: Duration.zero, count: sides.count)
        for (round, item) in rounds.enumerated() {
            for (i, side) in turns(sides, round: round) {
                try prepare(side, item)
                times[i] += try time { try measure(i, side, item) }
            }
        }
        return times
    }

    static func time(_ body: () throws -> Void) rethrows -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        try body()
        return clock.now - start
    }
}

/// Progress lines on standard error (text mode only).
struct Progress {
    var enabled: Bool
    func say(_ line: String) {
        guard enabled else { return }
        FileHandle.standardError.write(Data("strata-bench: \(line)\n".utf8))
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Where a benchmark keeps its stores: a given directory, or a new temporary one removed afterwards.
struct BenchDirectory {
    let url: URL
    let remove: Bool

    init(path: String?, keep: Bool) throws {
        if let path {
            url = URL(filePath: path)
            remove = false
        } else {
            url = FileManager.default.temporaryDirectory.appending(path: "strata-bench-\(UUID().uuidString)")
            remove = !keep
        }
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        for name in ["raw-grdb.sqlite", "strata.sqlite"] {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(at: url.appending(path: name + suffix)) }
        }
    }

    func cleanUp() {
        if remove { try? FileManager.default.removeItem(at: url) }
    }
}
