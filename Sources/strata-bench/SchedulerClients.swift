import ArgumentParser
import Foundation
import StrataVarlink
import Synchronization

/// What a client of `strata-bench scheduler` does with each call.
enum ClientOperation: String, CaseIterable, ExpressibleByArgument, Sendable {
    /// Inserts a new item.
    case insert
    /// Updates a random existing item (its name), as an application's writes to old rows do:
    /// rows the rewrite's copy has passed fire its capture triggers.
    case update
    /// Inserts and updates in turn (the default).
    case mixed

    /// The operation of a client's `sequence`-th call.
    func call(_ sequence: Int) -> ClientOperation {
        self == .mixed ? (sequence % 2 == 0 ? .insert : .update) : self
    }
}

/// Clients of a stop-and-go load: load phases of calls, each call's latency recorded with its
/// phase and its time into it. ``BenchClients`` runs them as tasks of the benchmark's process,
/// ``ExternalBenchClients`` as processes of their own (`strata-bench scheduler-client`), as an
/// application's clients are.
protocol PhasedLoad: Sendable {
    /// One load phase of `duration`; returns when every client has ended it.
    func run(for duration: Duration) async
    /// Every call so far: latencies, figures per phase, the slowest calls.
    var figures: LoadFigures { get }
    /// Ends the clients (processes exit).
    func close() async
}

/// The latencies a ``PhasedLoad`` recorded.
final class LoadFigures: Sendable {
    private let recorded = Mutex<(latency: LatencyRecorder, maxMicroseconds: Double, errors: Int)>((LatencyRecorder(), 0, 0))
    /// The slowest requests: (latency ms, ms into the load phase, phase number).
    private let slowest = Mutex<[(Double, Double, Int)]>([])
    /// Per load phase: its latencies (for --trace).
    private let perPhase = Mutex<[Int: LatencyRecorder]>([:])

    /// Records one call of phase `phase` that started `intoPhase` after the phase began.
    func record(_ took: Duration, intoPhase: Duration, phase: Int) {
        recorded.withLock {
            $0.latency.record(took)
            $0.maxMicroseconds = max($0.maxMicroseconds, took.milliseconds * 1000)
        }
        perPhase.withLock { $0[phase, default: LatencyRecorder()].record(took) }
        slowest.withLock { slowest in
            slowest.append((took.milliseconds, intoPhase.milliseconds, phase))
            if slowest.count > 400 {
                slowest.sort { $0.0 > $1.0 }
                slowest.removeLast(slowest.count - 40)
            }
        }
    }

    func recordError() { recorded.withLock { $0.errors += 1 } }

    /// p50 / p99 / max of each load phase, in order.
    func phaseSummaries() -> [String] {
        perPhase.withLock { phases in
            phases.keys.sorted().map { key in
                let r = phases[key]!
                return String(format: "  phase %3d: p50 %6.2f ms  p99 %6.2f ms  max %7.2f ms  n %5d", key, r.p50Microseconds / 1000,
                              r.p99Microseconds / 1000, Double(r.histogram.max) / 1e6, r.count)
            }
        }
    }

    /// The slowest requests, slowest first.
    func slowestRequests(_ count: Int) -> [(latencyMs: Double, intoPhaseMs: Double, phase: Int)] {
        slowest.withLock { Array($0.sorted { $0.0 > $1.0 }.prefix(count)) }.map { ($0.0, $0.1, $0.2) }
    }

    func results() -> (LatencyRecorder, Double, Int) {
        recorded.withLock { ($0.latency, $0.maxMicroseconds, $0.errors) }
    }
}

/// One client's calls on its data-socket connection, in the benchmark's process or in a client
/// process: an insert or an update of `Item` per call, every `interval`.
struct ClientCalls: Sendable {
    let operation: ClientOperation
    /// Items in the store when the load began (updates pick one of them).
    let rows: Int
    let interval: Duration

