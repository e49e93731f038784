import Foundation
import Logging

/// How ``StagedMigrationManager/migrateStore(at:options:progress:)`` runs.
public struct StagedMigrationOptions: Sendable {
    /// Record expensive cleanup (dropping removed columns and tables, building indexes) in the
    /// deferred ledger instead of running it before returning. Custom stages' removed
    /// attributes then stay on disk until ``PersistentStore/finishDeferredMigration(_:progress:)``.
    public var deferCleanup: Bool
    /// Write a copy of the store here (`VACUUM INTO`) before the first hop; must not exist.
    public var backupURL: URL?
    /// A backup that waits for the cleanup when it can (the daemon's `backup: true`): when
    /// nothing is destroyed before the cleanup runs — every hop lightweight, cleanup deferred,
    /// no hop's synchronous part destroys data (``MigrationOperation/destroysData``) — it is
    /// recorded in the first hop's transaction as the first deferred task and taken online
    /// (``MigrationOptions/backup``); otherwise it is copied before the first hop, like
    /// ``backupURL``. Must not exist. Ignored when ``backupURL`` is set.
    public var onlineBackupURL: URL?
    /// How long to wait for another connection's lock.
    public var busyTimeout: TimeInterval
    /// Stop after this version (by name) instead of the chain's end.
    public var stopAfterVersion: String?
    /// Where the migration logs.
    public var logger: Logger
    /// Allow a migration after which none of the store's entities is left (all its data
    /// dropped); refused by default (``StagedMigrationError/Code/dropsEveryEntity``).
    public var allowsDroppingAllEntities: Bool

    /// Options; by default the cleanup is deferred and no backup is written.
    public init(deferCleanup: Bool = true, backupURL: URL? = nil, busyTimeout: TimeInterval = 5,
                stopAfterVersion: String? = nil, logger: Logger = Logger(label: "io.strata.migration"),
                allowsDroppingAllEntities: Bool = false, onlineBackupURL: URL? = nil) {
        self.allowsDroppingAllEntities = allowsDroppingAllEntities
        self.onlineBackupURL = onlineBackupURL
        self.deferCleanup = deferCleanup
        self.backupURL = backupURL
        self.busyTimeout = busyTimeout
        self.stopAfterVersion = stopAfterVersion
        self.logger = logger
    }
}

/// Where a staged migration is, reported to the progress callback.
public struct StagedMigrationProgress: Sendable, CustomStringConvertible {
    /// What the migration is doing.
    public enum Phase: String, Sendable {
        /// The backup is being written.
        case backingUp
        /// A hop's transaction began.
        case hopStarted
        /// A custom stage's `willMigrate` handler is running (source model).
        case willMigrate
        /// The hop's schema changes are running.
        case migrating
        /// A custom stage's `didMigrate` handler is running (destination model).
        case didMigrate
        /// The hop committed: the store is at ``toVersion``.
        case hopCommitted
        /// Cleanup is running (without deferral), after the last hop.
        case cleaningUp
        /// Everything is done.
        case finished
    }

    /// What it is doing.
    public var phase: Phase
    /// The current stage (0-based).
    public var stage: Int
    /// The number of stages.
    public var stageCount: Int
    /// The current stage's label.
    public var stageLabel: String
    /// 1-based hop among the hops this run performs.
    public var hop: Int
    /// The number of hops.
    public var hopCount: Int
    /// The version of the current hop's start.
    public var fromVersion: String
    /// The version of the current hop's end.
    public var toVersion: String
    /// Rows in the tables the hop touches (estimated from primary keys, before the hop).
    public var rowsTouched: Int64
    /// Rows the hop wrote (SQLite's change count: data copies and handlers), once committed.
    public var rowsWritten: Int64

    /// Completed fraction of the run (hops committed / hops).
    public var fraction: Double {
        guard hopCount > 0 else { return 1 }
        if phase == .finished || phase == .cleaningUp { return 1 }
        let done = Double(hop - 1) + (phase == .hopCommitted ? 1 : 0)
        return min(1, max(0, done / Double(hopCount)))
    }

    /// The phase in words: `backing up`, `cleaning up at 'Aircraft 3'`, …
    public var description: String {
        switch phase {
        case .backingUp: return "backing up"
        case .finished: return "finished at '\(toVersion)'"
        case .cleaningUp: return "cleaning up at '\(toVersion)'"
        default:
            return "stage \(stage)/\(stageCount) '\(stageLabel)', hop \(hop)/\(hopCount) '\(fromVersion)' -> '\(toVersion)': \(phase.rawValue)"
                + (phase == .hopCommitted ? " (\(rowsWritten) rows written)" : rowsTouched > 0 ? " (~\(rowsTouched) rows)" : "")
        }
    }
}

/// What a staged migration did.
public struct StagedMigrationReport: Sendable {
    /// One committed hop.
    public struct Hop: Sendable, Hashable {
        /// The stage (0-based).
        public var stage: Int
        /// The stage's label.
        public var stageLabel: String
        /// The version before the hop.
        public var fromVersion: String
        /// The version after the hop.
        public var toVersion: String
        /// The synchronous operations run.
        public var synchronousOperations: Int
        /// Rows written by the operations and handlers.
        public var rowsWritten: Int64
        /// How long the hop took.
        public var duration: Duration
    }

    /// The store's version before, and after.
    public var startVersion: String
    /// The version after.
    public var endVersion: String
    /// Every committed hop, in order.
    public var hops: [Hop]
    /// Where the backup was written, if one was.
    public var backupURL: URL?
    /// Deferred tasks pending in the ledger afterwards.
    public var pendingDeferredTasks: Int
}
