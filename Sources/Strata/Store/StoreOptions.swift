import Foundation
import Logging

/// How ``PersistentStore/open(at:model:options:)`` opens a store.
///
/// The defaults create a missing store, open it for writing, wait up to 5 seconds for a lock
/// held by another connection, and refuse a store written with another model version
/// (set ``migration`` to migrate instead).
public struct StoreOptions: Sendable {
    /// Create the store (and its directory) when the file does not exist.
    public var createIfMissing: Bool
    /// Open without any write: no creation, no migration, saves fail.
    public var readOnly: Bool
    /// How long to wait for another connection's lock before failing with ``StoreError/Code/locked``.
    /// Negative and NaN values mean no wait; values past ``maximumBusyTimeout`` wait that long.
    public var busyTimeout: TimeInterval
    /// Migration at open; nil refuses a store whose model differs (``StoreError/Code/incompatibleModel``).
    public var migration: MigrationOptions?
    /// Where the store logs (metadata key `strata.store` carries the path).
    public var logger: Logger
    /// The permissions of the files this store creates: the store itself when it is created,
    /// and its backups. SQLite gives the `-wal` and `-shm` files the store's permissions. The
    /// process umask can only narrow them. Default ``defaultFileMode`` (owner only): the rows
    /// of a store are read through the library or the daemon, which check access; a mode that
    /// lets other users read the file lets them bypass those checks with `sqlite3`.
    public var fileMode: mode_t
    /// Whether saves record change history (``PersistentStore/history(since:entities:limit:)``,
    /// docs/History.md) in the same transaction as their changes. Default on.
    public var recordsHistory: Bool
    /// Who checkpoints the store's WAL: Strata (``WALCheckpointing/strata``, the default) or a
    /// replicator such as Litestream (``WALCheckpointing/external``); see docs/Fleet.md.
    public var walCheckpointing: WALCheckpointing

    /// `0600`: read and write for the owner only.
    public static let defaultFileMode: mode_t = 0o600

    /// The longest busy timeout SQLite can take (24 days: whole milliseconds in an `Int32`).
    public static let maximumBusyTimeout: TimeInterval = TimeInterval(Int32.max / 1000)

    /// Options with a default for every parameter: the store is created if missing, opened read-write, and not migrated.
    public init(
        createIfMissing: Bool = true, readOnly: Bool = false, busyTimeout: TimeInterval = 5,
        migration: MigrationOptions? = nil, logger: Logger = Logger(label: "io.strata.store"),
        fileMode: mode_t = StoreOptions.defaultFileMode, recordsHistory: Bool = true,
        walCheckpointing: WALCheckpointing = .strata
    ) {
        self.fileMode = fileMode
        self.recordsHistory = recordsHistory
        self.walCheckpointing = walCheckpointing
        self.createIfMissing = createIfMissing
        self.readOnly = readOnly
        self.busyTimeout = busyTimeout
        self.migration = migration
        self.logger = logger
    }
}
