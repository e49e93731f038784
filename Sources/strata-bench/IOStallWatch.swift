import Foundation
import Synchronization

/// Watches the machine's block device for stalls during a run, so that a client's latency
/// spike can be told apart from the daemon's: the kernel's pressure stall information
/// (`/proc/pressure/io`, line `some … total=µs`) grows by the time during which at least one
/// task waited for I/O. Sampled every 100 ms; a stretch of samples in which it grew by at
/// least 80% of the wall time is a stall of the device (every commit's `fsync` waits, whoever
/// makes it). On this project's machines a write-back sitting unfinished for 2–2.7 s stopped
/// every client of the daemon and of the no-work baseline alike (docs/Benchmarks.md).
/// Where the file is missing (no PSI), nothing is reported.
final class IOStallWatch: Sendable {
    /// The longest stall, and when it began (monotonic ns).
    struct Stall: Sendable {
        var seconds: Double
        var began: Int64
    }

    private struct State {
        var longest: Stall?
        var current: (began: Int64, seconds: Double)?
        var lastTotal: Int64?
        var lastAt: Int64 = 0
    }

    private let state = Mutex(State())
    private let stopped = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private let interval: Duration

    /// Starts sampling on a thread of its own.
    init(interval: Duration = .milliseconds(100)) {
        self.interval = interval
        Thread.detachNewThread { [self] in
            while !stopped.load(ordering: .relaxed) {
                sample()
                Thread.sleep(forTimeInterval: Double(interval.components.attoseconds) / 1e18 + Double(interval.components.seconds))
            }
            done.signal()
        }
    }

    /// Stops sampling: the longest stall seen (nil: none, or no PSI on this machine).
    func stop() -> Stall? {
        if !stopped.exchange(true, ordering: .relaxed) { done.wait() }
        return state.withLock { state in
            if let current = state.current, current.seconds > (state.longest?.seconds ?? 0) {
                state.longest = Stall(seconds: current.seconds, began: current.began)
            }
            return state.longest
        }
    }

    /// The `some` total in µs, or nil where the kernel does not say.
    static func someTotal() -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/pressure/io", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("some") }),
              let field = line.split(separator: " ").first(where: { $0.hasPrefix("total=") }) else { return nil }
        return Int64(field.dropFirst("total=".count))
    }

    private func sample() {
        guard let total = Self.someTotal() else { return }
        let now = monotonicNanoseconds()
        state.withLock { state in
            defer { state.lastTotal = total; state.lastAt = now }
            guard let last = state.lastTotal, now > state.lastAt else { return }
            let wall = Double(now - state.lastAt) / 1e9
            let stalled = Double(total - last) / 1e6
            if stalled >= 0.8 * wall {
                if state.current == nil { state.current = (state.lastAt, 0) }
                state.current?.seconds += wall
            } else if let current = state.current {
                if current.seconds > (state.longest?.seconds ?? 0) { state.longest = Stall(seconds: current.seconds, began: current.began) }
                state.current = nil
            }
        }
    }

    /// "2.51 s, from +5.3 s" for a report line (`origin`: the run's reference instant), "none"
    /// under 50 ms.
    static func text(_ stall: Stall?, origin: Int64) -> String {
        guard let stall, stall.seconds >= 0.05 else { return "none" }
        return String(format: "%.2f s, from %+.1f s", stall.seconds, Double(stall.began - origin) / 1e9)
    }
}
