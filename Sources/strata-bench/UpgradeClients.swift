import Foundation
import StrataDaemon
import StrataVarlink
import Synchronization

/// Varlink clients of the upgrade benchmark: each on its own data-socket connection, updating a
/// random row of its own share (`_pk % clients == client`) every `interval`, so that the last
/// acknowledged value of every row is known exactly. Latencies are recorded per phase (the
/// phase current when the request started).
final class UpgradeClients: Sendable {
    enum Phase: String, Sendable, CaseIterable {
        case idle, finish, reclaim, finishDefault = "finish_default", cli, other
    }

    struct PhaseFigures {
        var latency = LatencyRecorder()
        var maxMicroseconds = 0.0
        var errors = 0
        var firstErrors: [String] = []
        /// The slowest requests: (latency ms, when it started).
        var slowest: [(ms: Double, at: Date)] = []
    }

    private let socket: String
    private let count: Int
    private let rows: Int
    private let interval: Duration
    private let phase = Mutex<Phase>(.other)
    private let figures = Mutex<[Phase: PhaseFigures]>([:])
    /// Per client: row → sequence number of its last acknowledged update.
    private let acknowledged = Mutex<[[Int64: Int]]>([])
    private let running = Atomic<Bool>(false)
    private let tasks = Mutex<[Task<Void, Never>]>([])

    init(socket: String, count: Int, rows: Int, interval: Duration) {
        self.socket = socket
        self.count = count
        self.rows = rows
        self.interval = interval
        acknowledged.withLock { $0 = Array(repeating: [:], count: count) }
    }

    /// The value client `client` writes with its `sequence`-th update.
    static func value(client: Int, sequence: Int) -> String { "c\(client)-\(sequence)" }

    func set(_ phase: Phase) { self.phase.withLock { $0 = phase } }

    func start() {
        running.store(true, ordering: .relaxed)
        let started = (0..<count).map { client in Task { await self.run(client: client) } }
        tasks.withLock { $0 = started }
    }

    func stop() async {
        running.store(false, ordering: .relaxed)
        for task in tasks.withLock({ $0 }) { await task.value }
    }

    private func run(client: Int) async {
        var sequence = 0
        var generator = SystemRandomNumberGenerator()
        let share = max(1, (rows - client) / count)
        while running.load(ordering: .relaxed) {
            do {
                try await VarlinkClient.withConnection(to: socket) { connection in
                    let clock = ContinuousClock()
                    while running.load(ordering: .relaxed) {
                        sequence += 1
                        let pk = Int64(client + 1 + count * Int.random(in: 0..<share, using: &generator))
                        guard pk <= rows else { continue }
                        let current = phase.withLock { $0 }
                        let start = clock.now
                        do {
                            _ = try await connection.call(StrataStore.Update.self, .init(
                                store: "bench", entity: "Item", id: pk,
                                values: ["name": .string(Self.value(client: client, sequence: sequence))]))
                            let took = clock.now - start
                            let startedAt = Date(timeIntervalSinceNow: -took.seconds)
                            figures.withLock {
                                $0[current, default: PhaseFigures()].latency.record(took)
                                $0[current, default: PhaseFigures()].maxMicroseconds = max($0[current, default: PhaseFigures()].maxMicroseconds, took.milliseconds * 1000)
                                if took > .milliseconds(20) {
                                    $0[current, default: PhaseFigures()].slowest.append((took.milliseconds, startedAt))
                                    if $0[current]!.slowest.count > 200 {
                                        $0[current]!.slowest.sort { $0.ms > $1.ms }
                                        $0[current]!.slowest.removeLast(100)
                                    }
                                }
                            }
                            acknowledged.withLock { $0[client][pk] = sequence }
                        } catch let error as VarlinkError {
                            // An error reply (a lock held too long by another process): counted, the
                            // connection stays usable. The row keeps its last acknowledged value.
                            record(error: "\(error.name): \(error.reason)", in: current)
                        } catch {
                            // No reply: the update may or may not have committed.
                            acknowledged.withLock { $0[client][pk] = Self.unknown }
                            throw error
                        }
                        if interval > .zero { try await Task.sleep(for: interval) }
                    }
                }
            } catch {
                record(error: "\(error)", in: phase.withLock { $0 })
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    private func record(error: String, in phase: Phase) {
        figures.withLock {
            $0[phase, default: PhaseFigures()].errors += 1
            if $0[phase, default: PhaseFigures()].firstErrors.count < 3 { $0[phase, default: PhaseFigures()].firstErrors.append(error) }
        }
    }

    func results(_ phase: Phase) -> PhaseFigures { figures.withLock { $0[phase] ?? PhaseFigures() } }

    /// A row whose last update got no reply: its value is not known.
    private static let unknown = -1

    /// Every acknowledged update: row → expected value (rows whose last update got no reply left out).
    func acknowledgedValues() -> [Int64: String] {
        acknowledged.withLock { perClient in
            var result: [Int64: String] = [:]
            for (client, rows) in perClient.enumerated() {
                for (pk, sequence) in rows where sequence != Self.unknown { result[pk] = Self.value(client: client, sequence: sequence) }
            }
            return result
        }
    }
}
