import Foundation
import GRDB
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

    /// Runs `body` on a read-only connection, mapping SQLite errors to ``StoreError``.
    func read<T>(_ action: String, _ body: (Database) throws -> T) throws -> T {
        do {
            return try store.database.read(body)
        } catch let error as DatabaseError {
            let corrupt = error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB
            let advice = corrupt ? "; run `stratactl inspect --check` and restore the store from a backup" : ""
            throw StoreError(
                corrupt ? .corrupt : .sqlite, path: url.path,
                "\(action) failed: \(error.message ?? "\(error.resultCode)")\(advice)", sqliteCode: error.extendedResultCode.rawValue)
        }
    }

    /// Closes the connections (errors on close are not interesting to a read-only command).
    func close() { try? store.close() }
}
