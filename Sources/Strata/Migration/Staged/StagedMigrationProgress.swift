import Foundation
import Logging

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
