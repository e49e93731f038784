import ArgumentParser
import Foundation
import GRDB
import Logging
import Strata

/// `strata-bench deferral`: what deferring migration cleanup buys, measured against what users
/// do today (the sqlite3 CLI running `ALTER TABLE … DROP COLUMN` and `CREATE INDEX`).
struct DeferralBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deferral",
        abstract: "Open-to-usable with and without deferral, online finishing vs the sqlite3 CLI, foreground write latency.",
        discussion: """
            A store of --rows items (about 250 bytes each: 1,000,000 rows make a store over 200 MB) \
            migrates to a version that removes two attributes, adds an index and turns an ordered \
            to-many relationship unordered. Measured in one run, on copies of the same store:

              1. open-to-usable with deferral on (lightweight migration at open)
              2. the same with deferral off (cleanup runs before open returns)
              3. the sqlite3 CLI: ALTER TABLE … DROP COLUMN ×3 and CREATE INDEX (today's baseline)
              4. finishing the deferred work online, versus 3
              5. foreground write latency (p50/p99/max) from a second connection: idle, during 4, during 3

            The foreground writer updates one random row every --write-interval-ms, with a busy \
            handler that retries every millisecond. Targets: 1 under 100 ms and at least 50x \
            faster than 2; 4 within 1.5x of 3; foreground p99 during finishing under 25 ms.
            """
    )

    @Option(name: .long, help: "Items in the store.") var rows = 1_000_000
    @Option(name: .customLong("batch-ms"), help: "Finishing batch budget, in milliseconds.") var batchMilliseconds = 10
    @Option(name: .customLong("pause-ms"), help: "Pause after each finishing batch, in milliseconds.") var pauseMilliseconds = 1
    @Option(name: .customLong("write-interval-ms"), help: "Interval between foreground writes, in milliseconds.") var writeInterval = 5
    @Option(name: .customLong("idle-seconds"), help: "How long to measure idle foreground latency.") var idleSeconds = 2.0
    @OptionGroup var options: BenchOptions

    static let v1 = ObjectModel(version: "Bench 1", entities: [
        Entity("Owner", attributes: [Attribute("name", .string)], relationships: [
            Relationship("items", destination: "Item", inverse: "owner", toMany: true, ordered: true),
        ]),
        Entity("Item", attributes: [
            Attribute("name", .string), Attribute("payload", .string), Attribute("rank", .int64),
            Attribute("legacyNote", .string), Attribute("legacyScore", .int64),
        ], relationships: [Relationship("owner", destination: "Owner", inverse: "items")]),
    ])
    static let v2 = ObjectModel(version: "Bench 2", entities: [
        Entity("Owner", attributes: [Attribute("name", .string)], relationships: [
            Relationship("items", destination: "Item", inverse: "owner", toMany: true),
        ]),
        Entity("Item", attributes: [Attribute("name", .string), Attribute("payload", .string), Attribute("rank", .int64)],
               relationships: [Relationship("owner", destination: "Owner", inverse: "items")],
               indexes: [Index("byRank", keyPaths: ["rank"])]),
    ])

    func validate() throws {
        guard rows >= 1000 else { throw ValidationError("--rows must be at least 1000") }
        guard batchMilliseconds > 0, pauseMilliseconds >= 0, writeInterval > 0 else { throw ValidationError("durations must be positive") }
    }

    func run() async throws {
        let directory = try BenchDirectory(path: options.directory, keep: options.keep)
        defer { directory.cleanUp() }
        let progress = Progress(enabled: !options.json)
        var logger = Logger(label: "io.strata.bench")
        logger.logLevel = .warning

        progress.say("creating a v1 store with \(rows) items…")
        let seed = directory.url.appending(path: "seed.sqlite")
        try Self.createSeed(at: seed, rows: rows, logger: logger)
        let sizeMB = Double((try FileManager.default.attributesOfItem(atPath: seed.path)[.size] as? NSNumber)?.intValue ?? 0) / 1_048_576
        let deferredURL = try Self.copy(seed, to: directory.url.appending(path: "deferred.sqlite"))
        let syncURL = try Self.copy(seed, to: directory.url.appending(path: "sync.sqlite"))
        let cliURL = try Self.copy(seed, to: directory.url.appending(path: "cli.sqlite"))

        // 1. Open with deferral.
        progress.say("1/5 open with deferral…")
        let clock = ContinuousClock()
        var start = clock.now
        var openLogger = logger
        openLogger.logLevel = options.json ? .warning : .notice   // shows the migration's phase timings
        let store = try PersistentStore.open(at: deferredURL, model: Self.v2, options: StoreOptions(migration: .deferred, logger: openLogger))   // also logs each finished task
        let openDeferred = clock.now - start
        let pending = try store.pendingDeferredWork()

        // 2. Open without deferral.
        progress.say("2/5 open without deferral…")
        start = clock.now
        let syncStore = try PersistentStore.open(at: syncURL, model: Self.v2, options: StoreOptions(migration: .immediate, logger: logger))
        let openSync = clock.now - start
        try syncStore.close()

        // 5a. Foreground latency while idle.
        progress.say("5/5 foreground writes while idle (\(idleSeconds) s)…")
        let idle = try ForegroundWriter(url: deferredURL, rows: rows, interval: .milliseconds(writeInterval))
        idle.start()
        try await Task.sleep(for: .milliseconds(Int(idleSeconds * 1000)))
        let idleLatency = idle.stop()

        // 4. Finish online, with the foreground writer running.
        progress.say("4/5 finishing \(pending.count) deferred task(s) online…")
        let during = try ForegroundWriter(url: deferredURL, rows: rows, interval: .milliseconds(writeInterval))
        during.start()
        start = clock.now
        let report = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(batchMilliseconds),
                                                                           pauseBetweenBatches: .milliseconds(pauseMilliseconds)))
        let finish = clock.now - start
        let finishLatency = during.stop()
        let writesDuringFinish = finishLatency.count
        try store.close()

        // 3. The sqlite3 CLI, with the foreground writer running.
        progress.say("3/5 sqlite3 CLI: ALTER TABLE … DROP COLUMN, CREATE INDEX…")
        let cliWriter = try ForegroundWriter(url: cliURL, rows: rows, interval: .milliseconds(writeInterval))
        cliWriter.start()
        start = clock.now
        try Self.runSQLiteCLI(cliURL, sql: """
            ALTER TABLE "Item" DROP COLUMN "legacyNote";
            ALTER TABLE "Item" DROP COLUMN "legacyScore";
            ALTER TABLE "Item" DROP COLUMN "owner_order";
            CREATE INDEX "Item_byRank" ON "Item" ("rank");
            """)
        let cli = clock.now - start
        let cliLatency = cliWriter.stop()

        let results: [(String, Any)] = [
            ("rows", rows), ("store_mb", (sizeMB * 10).rounded() / 10), ("deferred_tasks", pending.count),
            ("open_deferred_ms", Self.ms(openDeferred)), ("open_sync_ms", Self.ms(openSync)),
            ("open_speedup", Self.round(openSync.seconds / max(openDeferred.seconds, 1e-9))),
            ("sqlite_cli_ms", Self.ms(cli)), ("finish_ms", Self.ms(finish)),
            ("finish_vs_cli_ratio", Self.round(finish.seconds / max(cli.seconds, 1e-9))),
            ("finish_batches", report.batches), ("finish_rows", report.rowsProcessed),
            ("foreground_p50_idle_ms", idleLatency.p50), ("foreground_p99_idle_ms", idleLatency.p99), ("foreground_max_idle_ms", idleLatency.max),
            ("foreground_p50_during_finish_ms", finishLatency.p50), ("foreground_p99_during_finish_ms", finishLatency.p99),
            ("foreground_max_during_finish_ms", finishLatency.max), ("foreground_writes_during_finish", writesDuringFinish),
            ("foreground_p50_during_cli_ms", cliLatency.p50), ("foreground_p99_during_cli_ms", cliLatency.p99),
            ("foreground_max_during_cli_ms", cliLatency.max), ("foreground_writes_during_cli", cliLatency.count),
            ("batch_ms", batchMilliseconds), ("pause_ms", pauseMilliseconds),
        ]
        if options.json {
            var object: [String: Any] = ["scenario": "deferral", "machine": MachineDescription.current.jsonObject]
            for (k, v) in results { object[k] = v }
            let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
            print(String(decoding: data, as: UTF8.self))
            return
        }
        func check(_ ok: Bool) -> String { ok ? "ok" : "MISSED" }
        print("""
            strata-bench deferral
            rows=\(rows) store=\(String(format: "%.0f", sizeMB)) MB deferred_tasks=\(pending.count) batch=\(batchMilliseconds) ms pause=\(pauseMilliseconds) ms
            machine: \(MachineDescription.current.summary)

            1 open-to-usable, deferral on     \(String(format: "%10.1f", openDeferred.milliseconds)) ms   target < 100 ms: \(check(openDeferred.milliseconds < 100))
            2 open-to-usable, deferral off    \(String(format: "%10.1f", openSync.milliseconds)) ms   1 is \(String(format: "%.0f", openSync.seconds / max(openDeferred.seconds, 1e-9)))x faster (target ≥ 50x: \(check(openSync.seconds / max(openDeferred.seconds, 1e-9) >= 50)))
            3 sqlite3 CLI DROP COLUMN + INDEX \(String(format: "%10.1f", cli.milliseconds)) ms
            4 finish deferred work online     \(String(format: "%10.1f", finish.milliseconds)) ms   \(String(format: "%.2f", finish.seconds / max(cli.seconds, 1e-9)))x of 3 (target ≤ 1.5x: \(check(finish.seconds / max(cli.seconds, 1e-9) <= 1.5))), \(report.batches) batches

            5 foreground write latency (ms)      p50       p99       max    writes
              idle                         \(idleLatency.row)
              during online finishing      \(finishLatency.row)   p99 target < 25 ms: \(check(finishLatency.p99 < 25))
              during sqlite3 CLI           \(cliLatency.row)
            """)
    }

    static func ms(_ d: Duration) -> Double { round(d.milliseconds) }
    static func round(_ x: Double) -> Double { (x * 100).rounded() / 100 }

    static func createSeed(at url: URL, rows: Int, distinctKeys: Int = 1000, logger: Logger) throws {
        let store = try PersistentStore.open(at: url, model: v1, options: StoreOptions(logger: logger))
        let owners = max(1, rows / 100)
        try store.database.write { db in
            let owner = try db.makeStatement(sql: "INSERT INTO Owner(_pk, name) VALUES (?, ?)")
            for i in 1...owners { try owner.execute(arguments: [i, "owner \(i)"]) }
            let item = try db.makeStatement(sql: "INSERT INTO Item(_pk, name, payload, rank, legacyNote, legacyScore, owner_id, owner_order) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
            let payload = String(repeating: "strata-payload-", count: 12)
            for i in 1...rows {
                try item.execute(arguments: [i, "item \(i)", payload + String(i), i % distinctKeys, "legacy note \(i)", i * 7, 1 + i % owners, i / owners])
            }
        }
        try store.checkpoint()
        try store.close()
    }

    /// Copies the seed store and flushes the copy to disk, so that no measurement pays for
    /// writing back a freshly copied file (a real store is not hundreds of dirty megabytes).
    static func copy(_ source: URL, to destination: URL) throws -> URL {
        try? FileManager.default.removeItem(at: destination)
        try FileManager.default.copyItem(at: source, to: destination)
        let handle = try FileHandle(forUpdating: destination)
        try handle.synchronize()
        try handle.close()
        return destination
    }

    static func runSQLiteCLI(_ url: URL, sql: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = ["-bail", "-cmd", ".timeout 60000", url.path]
        let input = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data(sql.utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw BenchError("sqlite3 failed (\(process.terminationStatus)): \(message)")
        }
    }
}

