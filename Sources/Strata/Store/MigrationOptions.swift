import Foundation

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

    /// Allow a migration at open that discards stored data: non-null values of removed or
    /// retyped attributes, rows of removed entities, links of removed relationships. On by
    /// default, as in Core Data. Off (`allow_discards: false` for a store in stratad.yaml), the
    /// discards are counted before any write (one `count` query per discarded column or table,
    /// a full scan each) and a migration that would discard anything is refused
    /// (``StoreError/Code/migrationRefused``), naming what and how much, with nothing changed.
    public var allowsDiscards = true

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
