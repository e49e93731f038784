import Foundation
import GRDB

/// A private, read-only snapshot of a Core Data SQLite store: the store file, its `-wal` and
/// `-shm` are copied into a private temporary directory and only the copy is opened, so the
/// original files stay byte-identical and no side file appears next to them. Rows that only
/// live in the `-wal` are part of the copy (SQLite replays the WAL when the copy opens).
///
/// Copy a store whose application is not running: files copied while Core Data writes may
/// not form one consistent snapshot.
final class CoreDataStoreCopy {
    /// The original store.
    let source: URL
    /// The private directory holding the copy.
    let directory: URL
    /// The connection to the copy.
    let database: DatabaseQueue
    /// Tables of the store (upper-cased name → columns as declared), `sqlite_*` excluded.
    let tables: [String: [String]]
    /// `Z_PRIMARYKEY`: entity numbers, names and parents.
    let entities: [CoreDataEntityNumber]
    /// `Z_METADATA`.
    let metadata: CoreDataStoreMetadata

    /// One row of `Z_PRIMARYKEY`.
    struct CoreDataEntityNumber: Sendable, Hashable {
        var number: Int
        var name: String
        var superNumber: Int
    }

    /// Copies and opens the store at `source`.
    ///
    /// - Throws: ``CoreDataImportError`` `storeNotFound`, `notSQLite`, `damagedStore`,
    ///   `notACoreDataStore`, `invalidCoreDataMetadata` or `io`.
    init(source: URL) throws(CoreDataImportError) {
        let path = source.path
        do {
            switch try StoreFile.check(path) {
            case .missing:
                throw CoreDataImportError(.storeNotFound, "the store does not exist; check the path", store: path)
            case .empty:
                throw CoreDataImportError(.notSQLite, "the file is empty, not an SQLite database; check the path", store: path, offset: 0)
            case .database:
                break
            }
        } catch let error as StoreError {
            switch error.code {
            case .notSQLite: throw CoreDataImportError(.notSQLite, error.reason, store: path, offset: error.offset)
            case .truncated, .corrupt: throw CoreDataImportError(.damagedStore, error.reason, store: path, offset: error.offset)
            default: throw CoreDataImportError(.io, error.reason, store: path)
            }
        } catch let error as CoreDataImportError {
            throw error
        } catch {
            throw CoreDataImportError(.io, "cannot read the store: \(error)", store: path)
        }
        self.source = source
        // The private copy.
        let directory = FileManager.default.temporaryDirectory.appending(path: "strata-coredata-\(UUID().uuidString)", directoryHint: .isDirectory)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let copy = directory.appending(path: "store.sqlite")
            try FileManager.default.copyItem(at: source, to: copy)
            for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
                try FileManager.default.copyItem(atPath: path + suffix, toPath: copy.path + suffix)
            }
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw CoreDataImportError(.io, "cannot copy the store into a private directory (\(directory.path)): \(error.localizedDescription); free space in the temporary directory or set TMPDIR", store: path)
        }
        self.directory = directory
        do {
            var configuration = Configuration()
            configuration.label = "strata.coredata-copy"
            configuration.foreignKeysEnabled = false
            database = try DatabaseQueue(path: directory.appending(path: "store.sqlite").path, configuration: configuration)
            let schema = try database.read { db throws -> ([String: [String]], [CoreDataEntityNumber], CoreDataStoreMetadata) in
                try Self.readSchema(db, path: path)
            }
            tables = schema.0
            entities = schema.1
            metadata = schema.2
        } catch {
            try? FileManager.default.removeItem(at: directory)
            if let error = error as? CoreDataImportError { throw error }
            let storeError = StoreError.from(error, path: path, while: "reading the Core Data store")
            switch storeError.code {
            case .notSQLite: throw CoreDataImportError(.notSQLite, storeError.reason, store: path)
            case .corrupt: throw CoreDataImportError(.damagedStore, storeError.reason, store: path)
            default: throw CoreDataImportError(.io, storeError.reason, store: path)
            }
        }
    }

    /// Closes the copy and removes the private directory.
    func discard() {
        try? database.close()
        try? FileManager.default.removeItem(at: directory)
    }

    deinit {
        try? database.close()
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: - Schema

    private static func readSchema(_ db: Database, path: String) throws -> ([String: [String]], [CoreDataEntityNumber], CoreDataStoreMetadata) {
        var tables: [String: [String]] = [:]
        for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'") {
            tables[name.uppercased()] = try db.columns(in: name).map(\.name)
        }
        let missing = ["Z_PRIMARYKEY", "Z_METADATA"].filter { tables[$0] == nil }
        guard missing.isEmpty else {
            let found = tables.isEmpty ? "it has no tables" : "it has tables \(tables.keys.sorted().prefix(8).joined(separator: ", "))\(tables.count > 8 ? ", …" : "")"
            throw CoreDataImportError(.notACoreDataStore, "this SQLite database is not a Core Data store: it has no \(missing.joined(separator: " or ")) table (\(found)); point at the .sqlite file of a Core Data SQLite store", store: path)
        }
        let primaryKeyColumns = Set((tables["Z_PRIMARYKEY"] ?? []).map { $0.uppercased() })
        guard primaryKeyColumns.isSuperset(of: ["Z_ENT", "Z_NAME"]) else {
            throw CoreDataImportError(.notACoreDataStore, "Z_PRIMARYKEY has no Z_ENT and Z_NAME columns (it has \((tables["Z_PRIMARYKEY"] ?? []).joined(separator: ", "))); this is not a Core Data store", store: path)
        }
        let superColumn = primaryKeyColumns.contains("Z_SUPER") ? "Z_SUPER" : "0"
        let entities = try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME, \(superColumn) FROM Z_PRIMARYKEY ORDER BY Z_ENT").compactMap { row -> CoreDataEntityNumber? in
            guard let number = row[0] as Int?, let name = row[1] as String? else { return nil }
            return CoreDataEntityNumber(number: number, name: name, superNumber: (row[2] as Int?) ?? 0)
        }
        let metadata = try CoreDataStoreMetadata.read(from: db, path: path)
        return (tables, entities, metadata)
    }

    /// The declared name of a table (`ZAIRCRAFT`), given its name in any case.
    func columns(ofTable name: String) -> [String]? { tables[name.uppercased()] }
}
