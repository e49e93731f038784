import Foundation

/// Tuning of ``PersistentStore/finishDeferredMigration(_:progress:)``.
public struct FinishOptions: Sendable {
    /// Time budget of one batch; batch sizes adapt to stay near it (default 20 ms).
    public var batchBudget: Duration
    /// The cost delay after each batch, so that foreground work gets the machine and the
    /// write lock (default none): `pauseBetweenBatches × (the batch's time ÷ batchBudget)`,
    /// at most ten times `pauseBetweenBatches` (PostgreSQL autovacuum's cost delay). The
    /// library is the one place that paces; ``shouldContinue`` is asked during the pause too.
    public var pauseBetweenBatches: Duration
    /// Checked before each batch and every few milliseconds of a pause: returning false stops
    /// the work at once, progress kept in the ledger (used by the idle scheduler to step aside
    /// when load returns). A pure, cheap check: it must not sleep (the library paces).
    public var shouldContinue: @Sendable () -> Bool
    /// Finish at most this many tasks (nil: all).
    public var maxTasks: Int?
    /// Checked about every millisecond **while a batch runs** (it must be cheap and must not
    /// sleep): returning true aborts the batch — rolled back, its progress not recorded — and
    /// stops the work, so that a stop does not wait for the rest of the batch. (The idle
    /// scheduler's pause: its gate closed, or clients came back.)
    public var interruptRequested: @Sendable () -> Bool
    /// Asked before each batch and during each cost delay: the pacing to use from then on
    /// (nil: ``batchBudget`` and ``pauseBetweenBatches`` throughout). A setting changed while
    /// the work runs (`stratactl set batch_budget=20ms`) applies at the next batch, and the
    /// store's log says so with the new values. A pure, cheap check, like ``shouldContinue``.
    public var livePacing: (@Sendable () -> FinishPacing)?
    /// Whether a client call is in flight for the store now (cheap, must not sleep; nil:
    /// unknown, every batch keeps to ``batchBudget``). While it answers false, batches may take
    /// up to ``idleBatchBudget`` (nobody waits for the write lock); the cost delay after one
    /// scales with that budget, so the work's share of the machine is unchanged.
    /// It is asked again at every progress callback of such an idle batch: a client's arrival
    /// aborts the batch (rolled back, run again at the normal size), so that the client waits
    /// about as long as behind a batch of ``batchBudget``.
    public var clientsActive: (@Sendable () -> Bool)?
    /// How long no client call has been in flight for the store (zero while one is; cheap, must
    /// not sleep; nil: unknown, an idle batch may begin as soon as ``clientsActive`` answers
    /// false). Clients that call every few milliseconds are never in flight between two calls,
    /// yet each arrival would abort an idle batch begun in the gap and throw its work away. So a
    /// batch begins as an idle batch only after the clients have been quiet for one
    /// ``idleBatchBudget``, a wait that doubles each time an idle batch gives way (at most 32
    /// budgets) and halves again with each idle batch that runs to its end. Commits by other
    /// processes count too: the finisher looks for them (`PRAGMA data_version`) before each batch.
    public var clientsQuiet: (@Sendable () -> Duration)?
    /// The time budget of a batch while no client call is in flight (see ``clientsActive``;
    /// default 250 ms).
    public var idleBatchBudget: Duration
    /// Whether this run gives the free pages back too (the incremental vacuum task, always
    /// last in the ledger; default true). False ends the run once only the vacuum is left: the
    /// change itself is complete then (the schema is the new model's, the old data dropped),
    /// and its free pages wait in the file for a later run — as the sqlite3 CLI leaves them
    /// after `ALTER TABLE … DROP COLUMN`, and as PostgreSQL leaves space to autovacuum.
    /// ``FinishReport/spaceReclaimLeft`` says so. stratad's `FinishDeferred` leaves the vacuum
    /// to its idle scheduler unless asked with `reclaim` (docs/Deferral.md, "Giving space back").
    public var reclaimSpace = true
    /// Asked for each pending task before it would run (cheap, must not sleep; nil: none is):
    /// true leaves the task in the ledger for a later run, which ends then with
    /// ``FinishReport/stoppedEarly`` while such tasks remain. stratad holds the cleanup that
    /// would destroy what clients of an older model version still use (issue 47, Rollout/).
    public var holds: (@Sendable (DeferredTask, MigrationOperation) -> Bool)?

    /// Options with the library's defaults: 20 ms batches, no pause, every task, never stopping early.
    public init(batchBudget: Duration = .milliseconds(20), pauseBetweenBatches: Duration = .zero,
                maxTasks: Int? = nil, shouldContinue: @escaping @Sendable () -> Bool = { true },
                interruptRequested: @escaping @Sendable () -> Bool = { false },
                clientsActive: (@Sendable () -> Bool)? = nil, clientsQuiet: (@Sendable () -> Duration)? = nil,
                idleBatchBudget: Duration = .milliseconds(250)) {
        self.batchBudget = batchBudget
        self.pauseBetweenBatches = pauseBetweenBatches
        self.maxTasks = maxTasks
        self.shouldContinue = shouldContinue
        self.interruptRequested = interruptRequested
        self.clientsActive = clientsActive
        self.clientsQuiet = clientsQuiet
        self.idleBatchBudget = max(idleBatchBudget, batchBudget)
    }
}
