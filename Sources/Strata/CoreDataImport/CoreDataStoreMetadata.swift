import Foundation
import GRDB

/// What a Core Data store records about itself in `Z_METADATA` (`Z_VERSION`, `Z_UUID` and a
/// binary property list in `Z_PLIST`): the store's UUID (`NSStoreUUID`), the model's version
/// identifiers (`NSStoreModelVersionIdentifiers`) and its entity version hashes
/// (`NSStoreModelVersionHashes`, which only Core Data can recompute: Strata identifies the
/// version by the store's layout instead).
public struct CoreDataStoreMetadata: Sendable, Hashable {
    /// `NSStoreUUID` (or `Z_UUID`).
    public var storeUUID: String?
    /// `NSStoreModelVersionIdentifiers`: the identifiers of the model the store was written with.
    public var versionIdentifiers: [String]
    /// The entity names of `NSStoreModelVersionHashes`.
    public var hashedEntities: [String]
    /// `NSStoreType` (`SQLite`).
    public var storeType: String?

    /// Reads `Z_METADATA`; the property list must be readable.
    static func read(from db: Database, path: String) throws -> CoreDataStoreMetadata {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM Z_METADATA ORDER BY rowid LIMIT 1") else {
            throw CoreDataImportError(.invalidCoreDataMetadata, "Z_METADATA is empty: the store has no metadata; it was not written by Core Data or was damaged — restore it from a backup, or export its data from the app", store: path)
        }
        let uuidColumn = row.columnNames.first { $0.uppercased() == "Z_UUID" }
        let plistColumn = row.columnNames.first { $0.uppercased() == "Z_PLIST" }
        guard let plistColumn, let data = row[plistColumn] as Data?, !data.isEmpty else {
            throw CoreDataImportError(.invalidCoreDataMetadata, "Z_METADATA has no Z_PLIST property list; the store's metadata is missing — restore it from a backup", store: path)
        }
        let plist: Any
        do {
            plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            let header = String(decoding: data.prefix(8), as: UTF8.self)
            throw CoreDataImportError(.invalidCoreDataMetadata, "Z_METADATA.Z_PLIST (\(data.count) bytes, starting \"\(header.filter { $0.isASCII && !$0.isNewline })\") is not a readable property list (\(error.localizedDescription)); the store's metadata is damaged — restore it from a backup", store: path)
        }
        guard let dictionary = plist as? [String: Any] else {
            throw CoreDataImportError(.invalidCoreDataMetadata, "Z_METADATA.Z_PLIST is a property list but not a dictionary; the store's metadata is damaged — restore it from a backup", store: path)
        }
        let identifiers: [String]
        switch dictionary["NSStoreModelVersionIdentifiers"] {
        case let list as [Any]: identifiers = list.compactMap { $0 as? String }
        case let set as NSSet: identifiers = set.allObjects.compactMap { $0 as? String }.sorted()
        default: identifiers = []
        }
        let hashes = (dictionary["NSStoreModelVersionHashes"] as? [String: Any]).map { Array($0.keys).sorted() } ?? []
        let uuid = dictionary["NSStoreUUID"] as? String ?? uuidColumn.flatMap { row[$0] as String? }
        return CoreDataStoreMetadata(storeUUID: uuid, versionIdentifiers: identifiers, hashedEntities: hashes,
                                     storeType: dictionary["NSStoreType"] as? String)
    }
}
