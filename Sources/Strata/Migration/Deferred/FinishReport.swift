import Foundation

/// What a call to ``PersistentStore/finishDeferredMigration(_:progress:)`` did.
public struct FinishReport: Sendable, Hashable, Codable {
    /// Tasks finished by this run.
    public var tasksFinished: Int
    /// Tasks still in the ledger after it.
    public var tasksRemaining: Int
    /// Rows copied or deleted.
    public var rowsProcessed: Int64
    /// Batches (write transactions) run.
    public var batches: Int
    /// Wall-clock time of the run.
    public var seconds: Double
    /// True when `shouldContinue` or cancellation stopped the work before the ledger was empty.
    public var stoppedEarly: Bool
    /// True when the run left the incremental vacuum in the ledger on purpose
    /// (``FinishOptions/reclaimSpace`` false): the change is complete, its free pages are
    /// given back by a later run. Counted in ``tasksRemaining``; not ``stoppedEarly``.
    public var spaceReclaimLeft = false
    /// Cost delay slept between batches (``FinishOptions/pauseBetweenBatches``), in seconds.
    public var pauseSeconds: Double = 0
    /// Time the run held the store's writer connection for its work (batches and its other
    /// steps on the writer; the run's own set-up and restoring the connection at its end
    /// count in the rest), in seconds.
    public var lockHeldSeconds: Double = 0
    /// Time the run waited for the writer connection behind other calls (clients' writes),
    /// in seconds. What is left of ``seconds`` after this, ``lockHeldSeconds`` and
    /// ``pauseSeconds`` went to work outside the lock (sorting into the buffer, reads before a
    /// batch) and to the run's own scheduling.
    public var writerWaitSeconds: Double = 0
    /// Time the work's thread was runnable but waited for a core (the kernel's scheduler
    /// statistics), in seconds: part of ``lockHeldSeconds`` and of the rest, not beside them.
    /// Nil where the kernel does not say (not Linux).
    public var coreWaitSeconds: Double?
    /// Idle batches that gave way to a client's arrival (rolled back and run again at the
    /// normal size; see ``FinishOptions/clientsActive``).
    public var batchesYielded: Int = 0
    /// Batches begun as idle batches (with ``FinishOptions/idleBatchBudget``), those that gave
    /// way included.
    public var idleBatches: Int = 0
    /// The longest hold of the store's write lock by each step of the run, in milliseconds,
    /// by step name (`copy batch`, `sorted build`, `swap`, `drop batch`, `vacuum batch`, …):
    /// the longest a client can have waited behind the work, and which step made it wait.
    /// Every step is meant to stay within about one batch budget.
    public var longestLockHolds: [String: Double] = [:]
    /// The longest a client arriving at the worst moment would have waited for the write lock
    /// behind each step of the run, in milliseconds, by step name: the longest stretch of a
    /// hold without a point at which a client's arrival ends it (an idle batch gives way at
    /// each progress callback; a normal batch, a commit or a schema change counts whole). The
    /// promise of docs/Scheduler.md: about one `batch_budget` for every step.
    public var longestClientWaits: [String: Double] = [:]
}
