import Foundation
import Logging
import StrataUnits
import Synchronization

/// The longest hold of the store's write lock by each step of a deferred work run: what a
/// client that arrived at the worst moment waited for. Kept by ``DeferredFinisher/writer(_:_:)``
/// (every write of the finisher goes through it), reported in
/// ``FinishReport/longestLockHolds`` and in the store's log at the end of the run, so that a
/// latency regression names its step.
final class LockHolds {
    private var longest: [String: Duration] = [:]
    private var waits: [String: Duration] = [:]

    /// Notes that `step` held the write lock for `held`, and that a client arriving at the
    /// worst moment of that hold would have waited `wait` (``ArrivalChecks``).
    func record(_ held: Duration, wait: Duration, step: String) {
        if held > longest[step, default: .zero] { longest[step] = held }
        if wait > waits[step, default: .zero] { waits[step] = wait }
    }

    /// The longest wait of each step, in milliseconds (rounded to 0.1 ms).
    var waitMilliseconds: [String: Double] {
        waits.mapValues { ($0.milliseconds * 10).rounded() / 10 }
    }

    /// The longest wait of the run, and its step.
    var longestWait: (step: String, wait: Duration)? {
        waits.max { $0.value < $1.value }.map { ($0.key, $0.value) }
    }

    /// `step=ms` pairs of the waits, longest first.
    var waitSummary: String { Self.summary(waits) }

    /// The longest hold of each step, in milliseconds (rounded to 0.1 ms).
    var milliseconds: [String: Double] {
        longest.mapValues { ($0.milliseconds * 10).rounded() / 10 }
    }

    /// `step=ms` pairs, longest first, for the log: `copy batch=31.2,swap=4.0`.
    var summary: String { Self.summary(longest) }

    private static func summary(_ durations: [String: Duration]) -> String {
        durations.sorted { $0.value > $1.value }
            .map { "\($0.key)=\(String(format: "%.1f", $0.value.milliseconds))" }
            .joined(separator: ",")
    }
}

/// The points of a write-lock hold at which a client's arrival would end it, for the longest
/// wait a client arriving at the worst moment meets (``LockHolds``): the longest stretch of the
/// hold between two such points — its start, each check that a client's arrival would answer
/// by giving way (an idle batch's progress handler, a check between two statements), and its
/// end. A hold with no such check (a normal batch, a schema change, a commit) counts whole.
/// The progress handler runs on the writer's thread, the hold's begin and end too.
final class ArrivalChecks: Sendable {
    private let state = Mutex(State())

    private struct State {
        var start: ContinuousClock.Instant?
        var last: ContinuousClock.Instant?
        var worst = Duration.zero
        var checks = 0
        /// Where the longest stretch began and ended, from the hold's start.
        var worstFrom = Duration.zero
        var worstTo = Duration.zero
    }

    /// Where a hold's longest stretch without a check lay: from and to (since the hold began),
    /// and how many checks the hold made (for the log of long waits).
    struct Stretch: Sendable {
        var wait: Duration
        var from: Duration
        var to: Duration
        var checks: Int
    }

    /// The hold begins.
    func begin(at now: ContinuousClock.Instant = .now) { state.withLock { $0 = State(start: now, last: now) } }

    /// A point at which a client's arrival would end the hold.
    func checked(at now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            guard let last = state.last, let start = state.start else { return }
            state.checks += 1
            if now - last > state.worst {
                state.worst = now - last
                state.worstFrom = last - start
                state.worstTo = now - start
            }
            state.last = now
        }
    }

    /// The hold ends: its longest stretch between two such points.
    func end(at now: ContinuousClock.Instant = .now) -> Stretch {
        checked(at: now)
        return state.withLock { state in
            defer { state = State() }
            return Stretch(wait: state.worst, from: state.worstFrom, to: state.worstTo, checks: state.checks - 1)
        }
    }
}

extension DeferredFinisher {
    /// Logs the run's longest write-lock hold per step (``LockHolds``): one line per run.
    func logLockHolds() {
        let summary = lockHolds.summary
        guard !summary.isEmpty else { return }
        store.logger.info("deferred work's longest write-lock holds", metadata: [
            "strata.holds_ms": "\(summary)", "strata.budget_ms": "\(Int(options.batchBudget.milliseconds))",
            "strata.waits_ms": "\(lockHolds.waitSummary)",
        ])
    }

    /// Where time went (log metadata, ms): holding the writer, waiting for it behind other
    /// calls, the cost delay, and — where the kernel says (``ThreadSchedule``) — the work's
    /// thread waiting for a core (part of the other three and of the rest, not beside them).
    /// The run's line and each task's line both say it this way.
    func timeSpentMetadata(held: Duration, writerWait: Duration, paused: Duration, coreWait: Duration?) -> Logger.Metadata {
        var metadata: Logger.Metadata = ["strata.held_ms": "\(Self.milliseconds(held))", "strata.writer_wait_ms": "\(Self.milliseconds(writerWait))",
                                         "strata.paused_ms": "\(Self.milliseconds(paused))"]
        if let coreWait { metadata["strata.core_wait_ms"] = "\(Self.milliseconds(coreWait))" }
        return metadata
    }

    /// Where the run's time went, in one line: holding the writer, waiting for it behind
    /// clients, the cost delay, and the rest (work outside the lock, scheduling).
    func logTimeSpent(_ report: FinishReport) {
        guard report.batches > 0 else { return }
        let total = Duration.seconds(report.seconds)
        let other = max(.zero, total - pacing.totalHeld - pacing.totalWriterWait - pacing.paused)
        var metadata = timeSpentMetadata(held: pacing.totalHeld, writerWait: pacing.totalWriterWait, paused: pacing.paused, coreWait: pacing.totalCoreWait)
        metadata["strata.ms"] = "\(Self.milliseconds(total))"
        metadata["strata.other_ms"] = "\(Self.milliseconds(other))"
        metadata["strata.batches"] = "\(report.batches)"
        store.logger.info("deferred work run: where its time went", metadata: metadata)
    }
}
