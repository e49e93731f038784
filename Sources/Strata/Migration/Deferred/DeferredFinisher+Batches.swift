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
            } catch is BatchInterrupter.Overrun {
                overran(step)
                guard await pause() else { return false }
                continue
            } catch is BatchInterrupter.Yielded {
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

    // MARK: - Idle batches

    /// Picks the next batch's budget: ``FinishOptions/idleBatchBudget`` while no client call
    /// is in flight (``FinishOptions/clientsActive``) and none was for a while
    /// (``FinishOptions/clientsQuiet``, ``quietNeeded``), nor any other process's commit
    /// (``noteExternalWrites(_:)``), ``FinishOptions/batchBudget`` otherwise. A change of
    /// budget rescales the batch size by the ratio of the budgets at once, so that the first
    /// batch after a client's arrival is sized for the normal budget. A batch that is `counted`
    /// (a write batch) adds to ``FinishReport/idleBatches`` when it begins idle; a verify batch
    /// (a read snapshot, not one of ``FinishReport/batches``) does not.
    func beginBatch(_ step: TaskStep, counted: Bool = true) {
        var idle = false
        if let active = options.clientsActive, !active() {
            let needed = quietNeeded
            idle = options.clientsQuiet.map { $0() >= needed } ?? true
            if idle {
                // Another process may have committed since the last batch: look now, on the
                // writer, so that this batch is not idle if it did.
                store.database.writeWithoutTransaction { db in noteExternalWrites(db) }
                idle = pacing.externalWrite.map { ContinuousClock.now - $0 >= needed } ?? true
            }
        }
        if idle, counted { pacing.idleBatches += 1 }
        guard idle != pacing.idle else { return }
        let ratio = options.batchBudget / options.idleBatchBudget
        let scale = idle ? 1 / ratio : ratio
        step.counters.batchSize = min(Counters.maxBatchSize, max(16, Int(Double(step.counters.batchSize) * scale)))
        pacing.idle = idle
    }

    /// The budget of the batch in flight.
    var currentBudget: Duration { pacing.idle ? options.idleBatchBudget : options.batchBudget }

    /// How long the clients must have been quiet before the next idle batch: one idle budget,
    /// doubled by each idle batch that gave way, halved by each that ran to its end.
    var quietNeeded: Duration { pacing.quietNeeded ?? options.idleBatchBudget }

    /// After an idle batch that ran to its end: the wait for the next one shrinks back.
    func completedIdleBatch() {
        guard pacing.idle, let needed = pacing.quietNeeded else { return }
        pacing.quietNeeded = needed / 2 <= options.idleBatchBudget ? nil : needed / 2
    }

    /// After an idle batch that gave way to a client (rolled back): the next batch runs with
    /// the normal budget, sized for it, and the next idle batch waits for twice the quiet.
    func gaveWay(_ step: TaskStep) {
        pacing.yielded += 1
        pacing.quietNeeded = min(quietNeeded * 2, options.idleBatchBudget * 32)
        if pacing.idle {
            pacing.idle = false
            let ratio = options.batchBudget / options.idleBatchBudget
            step.counters.batchSize = max(16, Int(Double(step.counters.batchSize) * ratio))
        }
        store.logger.debug("an idle batch gave way to a client call and was rolled back", metadata: ["strata.task": "\(step.id)"])
    }
}