/// A second connection updating one random row at a fixed interval, recording each write's
/// latency (including time spent waiting for the write lock).
final class ForegroundWriter: @unchecked Sendable {
    struct Summary {
        var p50: Double
        var p99: Double
        var max: Double
        var count: Int
        var row: String { String(format: "%9.2f %9.2f %9.2f %9d", p50, p99, max, count) }
    }

    private let queue: DatabaseQueue
    private let rows: Int
    private let interval: Duration
    private let lock = NSLock()
    private var recorder = LatencyRecorder()
    private var maxMilliseconds = 0.0
    private var running = false
    private var thread: Thread?
    private let done = DispatchSemaphore(value: 0)

    init(url: URL, rows: Int, interval: Duration) throws {
        var configuration = Configuration()
        // Poll for the write lock every millisecond, up to a minute (SQLite's default busy
        // handler backs off to 100 ms sleeps, which would measure the handler, not the wait).
        configuration.busyMode = .callback { retries in
            usleep(1000)
            return retries < 60_000
        }
        queue = try DatabaseQueue(path: url.path, configuration: configuration)
        self.rows = rows
        self.interval = interval
    }

    func start() {
        lock.lock(); running = true; lock.unlock()
        let thread = Thread { [self] in
            var generator = SystemRandomNumberGenerator()
            let clock = ContinuousClock()
            while true {
                lock.lock(); let keepGoing = running; lock.unlock()
                if !keepGoing { break }
                let pk = Int.random(in: 1...rows, using: &generator)
                let start = clock.now
                do {
                    try queue.write { db in try db.execute(sql: "UPDATE Item SET rank = rank + 1 WHERE _pk = ?", arguments: [pk]) }
                } catch {
                    FileHandle.standardError.write(Data("strata-bench: foreground write failed: \(error)\n".utf8))
                }
                let took = clock.now - start
                lock.lock()
                recorder.record(took)
                maxMilliseconds = Swift.max(maxMilliseconds, took.milliseconds)
                lock.unlock()
                Thread.sleep(forTimeInterval: interval.seconds)
            }
            done.signal()
        }
        self.thread = thread
        thread.start()
    }

    func stop() -> Summary {
        lock.lock(); running = false; lock.unlock()
        done.wait()
        try? queue.close()
        lock.lock(); defer { lock.unlock() }
        return Summary(p50: recorder.p50Microseconds / 1000, p99: recorder.p99Microseconds / 1000, max: maxMilliseconds, count: Int(recorder.count))
    }
}
