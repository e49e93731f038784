import Foundation

/// Opens a store for a schema, migrating it through a ``SchemaMigrationPlan`` first when it
/// was written with an earlier version (SwiftData's `ModelContainer`).
///
/// ```swift
/// let container = try ModelContainer(for: AircraftSchemaV3.self, migrationPlan: AircraftMigrationPlan.self,
///                                    url: URL(filePath: "var/aircraft.sqlite"))
/// let context = ModelContext(container)
/// ```
///
/// Migration runs on Strata's staged migration, one committed hop per schema pair, with the
/// cleanup (dropping removed columns and tables, building indexes) **deferred** by default:
/// the store is usable as soon as the synchronous part is done, and the rest waits in the
/// store's ledger for ``PersistentStore/finishDeferredMigration(_:progress:)`` (or stratad's
/// idle scheduler). A store written by the string-keyed API or from a model directory opens
/// with the schema of the same checksum, and the other way round.
public final class ModelContainer: Sendable {
    /// The open store.
    public let store: PersistentStore
    /// The schema the store is open with.
    public let schema: Schema
    /// The object model of ``schema``.
    public let model: ObjectModel
    /// The stages the open ran (empty when the store was current or new).
    public let migration: SchemaMigrationRoute?

    /// Opens (or creates) the store at `url` for `schema`, migrating it through `migrationPlan`.
    ///
    /// - Parameters:
    ///   - deferCleanup: record the expensive cleanup in the store's ledger instead of running
    ///     it before returning (default true).
    /// - Throws: ``SchemaMigrationPlanError`` for a plan that cannot run (before anything is
    ///   written, with the plan printed); ``StagedMigrationError``, ``StoreError`` from the
    ///   migration and the open; ``ModelSchemaError``, ``ModelError`` for invalid schemas.
    public init(for schema: any VersionedSchema.Type, migrationPlan: (any SchemaMigrationPlan.Type)? = nil, url: URL,
                deferCleanup: Bool = true, options: StoreOptions = StoreOptions()) throws {
        let target = try schema.objectModel()
        self.schema = schema.schema
        self.model = target
        var route: SchemaMigrationRoute?
        if let migrationPlan, FileManager.default.fileExists(atPath: url.path), !options.readOnly {
            let metadata = try PersistentStore.metadata(at: url, busyTimeout: options.busyTimeout)
            if !metadata.isCompatible(with: target) {
                route = try SchemaMigrationRoute(plan: migrationPlan, target: schema, storeChecksum: metadata.modelChecksum)
            }
        }
        if let route, !route.stages.isEmpty {
            var migrationOptions = StagedMigrationOptions(deferCleanup: deferCleanup, busyTimeout: options.busyTimeout, logger: options.logger)
            migrationOptions.countsDiscards = false
            store = try PersistentStore.open(at: url, model: target, stagedMigration: route.manager, options: options, migrationOptions: migrationOptions)
        } else {
            var plain = options
            if plain.migration == nil { plain.migration = MigrationOptions(deferCleanup: deferCleanup) }
            store = try PersistentStore.open(at: url, model: target, options: plain)
        }
        self.migration = route
    }

    /// Opens (or creates) the store at `url` for unversioned model classes (lightweight
    /// migration at open, cleanup deferred).
    public convenience init(for models: any PersistentModel.Type..., url: URL, options: StoreOptions = StoreOptions()) throws {
        try self.init(schema: Schema(models), url: url, options: options)
    }

    /// Opens (or creates) the store at `url` for `schema` (lightweight migration at open).
    public init(schema: Schema, url: URL, options: StoreOptions = StoreOptions()) throws {
        self.schema = schema
        self.model = try schema.objectModel()
        var plain = options
        if plain.migration == nil { plain.migration = MigrationOptions(deferCleanup: true) }
        self.store = try PersistentStore.open(at: url, model: model, options: plain)
        self.migration = nil
    }
}

extension ModelContext {
    /// A context on the container's store.
    public convenience init(_ container: ModelContainer) {
        self.init(store: container.store)
    }
}
