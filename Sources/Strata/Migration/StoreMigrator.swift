import Foundation

/// Runs the migration of a store file at open. (Lightweight inference and deferral land with
/// the migration work; until then a different model version is refused.)
enum StoreMigrator {
    static func migrate(at url: URL, from metadata: StoreMetadata, to model: ObjectModel, options: MigrationOptions,
                        storeOptions: StoreOptions) throws(StoreError) -> StoreMetadata {
        throw StoreError(.incompatibleModel, path: url.path,
                         "migration from '\(metadata.modelVersion)' to '\(model.version)' is not supported yet",
                         storeVersion: metadata.modelVersion, storeChecksum: metadata.modelChecksum,
                         modelVersion: model.version, modelChecksum: model.checksum, differences: metadata.differences(from: model))
    }
}
