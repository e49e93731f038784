import Foundation

/// Opening a store described by a model directory and a target version: the one place that
/// decides between the version graph and a lightweight migration at open. stratad opens each
/// configured store with it; `stratactl migrate` runs its graph half
/// (``run(_:storeAt:from:options:progress:)``) on a store file.
extension DirectoryMigration {
    /// What ``open(storeAt:directory:target:options:staged:stages:willMigrate:progress:)`` did.
    public struct Opened: Sendable {
        /// The open store, at the target version.
        public let store: PersistentStore
        /// The migration through the version graph, when one ran (nil: the store opened as it
        /// was, with a lightweight migration at open if its model differed, or was created).
        public let graphMigration: StagedMigrationReport?
    }

    /// Why a configured store did not open. The store is at the version it was (or, for
    /// ``graph(_:)``, at the last hop that committed).
    public enum OpenFailure: Error, Sendable {
        /// Its metadata could not be read, or the open (with its lightweight migration) failed.
        case store(StoreError)
        /// It records a version the directory does not have, by checksum nor by name: it was
        /// left untouched (a migration would turn a misconfiguration into data loss).
        case unknownVersion(StoreMetadata)
        /// The migration through the version graph stopped: no route, a stage file that does not
        /// load (no hop), or a failing hop.
        case graph(DirectoryMigrationError)
    }

    /// Opens the store at `url` at the version `target` of `directory`:
    ///
    /// 1. reads the store's metadata, once (a missing or empty file is a new store, created at
    ///    the target);
    /// 2. refuses a store whose version the directory does not have (``OpenFailure/unknownVersion(_:)``);
    /// 3. when the store's version comes before the target in the directory (``applies(to:)``),
    ///    migrates it through the version graph hop by hop with `staged` and the custom stages
    ///    `stages` returns (read only then), `willMigrate` hearing the route first and
    ///    `progress` every step;
    /// 4. opens it for `target` with `options`: any other store whose model differs migrates
    ///    lightweight at open (``StoreOptions/migration``).
    ///
    /// ```swift
    /// let opened = try DirectoryMigration.open(storeAt: url, directory: directory, target: directory.current,
    ///                                          options: StoreOptions(migration: .deferred), staged: StagedMigrationOptions())
    /// opened.graphMigration?.hops.count
    /// ```
    public static func open(storeAt url: URL, directory: ModelDirectory, target: ObjectModel, options: StoreOptions,
                            staged: StagedMigrationOptions,
                            stages: () throws(StagedMigrationError) -> [MigrationStage] = { [] },
                            willMigrate: ((Route, StoreMetadata) -> Void)? = nil,
                            progress: ((StagedMigrationProgress) -> Void)? = nil) throws(OpenFailure) -> Opened {
        // A FIFO or other non-regular file is refused here, before anything could block on it.
        var existing: StoreMetadata?
        do {
            existing = try PersistentStore.metadata(at: url, busyTimeout: options.busyTimeout)
        } catch where error.code == .notFound {
            existing = nil
        } catch {
            throw .store(error)
        }
        var report: StagedMigrationReport?
        if let metadata = existing {
            guard directory.versions.contains(where: { $0.checksum == metadata.modelChecksum || $0.version == metadata.modelVersion }) else {
                throw .unknownVersion(metadata)
            }
            if DirectoryMigration(directory: directory, targetVersion: target.version).applies(to: metadata) {
                report = try migrateThroughGraph(url, metadata, directory, target, staged, stages, willMigrate, progress)
                existing = report?.finalMetadata  // migrated: as the migration's connection read it last
            }
        }
        do {
            let store: PersistentStore
            if let metadata = existing {
                store = try PersistentStore.open(at: url, model: target, options: options, metadata: metadata)
            } else {
                store = try PersistentStore.open(at: url, model: target, options: options)
            }
            return Opened(store: store, graphMigration: report)
        } catch {
            throw .store(error)
        }
    }

    private static func migrateThroughGraph(_ url: URL, _ metadata: StoreMetadata, _ directory: ModelDirectory, _ target: ObjectModel,
                                            _ staged: StagedMigrationOptions, _ stages: () throws(StagedMigrationError) -> [MigrationStage],
                                            _ willMigrate: ((Route, StoreMetadata) -> Void)?,
                                            _ progress: ((StagedMigrationProgress) -> Void)?) throws(OpenFailure) -> StagedMigrationReport {
        let migration: DirectoryMigration
        let route: Route
        do {
            migration = DirectoryMigration(directory: directory, targetVersion: target.version, customStages: try stages())
            route = try migration.route(from: metadata)
        } catch {
            throw .graph(DirectoryMigrationError(error: error, storeVersion: metadata.modelVersion, hop: nil, changed: false))
        }
        willMigrate?(route, metadata)
        do {
            return try migration.run(route, storeAt: url, from: metadata, options: staged, progress: progress)
        } catch {
            throw .graph(error)
        }
    }
}
