import Foundation

extension PersistentStore {
    /// Opens (or creates) the store at `url` for `model`, first migrating it through `manager`
    /// when it was written with an earlier version of the chain (Core Data's
    /// `NSPersistentStoreStagedMigrationManagerOptionKey`).
    ///
    /// ```swift
    /// let store = try PersistentStore.open(at: url, model: v3, stagedMigration: manager)
    /// ```
    ///
    /// The chain must end at `model` (same checksum). A store interrupted in the middle of a
    /// previous migration is at a completed version of the chain, and resumes from there.
    ///
    /// - Throws: ``StagedMigrationError`` from the migration (the store is at its last completed
    ///   version), ``StoreError`` from opening.
    public static func open(at url: URL, model: ObjectModel, stagedMigration manager: StagedMigrationManager,
                            options: StoreOptions = StoreOptions(), migrationOptions: StagedMigrationOptions = StagedMigrationOptions(),
                            progress: ((StagedMigrationProgress) -> Void)? = nil) throws -> PersistentStore {
        if FileManager.default.fileExists(atPath: url.path), !options.readOnly {
            let metadata = try PersistentStore.metadata(at: url, busyTimeout: options.busyTimeout)
            if !metadata.isCompatible(with: model) {
                let chain = try manager.validate()
                guard chain.destination.checksum == model.checksum else {
                    throw StagedMigrationError(.gap, "the staged migration ends at '\(chain.destination.version)' (\(chain.destination.checksum)), not at the model the store is opened with, '\(model.version)' (\(model.checksum)); end the last stage at '\(model.version)'", path: url.path)
                }
                try manager.migrateStore(at: url, options: migrationOptions, progress: progress)
            }
        }
        var plain = options
        plain.migration = nil
        return try open(at: url, model: model, options: plain)
    }
}
