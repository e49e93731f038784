import Foundation
import Logging

extension DeferredFinisher {
    /// A finisher for one run of `store`'s ledger with `options`.
    init(store: PersistentStore, options: FinishOptions, progress: (@Sendable (DeferredProgress) -> Void)?) {
        self.init(store: store, requestedOptions: options, progress: progress)
    }

    /// The options in force: those the run was given, with the batch budget and cost delay
    /// ``FinishOptions/livePacing`` last gave (a setting changed while the work runs).
    var options: FinishOptions {
        guard let current = pacing.current else { return requestedOptions }
        var options = requestedOptions
        options.batchBudget = current.batchBudget
        options.pauseBetweenBatches = current.pauseBetweenBatches
        return options
    }

    /// What ``FinishOptions/livePacing`` gives now (nil: nothing live), as the run takes it: a
    /// zero budget would stop every batch at once, so the smallest budget is a millisecond; a
    /// cost delay is never negative.
    static func livePacing(_ options: FinishOptions) -> FinishPacing? {
        guard let live = options.livePacing?() else { return nil }
        return FinishPacing(batchBudget: max(.milliseconds(1), live.batchBudget), pauseBetweenBatches: max(.zero, live.pauseBetweenBatches))
    }

    /// Asks ``FinishOptions/livePacing`` for the pacing and, when it changed, takes it from the
    /// next batch on and says so in the store's log, with the new values and the old.
    func refreshPacing() {
        guard let next = Self.livePacing(requestedOptions) else { return }
        let previous = FinishPacing(batchBudget: options.batchBudget, pauseBetweenBatches: options.pauseBetweenBatches)
        guard next != previous else { return }
        pacing.current = next
        store.logger.notice("deferred work in flight takes new pacing from its next batch", metadata: [
            "strata.budget_ms": "\(Self.milliseconds(next.batchBudget))", "strata.pause_ms": "\(Self.milliseconds(next.pauseBetweenBatches))",
            "strata.previous_budget_ms": "\(Self.milliseconds(previous.batchBudget))",
            "strata.previous_pause_ms": "\(Self.milliseconds(previous.pauseBetweenBatches))",
        ])
    }
}
