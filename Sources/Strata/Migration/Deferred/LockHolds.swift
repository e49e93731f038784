import Foundation
import Logging
import StrataUnits

/// The longest hold of the store's write lock by each step of a deferred work run: what a
/// client that arrived at the worst moment waited for. Kept by ``DeferredFinisher/writer(_:_:)``
/// (every write of the finisher goes through it), reported in
/// ``FinishReport/longestLockHolds`` and in the store's log at the end of the run, so that a
/// latency regression names its step.
final class LockHolds {
    private var longest: [String: Duration] = [:]

    /// Notes that `step` held the write lock for `held`.
    func record(_ held: Duration, step: String) {
        if held > longest[step, default: .zero] { longest[step] = held }
    }

    /// The longest hold of each step, in milliseconds (rounded to 0.1 ms).
    var milliseconds: [String: Double] {
        longest.mapValues { ($0.milliseconds * 10).rounded() / 10 }
    }

    /// `step=ms` pairs, longest first, for the log: `copy batch=31.2,swap=4.0`.
    var summary: String {
        longest.sorted { $0.value > $1.value }
            .map { "\($0.key)=\(String(format: "%.1f", $0.value.milliseconds))" }
            .joined(separator: ",")
    }
}

extension DeferredFinisher {
    /// Logs the run's longest write-lock hold per step (``LockHolds``): one line per run.
    func logLockHolds() {
        let summary = lockHolds.summary
        guard !summary.isEmpty else { return }
        store.logger.info("deferred work's longest write-lock holds", metadata: [
            "strata.holds_ms": "\(summary)", "strata.budget_ms": "\(Int(options.batchBudget.milliseconds))",
        ])
    }

    /// Where time went (log metadata, ms): holding the writer, waiting for it behind other
    /// calls, the cost delay. The run's line and each task's line both say it this way.
    func timeSpentMetadata(held: Duration, writerWait: Duration, paused: Duration) -> Logger.Metadata {
        ["strata.held_ms": "\(Self.milliseconds(held))", "strata.writer_wait_ms": "\(Self.milliseconds(writerWait))",
         "strata.paused_ms": "\(Self.milliseconds(paused))"]
    }

    /// Where the run's time went, in one line: holding the writer, waiting for it behind
    /// clients, the cost delay, and the rest (work outside the lock, scheduling).
    func logTimeSpent(_ report: FinishReport) {
        guard report.batches > 0 else { return }
        let total = Duration.seconds(report.seconds)
        let other = max(.zero, total - pacing.totalHeld - pacing.totalWriterWait - pacing.paused)
        var metadata = timeSpentMetadata(held: pacing.totalHeld, writerWait: pacing.totalWriterWait, paused: pacing.paused)
        metadata["strata.ms"] = "\(Self.milliseconds(total))"
        metadata["strata.other_ms"] = "\(Self.milliseconds(other))"
        metadata["strata.batches"] = "\(report.batches)"
        store.logger.info("deferred work run: where its time went", metadata: metadata)
    }
}
