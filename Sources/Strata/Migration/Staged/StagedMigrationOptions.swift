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
    /// Allow lightweight hops that discard stored data (counted and reported in
    /// ``StagedMigrationReport/Hop/discarded`` either way). Off (`--no-discard`,
    /// `allow_discards: false`), such a hop is refused with
    /// ``StagedMigrationError/Code/discardsData`` and rolled back — the first hop before
    /// anything is written. Custom stages are not refused: their `didMigrate` may keep what
    /// the hop removes.
    public var allowsDiscards = true
    /// Count what each lightweight hop discards (the non-null values of a removed attribute,
    /// the objects of a removed entity) for ``StagedMigrationReport/Hop/discarded``, the log and
    /// the migration log. Counting reads every row of each table concerned inside the hop, so a
    /// daemon opening a large store turns it off: its readiness must not wait for a scan
    /// (1.4 s at 4M rows). Off, the hop names what it discards without a count
    /// (``StagedMigrationReport/DiscardCount/count`` nil; `stratactl plan --store` counts it).
    /// With ``allowsDiscards`` off, hops are counted either way (the refusal needs the counts).
    public var countsDiscards = true
    /// Who checkpoints the store's WAL (``StoreOptions/walCheckpointing``). With
    /// ``WALCheckpointing/external`` (a replicator such as Litestream holds a read transaction
    /// on the WAL and checkpoints it itself) the migration only runs a `PASSIVE` checkpoint
    /// before its first hop: a `TRUNCATE` would wait out ``busyTimeout`` for the replicator's
    /// read transaction (an open ready in 5.1 s instead of 0.08 s at 100k rows) or, landing
    /// between two of its syncs, restart the WAL behind its back. Its connections run without
    /// automatic checkpoints, as the store's do.
    public var walCheckpointing: WALCheckpointing = .strata

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
