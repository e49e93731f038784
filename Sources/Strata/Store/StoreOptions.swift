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
        fileMode: mode_t = StoreOptions.defaultFileMode, walCheckpointing: WALCheckpointing = .strata
    ) {
        self.fileMode = fileMode
        self.walCheckpointing = walCheckpointing
        self.createIfMissing = createIfMissing
        self.readOnly = readOnly
        self.busyTimeout = busyTimeout
        self.migration = migration
        self.logger = logger
    }
}

/// Migration at open, modelled on Core Data's options
/// (`NSMigratePersistentStoresAutomaticallyOption`, `NSInferMappingModelAutomaticallyOption`,
/// `NSPersistentStoreDeferredLightweightMigrationOptionKey`).
public struct MigrationOptions: Sendable, Hashable {
    /// Migrate a store written with an older model to the requested model.
    public var migrateAutomatically: Bool
    /// Infer a lightweight migration plan when the versions differ.
    public var inferAutomatically: Bool
    /// Record expensive cleanup in the deferred ledger instead of running it before open returns.
    public var deferCleanup: Bool
    /// Earlier model versions, used to find the store's version by checksum when the store's
    /// embedded model is not enough (e.g. staged chains).
    public var knownVersions: [ObjectModel]
    /// Where to write a backup of the store when a migration at open changes it (nil: none).
    ///
    /// The backup is a consistent copy written with SQLite's online backup API (one file, no
    /// `-wal`), taken **before anything is destroyed**:
    ///
    /// - when the migration's synchronous part destroys data (rows of removed entities,
    ///   values overwritten; see ``MigrationOperation/destroysData``) or cleanup is not
    ///   deferred, the copy is written before the migration, and `open` takes time
    ///   proportional to the store's size;
    /// - otherwise the old data stay in the store until the deferred cleanup runs, so `open`
    ///   returns at once and the copy is the first task of the deferred ledger
    ///   (``DeferredTask/Kind/backup``): taken online, a few pages per batch, before any
    ///   other task runs. It holds every row and value the store had before the migration,
    ///   in the new model's shape with the old columns and tables still there.
    ///
    /// The file must not exist; it appears (renamed from `destination.partial`) only once complete.
    public var backup: URL?

    /// Allow a migration that drops every entity of the store, and so all its rows. Off by
    /// default: such a migration is refused (``StoreError/Code/migrationRefused``, with a
    /// ``MigrationError/Code/dropsEveryEntity`` reason), since it is almost always a store
    /// opened with the wrong model.
    public var allowsDroppingAllEntities: Bool

    /// Migration options; by default the store migrates automatically with an inferred lightweight plan and the cleanup runs before the open returns (``deferred`` defers it).
    public init(migrateAutomatically: Bool = true, inferAutomatically: Bool = true, deferCleanup: Bool = false,
                knownVersions: [ObjectModel] = [], allowsDroppingAllEntities: Bool = false, backup: URL? = nil) {
        self.migrateAutomatically = migrateAutomatically
        self.inferAutomatically = inferAutomatically
        self.deferCleanup = deferCleanup
        self.knownVersions = knownVersions
        self.backup = backup
        self.allowsDroppingAllEntities = allowsDroppingAllEntities
    }

    /// Lightweight migration with cleanup deferred: the store is usable in milliseconds.
    public static let deferred = MigrationOptions(deferCleanup: true)
    /// Lightweight migration with cleanup run before open returns.
    public static let immediate = MigrationOptions(deferCleanup: false)
}
