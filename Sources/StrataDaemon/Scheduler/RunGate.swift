import Foundation
import Synchronization

/// `FinishOptions.shouldContinue` for one run on one store: a pure, cheap check (it never
/// sleeps) that says no when the scheduler's gate closes (load returned, pause, shutdown), the
/// daemon's own load comes back, a request takes the store over from a scheduler turn, or the
/// store's turn is over — and records why.
///
/// Pacing is the library's alone: the runner passes `pause_between_batches` as
/// `FinishOptions.pauseBetweenBatches`, and the library sleeps its cost delay after each batch
/// (in slices, asking this check between them, so a pause never delays stepping aside).
final class RunGate: Sendable {
    private let gate: SchedulerGate
    private let forced: Bool
    private let deadline: ContinuousClock.Instant?
    private let interrupt: (@Sendable () -> Interruption?)?
    private let backlog: (@Sendable () -> Interruption?)?
    private let yieldRequested: (@Sendable () -> Bool)?
    private let now: @Sendable () -> ContinuousClock.Instant
    private let stopped = Mutex<StopReason?>(nil)

    /// Why the run stopped before its work was done.
    enum StopReason: Sendable {
        /// The gate closed (pause, shutdown, the sampling loop saw load) or a request took over.
        case gate
        /// The store's turn is over.
        case turnOver
        /// The interrupt check saw load.
        case load(Interruption)
        /// A forced run's backlog check saw the replica too far behind: the run stops, and the
        /// runner waits for the replica before it goes on (the scheduler's gate stays as it is).
        case backlog(Interruption)
    }

    /// - Parameters:
    ///   - forced: work started with `now` (only shutdown stops it).
    ///   - deadline: the end of the store's turn (nil: no end).
    ///   - interrupt: a cheap check of the daemon's own load made before every batch and during
    ///     the library's pauses (the scheduler's sampling loop may be a few tens of milliseconds
    ///     away); returns why and when (the first busy reading) when the work must stop. Closes the gate.
    ///   - backlog: a check made before every batch only (never during one: a batch is not
    ///     rolled back for it): a backlog the work itself grows, the replica's lag, read live.
    ///     Stops the work and closes the gate, as `interrupt` does — for a forced run, stops
    ///     it without closing the gate (the runner waits for the replica, then goes on).
    ///   - yieldRequested: for a scheduler turn, whether a request waits to take the store over.
    ///   - now: the clock of `deadline` (the scheduler's; tests pass a fake one).
    init(gate: SchedulerGate, forced: Bool, deadline: ContinuousClock.Instant?,
         interrupt: (@Sendable () -> Interruption?)? = nil, backlog: (@Sendable () -> Interruption?)? = nil,
         yieldRequested: (@Sendable () -> Bool)? = nil,
         now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.gate = gate
        self.forced = forced
        self.deadline = deadline
        self.interrupt = interrupt
        self.backlog = backlog
        self.yieldRequested = yieldRequested
        self.now = now
    }

    /// Why the last `shouldContinue` said no (nil when it never did).
    var stoppedBy: StopReason? { stopped.withLock { $0 } }

    /// The `shouldContinue` of `FinishOptions`.
    func shouldContinue() -> Bool {
        if let yieldRequested, yieldRequested() { return stop(.gate) }
        guard mayGoOn() else { return false }
        if let backlog, let interruption = backlog() {
            guard forced else {
                gate.set(open: false)
                return stop(.load(interruption))
            }
            return stop(.backlog(interruption))
        }
        if let deadline, now() >= deadline { return stop(.turnOver) }
        return true
    }

    /// The gate and the daemon's own load; records why not.
    private func mayGoOn() -> Bool {
        guard forced ? gate.allowsForcedWork : gate.allowsIdleWork else { return stop(.gate) }
        if let interrupt, let interruption = interrupt() {
            if !forced { gate.set(open: false) }
            return stop(.load(interruption))
        }
        return true
    }

    /// The `interruptRequested` of `FinishOptions`: checked about every millisecond while a
    /// batch runs (cheap, never sleeps); true when the gate closed or the daemon's load came
    /// back, which aborts the batch in flight (the library rolls it back). The end of a turn
    /// and a request taking over wait for the batch to end.
    func interruptRequested() -> Bool { !mayGoOn() }

    private func stop(_ reason: StopReason) -> Bool {
        stopped.withLock { stopped in
            // The load that closed the gate stays the reason.
            if case .load? = stopped, case .gate = reason { return }
            stopped = reason
        }
        return false
    }
}

/// Why and when a run's interrupt check stopped it (the first busy reading).
public struct Interruption: Sendable, Hashable {
    /// The busy signal, in words.
    public var reason: String
    /// When it was first read busy.
    public var at: ContinuousClock.Instant
}
