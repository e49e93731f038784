import Foundation
import StrataVarlink

/// One hosted store.
public struct StoreConfiguration: Sendable, Hashable {
    /// The name clients use (`[A-Za-z0-9_.-]+`).
    public var name: String
    /// The store file.
    public var path: String
    /// A model directory (with a `versions.yaml` manifest).
    public var modelDirectory: String
    /// The model version the store is opened (and migrated) to; nil for the directory's current.
    public var targetVersion: String?
    /// Record expensive migration cleanup in the deferred ledger instead of running it at open.
    public var deferCleanup: Bool
    /// Copy the store file aside before a migration at open.
    public var backupBeforeMigration: Bool
    /// How long to wait for a lock held by another process.
    public var busyTimeout: Duration
    /// Allow a migration at open that drops every entity of the store (all its data);
    /// `allow_dropping_all_entities`, off by default.
    public var allowsDroppingAllEntities: Bool
    /// Allow a migration at open that discards stored data (values of removed attributes, rows
    /// of removed entities); `allow_discards`, on by default. Off, such a migration is refused
    /// before any write, with what it would discard (``MigrationOptions/allowsDiscards``).
    public var allowsDiscards = true
    /// A stage file (`MigrationStageFile`, the SQL stages `stratactl migrate --stages` reads)
    /// whose custom stages the migration at open runs where a hop of the version graph needs
    /// one; `stages`, none by default.
    public var stagesFile: String?
    /// Change history: whether saves record it, and how long it is kept (`history`).
    public var history: HistoryRetention = HistoryRetention()
    /// Replication by Litestream (`replication:`); nil when the store is not replicated.
    public var replication: ReplicationConfiguration?
    /// How long one call may run in SQLite on this store (`call_timeout`); nil for
    /// ``Limits/callTimeout``.
    public var callTimeout: Duration?

    /// Memberwise initializer.
    public init(name: String, path: String, modelDirectory: String, targetVersion: String? = nil, deferCleanup: Bool = true,
                backupBeforeMigration: Bool = true, busyTimeout: Duration = .seconds(5), allowsDroppingAllEntities: Bool = false,
                stagesFile: String? = nil, replication: ReplicationConfiguration? = nil,
                callTimeout: Duration? = nil) {
        self.replication = replication
        self.callTimeout = callTimeout
        self.allowsDroppingAllEntities = allowsDroppingAllEntities
        self.stagesFile = stagesFile
        self.name = name
        self.path = path
        self.modelDirectory = modelDirectory
        self.targetVersion = targetVersion
        self.deferCleanup = deferCleanup
        self.backupBeforeMigration = backupBeforeMigration
        self.busyTimeout = busyTimeout
    }
}
