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
        /// Drop an index whose definition (or name) changed and build it as the model defines it.
        case rebuildIndex
        /// Reclaim free pages.
        case incrementalVacuum
    }

    public enum State: String, Sendable, Hashable, Codable {
        case pending
        case running
        case done
    }

    public var id: Int64
    public var kind: Kind
    /// The table the task works on, when it has one.
    public var table: String?
    /// What the task does and why: "rewrite table Aircraft: drop column photo (attribute removed in Aircraft 2)".
    public var summary: String
    public var state: State
    /// Rows processed so far (table rewrites and drops).
    public var rowsDone: Int64
    /// Rows to process, estimated when the task was recorded.
    public var rowsTotal: Int64
    public var createdAt: Date

    /// Progress in 0...1.
    public var fraction: Double { rowsTotal > 0 ? min(1, Double(rowsDone) / Double(rowsTotal)) : (state == .done ? 1 : 0) }
}

/// Tuning of ``PersistentStore/finishDeferredMigration(_:progress:)``.
public struct FinishOptions: Sendable {
    /// Time budget of one batch; batch sizes adapt to stay near it (default 20 ms).
    public var batchBudget: Duration
    /// Pause after each batch, so that foreground work gets the write lock (default none).
    public var pauseBetweenBatches: Duration
    /// Checked before each batch: returning false stops the work at once, progress kept in
    /// the ledger (used by the idle scheduler to step aside when load returns).
    public var shouldContinue: @Sendable () -> Bool
    /// Finish at most this many tasks (nil: all).
    public var maxTasks: Int?

    public init(batchBudget: Duration = .milliseconds(20), pauseBetweenBatches: Duration = .zero,
                maxTasks: Int? = nil, shouldContinue: @escaping @Sendable () -> Bool = { true }) {
        self.batchBudget = batchBudget
        self.pauseBetweenBatches = pauseBetweenBatches
        self.maxTasks = maxTasks
        self.shouldContinue = shouldContinue
    }
}

/// Progress reported while finishing deferred work.
public struct DeferredProgress: Sendable, Hashable {
    public var task: DeferredTask
    /// Index of the task among those of this run (0-based) and their count.
    public var taskIndex: Int
    public var taskCount: Int
}

/// What a call to ``PersistentStore/finishDeferredMigration(_:progress:)`` did.
public struct FinishReport: Sendable, Hashable, Codable {
    public var tasksFinished: Int
    public var tasksRemaining: Int
    public var rowsProcessed: Int64
    public var batches: Int
    public var seconds: Double
    /// True when `shouldContinue` or cancellation stopped the work before the ledger was empty.
    public var stoppedEarly: Bool
}
