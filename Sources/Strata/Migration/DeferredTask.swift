import Foundation

/// One pending task of a store's deferred ledger: cleanup left by a lightweight migration
/// opened with deferral (Core Data's `NSPersistentStoreDeferredLightweightMigrationOptionKey`).
public struct DeferredTask: Sendable, Hashable, Codable {
    /// What a task does.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// Copy a table into its final shape (drops columns, ordering columns, retypes, builds indexes).
        case rewriteTable
        /// Drop a table no longer in the model.
        case dropTable
        /// Build an index.
        case createIndex
        /// Drop an index no longer in the model.
        case dropIndex
        /// Reclaim free pages.
        case incrementalVacuum
        /// Copy the store to a backup file (online, before any other task destroys data).
        case backup
    }

    /// Where a task is.
    public enum State: String, Sendable, Hashable, Codable {
        case pending
        case running
        case done
    }

    /// The task's row id in the ledger.
    public var id: Int64
    /// What the task does.
    public var kind: Kind
    /// The table the task works on, when it has one.
    public var table: String?
    /// What the task does and why: "rewrite table Aircraft: drop column photo (attribute removed in Aircraft 2)".
    public var summary: String
    /// Pending, running (a rewrite in progress) or done.
    public var state: State
    /// Rows processed so far (table rewrites, drops, index builds); pages copied for a backup.
    public var rowsDone: Int64
    /// Rows to process, estimated when the task was recorded (pages for a backup).
    public var rowsTotal: Int64
    /// When the task was recorded.
    public var createdAt: Date

    /// Progress in 0...1.
    public var fraction: Double { rowsTotal > 0 ? min(1, Double(rowsDone) / Double(rowsTotal)) : (state == .done ? 1 : 0) }
}

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
    /// Whether a client call is in flight for the store now (cheap, must not sleep; nil:
    /// unknown, every batch keeps to ``batchBudget``). While it answers false, batches may take
    /// up to ``idleBatchBudget`` (nobody waits for the write lock); the cost delay after one
    /// scales with that budget, so the work's share of the machine is unchanged.
    /// It is asked again at every progress callback of such an idle batch: a client's arrival
    /// aborts the batch (rolled back, run again at the normal size), so that the client waits
    /// about as long as behind a batch of ``batchBudget``.
    public var clientsActive: (@Sendable () -> Bool)?
    /// The time budget of a batch while no client call is in flight (see ``clientsActive``;
    /// default 250 ms).
    public var idleBatchBudget: Duration

    /// Options with the library's defaults: 20 ms batches, no pause, every task, never stopping early.
    public init(batchBudget: Duration = .milliseconds(20), pauseBetweenBatches: Duration = .zero,
                maxTasks: Int? = nil, shouldContinue: @escaping @Sendable () -> Bool = { true },
                interruptRequested: @escaping @Sendable () -> Bool = { false },
                clientsActive: (@Sendable () -> Bool)? = nil, idleBatchBudget: Duration = .milliseconds(250)) {
        self.batchBudget = batchBudget
        self.pauseBetweenBatches = pauseBetweenBatches
        self.maxTasks = maxTasks
        self.shouldContinue = shouldContinue
        self.interruptRequested = interruptRequested
        self.clientsActive = clientsActive
        self.idleBatchBudget = max(idleBatchBudget, batchBudget)
    }
}

/// Progress reported while finishing deferred work.
public struct DeferredProgress: Sendable, Hashable {
    /// The task being worked on, with its progress.
    public var task: DeferredTask
    /// Index of the task among those of this run (0-based) and their count.
    public var taskIndex: Int
    /// The number of tasks of this run.
    public var taskCount: Int
}

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
    /// Cost delay slept between batches (``FinishOptions/pauseBetweenBatches``), in seconds.
    public var pauseSeconds: Double = 0
    /// Idle batches that gave way to a client's arrival (rolled back and run again at the
    /// normal size; see ``FinishOptions/clientsActive``).
    public var batchesYielded: Int = 0
}