    /// Calls until `ends`; `record` gets each call's latency and start.
    func run(on connection: VarlinkClient.Connection, client: Int, sequence: inout Int, until ends: ContinuousClock.Instant,
             record: (Duration, ContinuousClock.Instant) -> Void) async throws {
        let clock = ContinuousClock()
        while clock.now < ends {
            sequence += 1
            let start = clock.now
            switch operation.call(sequence) {
            case .update:
                _ = try await connection.call(StrataStore.Update.self, .init(
                    store: "bench", entity: "Item", id: Int64.random(in: 1...Int64(rows)),
                    values: ["name": .string("client \(client) update #\(sequence)")]))
            default:
                _ = try await connection.call(StrataStore.Insert.self, .init(
                    store: "bench", entity: "Item",
                    values: ["name": .string("client \(client) #\(sequence)"), "payload": "client write", "rank": .int(Int64(sequence % 1000))]))
            }
            record(clock.now - start, start)
            if interval > .zero { try await Task.sleep(for: interval) }
        }
    }
}

/// Clients as tasks of the benchmark's process, each on its own connection.
final class BenchClients: PhasedLoad {
    private let socket: String
    private let count: Int
    private let calls: ClientCalls
    private let phases = Mutex(0)
    let figures = LoadFigures()

    init(socket: String, count: Int, calls: ClientCalls) {
        self.socket = socket
        self.count = count
        self.calls = calls
    }

    func run(for duration: Duration) async {
        let begins = ContinuousClock.now
        let ends = begins + duration
        let phase = phases.withLock { $0 += 1; return $0 }
        await withTaskGroup(of: Void.self) { group in
            for client in 0..<count {
                group.addTask {
                    do {
                        try await VarlinkClient.withConnection(to: self.socket) { connection in
                            var sequence = phase * 1_000_000
                            try await self.calls.run(on: connection, client: client, sequence: &sequence, until: ends) { took, start in
                                self.figures.record(took, intoPhase: start - begins, phase: phase)
                            }
                        }
                    } catch {
                        self.figures.recordError()
                        FileHandle.standardError.write(Data("strata-bench: client \(client) failed: \(error)\n".utf8))
                    }
                }
            }
        }
    }

    func close() async {}
}

// MARK: - Clients in processes of their own

/// Clients as processes of their own (`strata-bench scheduler-client`, this executable again),
/// as an application's clients are: they take CPU from the daemon and wake up on their own. Each
/// runs a load phase when told on its standard input and answers with the phase's calls.
final class ExternalBenchClients: PhasedLoad {
    private let processes: [ClientProcess]
    private let phases = Mutex(0)
    let figures = LoadFigures()

    /// Starts `count` client processes on `socket`.
    init(socket: String, count: Int, calls: ClientCalls) throws {
        let executable = URL(filePath: CommandLine.arguments[0]).standardizedFileURL.path
        let path = FileManager.default.fileExists(atPath: executable) ? executable : "/proc/self/exe"
        processes = try (0..<count).map { client in
            try ClientProcess(executable: path, arguments: [
                "scheduler-client", "--socket", socket, "--client", "\(client)", "--operation", calls.operation.rawValue,
                "--rows", "\(calls.rows)", "--interval-us", "\(Int64(calls.interval.milliseconds * 1000))",
            ])
        }
    }

    func run(for duration: Duration) async {
        let phase = phases.withLock { $0 += 1; return $0 }
        let milliseconds = Int64(duration.milliseconds)
        // Every process is told first, then each answer is read on a thread of its own (blocking
        // reads never take a thread of Swift's cooperative pool, which the daemon uses).
        for process in processes { process.send("load \(milliseconds) \(phase)") }
        await withTaskGroup(of: Void.self) { group in
            for process in processes {
                group.addTask {
                    let answer = await process.readPhase()
                    for call in answer.calls { self.figures.record(call.took, intoPhase: call.intoPhase, phase: phase) }
                    for _ in 0..<answer.errors { self.figures.recordError() }
                    if let failure = answer.failure { FileHandle.standardError.write(Data("strata-bench: client process: \(failure)\n".utf8)) }
                }
            }
        }
    }

    func close() async {
        for process in processes { process.close() }
    }
}

/// One client process and its pipes.
final class ClientProcess: Sendable {
    private let process: Process
    private let input: FileHandle
    private let output: UnsafeFile

