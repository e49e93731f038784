import Foundation
import Logging

extension DeferredFinisher {
    /// The batch budget in force: the options' own, or the last one ``FinishOptions/livePacing`` gave.
    var batchBudget: Duration { pacing.current?.batchBudget ?? options.batchBudget }
    /// The cost delay in force (see ``batchBudget``).
    var pauseBetweenBatches: Duration { pacing.current?.pauseBetweenBatches ?? options.pauseBetweenBatches }

    /// Asks ``FinishOptions/livePacing`` for the pacing and, when it changed, takes it from the
    /// next batch on and says so in the store's log, with the new values and the old.
    func refreshPacing() {
        guard let live = options.livePacing?() else { return }
        let previous = FinishPacing(batchBudget: batchBudget, pauseBetweenBatches: pauseBetweenBatches)
        guard live != previous else { return }
        // A zero budget would stop every batch at once: the smallest budget is a millisecond.
        pacing.current = FinishPacing(batchBudget: max(.milliseconds(1), live.batchBudget), pauseBetweenBatches: max(.zero, live.pauseBetweenBatches))
        store.logger.notice("deferred work in flight takes new pacing from its next batch", metadata: [
            "strata.budget_ms": "\(Self.milliseconds(batchBudget))", "strata.pause_ms": "\(Self.milliseconds(pauseBetweenBatches))",
            "strata.previous_budget_ms": "\(Self.milliseconds(previous.batchBudget))",
            "strata.previous_pause_ms": "\(Self.milliseconds(previous.pauseBetweenBatches))",
        ])
    }
}
