import Foundation
import NIOCore
import NIOPosix
import StrataUnits
import StrataVarlink

/// What one load run measured: calls answered, how long it took, each call's latency
/// (send → reply, in nanoseconds), and the first error reply seen.
struct ServeLoadResult {
    var calls = 0
    var elapsed: Duration = .zero
    var latencies = LatencyRecorder()
    var maxMicroseconds: Double = 0
    var errors = 0
    var firstError: String?

    var callsPerSecond: Double { elapsed.seconds > 0 ? Double(calls) / elapsed.seconds : 0 }

    /// One call's round trip, and its error reply if it got one.
    mutating func record(_ elapsed: Duration, error: String?) {
        latencies.record(elapsed)
        maxMicroseconds = max(maxMicroseconds, Double(elapsed.nanoseconds) / 1000)
        calls += 1
        if let error {
            errors += 1
            firstError = firstError ?? error
        }
    }

    /// Adds another run's calls to these.
    mutating func add(_ other: ServeLoadResult) {
        latencies.add(other.latencies)
        maxMicroseconds = max(maxMicroseconds, other.maxMicroseconds)
        calls += other.calls
        errors += other.errors
        firstError = firstError ?? other.firstError
    }

    var p50Milliseconds: Double { latencies.p50Microseconds / 1000 }
    var p99Milliseconds: Double { latencies.p99Microseconds / 1000 }
    var maxMilliseconds: Double { maxMicroseconds / 1000 }
}

/// Drives a Varlink socket: `connections` connections, each keeping `depth` calls in flight
/// (pipelined: the next call is sent as soon as a reply comes back), for `duration`.
struct ServeLoad {
    var socket: String
    var connections: Int
    var depth: Int
    var duration: Duration

    /// The calls are built by `call(n, connection)` before the clock starts for each call.
    func run(_ call: @escaping @Sendable (_ n: Int, _ connection: Int) -> VarlinkCall) async throws -> ServeLoadResult {
        let started = ContinuousClock.now
        let deadline = started + duration
        let perConnection = try await withThrowingTaskGroup(of: ConnectionResult.self) { group in
            for c in 0..<connections {
                group.addTask { try await Self.drive(socket: socket, connection: c, depth: depth, until: deadline, call: call) }
            }
            var all: [ConnectionResult] = []
            for try await result in group { all.append(result) }
            return all
        }
        var result = ServeLoadResult()
        result.elapsed = ContinuousClock.now - started
        for connection in perConnection {
            result.calls += connection.latencies.count
            result.errors += connection.errors
            result.firstError = result.firstError ?? connection.firstError
            for nanoseconds in connection.latencies {
                result.latencies.record(.nanoseconds(Int64(nanoseconds)))
                result.maxMicroseconds = max(result.maxMicroseconds, Double(nanoseconds) / 1000)
            }
        }
        return result
    }

    private struct ConnectionResult: Sendable {
        var latencies: [UInt64] = []
        var errors = 0
        var firstError: String?
    }

    private static func drive(socket: String, connection c: Int, depth: Int, until deadline: ContinuousClock.Instant,
                              call: @escaping @Sendable (Int, Int) -> VarlinkCall) async throws -> ConnectionResult {
        try await VarlinkClient.withConnection(to: socket) { connection in
            var result = ConnectionResult()
            var sent: [ContinuousClock.Instant] = []
            var next = 0
            var head = 0
            func send() async throws {
                let bytes = Array(call(next, c).encoded())
                next += 1
                sent.append(ContinuousClock.now)
                try await connection.sendRaw(bytes)
            }
            for _ in 0..<depth { try await send() }
            while head < sent.count {
                let reply = try await connection.nextReply()
                let now = ContinuousClock.now
                result.latencies.append(UInt64(max(0, (now - sent[head]).nanoseconds)))
                head += 1
                if let error = reply.error {
                    result.errors += 1
                    if result.firstError == nil { result.firstError = "\(error) \(reply.parameters)" }
                }
                if now < deadline { try await send() }
            }
            return result
        }
    }
}