    /// The standard output of a client process, read line by line with C's `getline`.
    /// `@unchecked Sendable`: the `FILE*` is used by one reader at a time (one phase at a time).
    final class UnsafeFile: @unchecked Sendable {
        let file: UnsafeMutablePointer<FILE>
        init(_ fd: Int32) throws {
            guard let file = fdopen(fd, "r") else { throw BenchError("fdopen: errno \(errno)") }
            self.file = file
        }
        func readLine() -> String? {
            var line: UnsafeMutablePointer<CChar>?
            var capacity = 0
            defer { free(line) }
            guard getline(&line, &capacity, file) > 0, let line else { return nil }
            return String(cString: line).trimmingCharacters(in: .newlines)
        }
    }

    struct PhaseAnswer: Sendable {
        var calls: [(took: Duration, intoPhase: Duration)] = []
        var errors = 0
        var failure: String?
    }

    init(executable: String, arguments: [String]) throws {
        process = Process()
        process.executableURL = URL(filePath: executable)
        process.arguments = arguments
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        input = stdin.fileHandleForWriting
        output = try UnsafeFile(dup(stdout.fileHandleForReading.fileDescriptor))
    }

    func send(_ line: String) { input.write(Data((line + "\n").utf8)) }

    /// Reads one phase's answer (`r NS NS` lines, then `end ERRORS`), on a thread of its own.
    func readPhase() async -> PhaseAnswer {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var answer = PhaseAnswer()
                while let line = self.output.readLine() {
                    let fields = line.split(separator: " ")
                    if fields.first == "r", fields.count == 3, let into = Int64(fields[1]), let took = Int64(fields[2]) {
                        answer.calls.append((.nanoseconds(took), .nanoseconds(into)))
                    } else if fields.first == "end" {
                        answer.errors = fields.count > 1 ? Int(fields[1]) ?? 0 : 0
                        if fields.count > 2 { answer.failure = fields[2...].joined(separator: " ") }
                        continuation.resume(returning: answer)
                        return
                    }
                }
                answer.failure = "the client process ended (exit status \(self.process.isRunning ? -1 : self.process.terminationStatus))"
                continuation.resume(returning: answer)
            }
        }
    }

    func close() {
        try? input.close()
        process.waitUntilExit()
    }
}

/// `strata-bench scheduler-client`: one client of `strata-bench scheduler --external-clients`, in
/// a process of its own. Reads `load MS PHASE` lines on its standard input; for each, calls the
/// data socket for MS milliseconds, then writes one `r NS_INTO_PHASE NS_TOOK` line per call and
/// `end ERRORS [failure]`. Ends at the end of its input.
struct SchedulerClientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scheduler-client",
        abstract: "One client process of `strata-bench scheduler --external-clients` (started by it; not run by hand).",
        shouldDisplay: false
    )

    @Option(name: .long, help: "The daemon's data socket.") var socket: String
    @Option(name: .long, help: "This client's number.") var client = 0
    @Option(name: .long, help: "insert, update or mixed.") var operation = ClientOperation.mixed
    @Option(name: .long, help: "Items in the store (updates pick one).") var rows = 1000
    @Option(name: .customLong("interval-us"), help: "Pause between calls, in microseconds.") var interval = 5000

    func run() async throws {
        let calls = ClientCalls(operation: operation, rows: rows, interval: .microseconds(interval))
        while let line = readLine() {
            let fields = line.split(separator: " ")
            guard fields.count == 3, fields[0] == "load", let milliseconds = Int64(fields[1]), let phase = Int(fields[2]) else { continue }
            let begins = ContinuousClock.now
            var lines: [String] = []
            var errors = 0
            var failure = ""
            do {
                try await VarlinkClient.withConnection(to: socket) { connection in
                    var sequence = phase * 1_000_000
                    try await calls.run(on: connection, client: client, sequence: &sequence, until: begins + .milliseconds(milliseconds)) { took, start in
                        lines.append("r \((start - begins).nanoseconds) \(took.nanoseconds)")
                    }
                }
            } catch {
                errors += 1
                failure = " \(error)".replacingOccurrences(of: "\n", with: " ")
            }
            lines.append("end \(errors)\(failure)")
            FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        }
    }
}
