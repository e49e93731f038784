import Foundation

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
        /// Stored data the hop discarded (counted before its operations ran), with counts
        /// above zero only. A custom stage's `didMigrate` may have kept some of it elsewhere.
        public var discarded: [DiscardCount] = []
        /// Whether the hop ran a custom stage.
        public var isCustom = false
    }

    /// Data a hop discarded and how much.
    public struct DiscardCount: Sendable, Hashable {
        /// What was discarded.
        public var data: DiscardedData
        /// Non-null values or rows; nil when the hop did not count them
        /// (``StagedMigrationOptions/countsDiscards`` off).
        public var count: Int64?
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
    /// The store's metadata after the last hop, read on the migration's connection (the open
    /// that follows does not read it again); nil when no hop ran.
    var finalMetadata: StoreMetadata? = nil

    /// One line per discard: `hop 'Cars 2' -> 'Cars 3' discarded 125 non-null values of attribute Car.color`.
    public var discardWarnings: [String] {
        hops.flatMap { hop in
            hop.discarded.map { discard in
                "hop '\(hop.fromVersion)' -> '\(hop.toVersion)' discarded \(discard.data.describe(count: discard.count))"
                    + (hop.isCustom ? " (removed by the hop of custom stage '\(hop.stageLabel)', whose didMigrate may have kept them)" : "")
            }
        }
    }
}
