/// How deferred work is paced: a batch's time budget and the cost delay after it
/// (``FinishOptions/livePacing``).
public struct FinishPacing: Sendable, Hashable {
    /// Time budget of one batch.
    public var batchBudget: Duration
    /// The cost delay after a batch that took its whole budget.
    public var pauseBetweenBatches: Duration

    /// Memberwise initializer.
    public init(batchBudget: Duration, pauseBetweenBatches: Duration) {
        self.batchBudget = batchBudget
        self.pauseBetweenBatches = pauseBetweenBatches
    }
}
