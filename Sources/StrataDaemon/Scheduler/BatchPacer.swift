import Foundation
import Synchronization

/// `FinishOptions.shouldContinue` for one run on one store: stops at the next batch when the
/// gate closes (load returned, pause, shutdown) or the store's turn is over, and sleeps a
/// cost-based delay before each batch, in the manner of PostgreSQL's autovacuum.
///
/// The delay after a batch is `pause_between_batches × (the batch's time / batch_budget)`,
/// at most ten times `pause_between_batches`: a batch that overran its budget (a slow disk,
/// a contended lock) buys a longer pause, so the work's share of the machine stays near
/// `budget / (budget + pause)`. The delay is slept in slices of at most 2 ms and ends early
/// when the gate closes, so a pause never delays stepping aside.
///
/// It runs on the ``DeferredWorkThread`` (the library calls it synchronously before each
/// batch), so the blocking sleep takes no thread from the cooperative pool.
final class BatchPacer: Sendable {
    private let gate: SchedulerGate
    private let forced: Bool
    private let deadline: ContinuousClock.Instant?
    private let budget: Duration
    private let pause: Duration
    private let interrupt: (@Sendable () -> Interruption?)?
    private let now: @Sendable () -> ContinuousClock.Instant
    private let state = Mutex<State>(State())

    private struct State {
        var lastBatchStart: ContinuousClock.Instant?
        var delayed: Duration = .zero
        var stoppedBy: StopReason?
    }

    enum StopReason: Sendable {
        case gate, turnOver
        /// The interrupt check saw load.
        case load(Interruption)
    }

    /// - Parameters:
    ///   - forced: work started with `now` (only shutdown stops it).
    ///   - deadline: the end of the store's turn (nil: no end).
    ///   - interrupt: a cheap check of the daemon's own load made before every batch and during
    ///     the delay (the scheduler's sampling loop may be a few tens of milliseconds away);
    ///     returns why and when (the first busy reading) when the work must stop. Closes the gate.
    ///   - now: the clock of `deadline` (the scheduler's; tests pass a fake one).
    init(gate: SchedulerGate, forced: Bool, deadline: ContinuousClock.Instant?, budget: Duration, pause: Duration,
         interrupt: (@Sendable () -> Interruption?)? = nil, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.now = now
        self.gate = gate
        self.forced = forced
        self.deadline = deadline
        self.budget = budget
        self.pause = pause
        self.interrupt = interrupt
    }

    private var allowed: Bool { forced ? gate.allowsForcedWork : gate.allowsIdleWork }

    /// Whether the work may go on; records why not.
    private func mayGoOn() -> Bool {
        guard allowed else { return false }
        if let interrupt, let interruption = interrupt() {
            if !forced { gate.set(open: false) }
            state.withLock { $0.stoppedBy = .load(interruption) }
            return false
        }
        return true
    }

    /// Total cost delay slept so far.
    var delayed: Duration { state.withLock { $0.delayed } }
    /// Why the last `shouldContinue` said no (nil when it never did).
    var stoppedBy: StopReason? { state.withLock { $0.stoppedBy } }

    /// The `shouldContinue` of `FinishOptions`.
    func shouldContinue() -> Bool {
        guard mayGoOn() else { return stop(.gate) }
        let clock = ContinuousClock()
        if let last = state.withLock({ $0.lastBatchStart }), pause > .zero {
            let cost = clock.now - last
            let ratio = min(10, max(0, cost / budget))
            let delay = pause * ratio
            let until = clock.now + delay
            while clock.now < until {
                guard mayGoOn() else { return stop(.gate) }
                let slice = min(.milliseconds(2), until - clock.now)
                if slice > .zero { usleep(UInt32(max(1, slice.nanoseconds / 1000))) }
            }
            state.withLock { $0.delayed += delay }
            guard mayGoOn() else { return stop(.gate) }
        }
        if let deadline, now() >= deadline { return stop(.turnOver) }
        state.withLock { $0.lastBatchStart = clock.now }
        return true
    }

    private func stop(_ reason: StopReason) -> Bool {
        state.withLock { state in
            if case .load = state.stoppedBy, case .gate = reason { return }
            state.stoppedBy = reason
        }
        return false
    }
}

/// Why and when a run's interrupt check stopped it (the first busy reading).
public struct Interruption: Sendable, Hashable {
    /// Why, in words, and what to do.
    public var reason: String
    /// When it happened.
    public var at: ContinuousClock.Instant
}
