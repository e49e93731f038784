import Foundation
import Logging

extension DeferredFinisher {
    /// A finisher for one run of `store`'s ledger with `options`.
    init(store: PersistentStore, options: FinishOptions, progress: (@Sendable (DeferredProgress) -> Void)?) {
        let arrivals = ArrivalChecks()
        self.init(store: store, requestedOptions: options, progress: progress, arrivals: arrivals,
                  stepAside: StepAside(options: options, arrivals: arrivals))
    }

    /// The options in force: those the run was given, with the batch budget and cost delay
    /// ``FinishOptions/livePacing`` last gave (a setting changed while the work runs).
    var options: FinishOptions {
        let current = stepAside.pacing
        var options = requestedOptions
        options.batchBudget = current.batchBudget
        options.pauseBetweenBatches = current.pauseBetweenBatches
        return options
    }

    /// Asks ``FinishOptions/livePacing`` for the pacing (``StepAside/refreshPacing()``) and,
    /// when it changed, says so in the store's log, with the new values and the old.
    func refreshPacing() {
        guard let (next, previous) = stepAside.refreshPacing() else { return }
        store.logger.notice("deferred work in flight takes new pacing from its next batch", metadata: [
            "strata.budget_ms": "\(Self.milliseconds(next.batchBudget))", "strata.pause_ms": "\(Self.milliseconds(next.pauseBetweenBatches))",
            "strata.previous_budget_ms": "\(Self.milliseconds(previous.batchBudget))",
            "strata.previous_pause_ms": "\(Self.milliseconds(previous.pauseBetweenBatches))",
        ])
    }
}
