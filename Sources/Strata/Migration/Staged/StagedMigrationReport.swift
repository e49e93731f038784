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
}
