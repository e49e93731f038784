import Foundation
import GRDB

extension DeferredFinisher {
    /// What one batch did, for ``runBatches(_:limit:between:_:)``.
    struct BatchOutcome {
        /// Rows (or entries) the batch processed.
        var rows: Int64
        /// The task's progress after it.
        var rowsDone: Int64
        /// No work is left: the loop ends.
        var done: Bool
        /// Whether the progress report of this last batch says the task is done.
        var reportsDone = false
    }

    /// The finisher's one batch loop. Before each batch it asks whether to go on
    /// (``mayContinue()``) and picks the batch's budget (``beginBatch(_:)``); `body` runs one
    /// batch of the size it is given. A batch that overran its time limit is rolled back and
    /// run again smaller (``overran(_:)``); a batch that gave way to a client's arrival is run
    /// again sized for the normal budget, at once. After each batch: counters, the adapted
    /// size, progress, then `between` (a fault-injection point) and the cost delay.
    ///
    /// Returns true when `body` reported the work done, false when stopped before.
    func runBatches(_ step: TaskStep, limit: Int = Counters.maxBatchSize, between: String? = nil,
                    _ body: (_ size: Int) throws -> BatchOutcome) async throws -> Bool {
        while true {
            guard await mayContinue() else { return false }
            beginBatch(step)
            let started = batchClockStarts()
            let outcome: BatchOutcome
            do {
                outcome = try body(step.counters.batchSize)
            } catch is StepAside.Overrun {
                overran(step)
                guard await pause() else { return false }
                continue
            } catch is StepAside.Yielded {
                gaveWay(step)
                continue
            }
            completedIdleBatch()
            finishedBatch(step, started: started, rows: outcome.rows, rowsDone: outcome.rowsDone, done: outcome.reportsDone, limit: limit)
            if outcome.done { return true }
            if let between { FaultInjection.point(between) }
            guard await pause() else { return false }
        }
    }

    // MARK: - Idle batches (the decision is ``StepAside``'s)

    /// Picks the next batch's budget (``StepAside/beginBatch(counted:lookForOtherWriters:)``)
    /// and, when it changed, rescales the batch size by the ratio of the budgets at once, so
    /// that the first batch after a client's arrival is sized for the normal budget. A batch
    /// that is `counted` (a write batch) adds to ``FinishReport/idleBatches`` when it begins
    /// idle; a verify batch (a read snapshot, not one of ``FinishReport/batches``) does not.
    func beginBatch(_ step: TaskStep, counted: Bool = true) {
        // Another process may have committed since the last batch: looked for on the writer.
        let scale = stepAside.beginBatch(counted: counted) { store.database.writeWithoutTransaction { db in noteExternalWrites(db) } }
        if let scale { rescale(step, by: scale) }
    }

    /// The budget of the batch in flight (``StepAside/budget``).
    var currentBudget: Duration { stepAside.budget }

    /// After an idle batch that ran to its end: the wait for the next one shrinks back.
    func completedIdleBatch() { stepAside.completedIdleBatch() }

    /// After an idle batch that gave way to a client (rolled back): the next batch runs with
    /// the normal budget, sized for it, and the next idle batch waits for twice the quiet.
    func gaveWay(_ step: TaskStep) {
        if let scale = stepAside.gaveWay() { rescale(step, by: scale) }
        store.logger.debug("an idle batch gave way to a client call and was rolled back", metadata: ["strata.task": "\(step.id)"])
    }

    private func rescale(_ step: TaskStep, by scale: Double) {
        step.counters.batchSize = min(Counters.maxBatchSize, max(16, Int(Double(step.counters.batchSize) * scale)))
    }
}
