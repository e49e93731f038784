import Foundation
import Strata

/// A store file opened read-only with the model embedded in it, for the offline commands
/// (`inspect`, `fetch`, `count`). Nothing is ever written to the store.
struct OfflineStore {
    let url: URL
    let metadata: StoreMetadata
    let store: PersistentStore

    /// Reads the metadata (which refuses a missing, foreign, truncated or non-Strata file with a
    /// ``StoreError`` before SQLite opens it), then opens the store read-only.
    init(path: String) throws {
        url = URL(filePath: path)
        metadata = try PersistentStore.metadata(at: url)
        store = try PersistentStore.open(
            at: url, model: metadata.model, options: StoreOptions(createIfMissing: false, readOnly: true))
    }

    var model: ObjectModel { store.model }
    var layout: StorageLayout { store.layout }

    /// Closes the connections (errors on close are not interesting to a read-only command).
    func close() { try? store.close() }
}
