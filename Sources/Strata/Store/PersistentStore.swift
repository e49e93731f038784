import Foundation
import GRDB
import Logging
import Synchronization

/// An open Strata store: an SQLite file in WAL mode laid out for one model version.
///
/// ```swift
/// let model = try ModelFile.load(contentsOf: URL(fileURLWithPath: "config/models/Aircraft/Aircraft 1.yaml"))
/// let store = try PersistentStore.open(at: URL(fileURLWithPath: "var/aircraft.sqlite"), model: model)
/// let context = ObjectContext(store: store)
/// ```
///
/// Opening checks the file before SQLite writes anything: a missing file is created (unless
/// ``StoreOptions/createIfMissing`` is off), a foreign, truncated or corrupt file, an SQLite
/// database that is not a Strata store, or a store written with another model version is
/// refused with a ``StoreError`` and left untouched.
public final class PersistentStore: Sendable {
    /// The store file.
    public let url: URL
    /// The model the store is open with (after any migration, the latest).
    public let model: ObjectModel
    /// How the model maps to tables and columns.
    public let layout: StorageLayout
    public let options: StoreOptions
    /// The store's identifier (a UUID kept in its metadata).
    public let identifier: String
    /// The GRDB connection pool: one writer, concurrent readers (WAL).
    public let database: DatabasePool
    /// An online backup paused between two runs of the deferred work (see ``OnlineBackup``).
    let backupInProgress = Mutex<OnlineBackup?>(nil)
    /// Sort buffers of index builds paused between two runs, by container table.
    let indexBuffers = Mutex<[String: IndexSortBuffer]>([:])
    /// Where the deferred work's WAL checkpoints run, off the writer (``WALCheckpointer``):
    /// serial; a run's last checkpoint may still be on it after the run returned.
    let checkpointQueue = DispatchQueue(label: "io.strata.checkpoint", qos: .utility)

    var path: String { url.path }
    var logger: Logger {
        var l = options.logger
        l[metadataKey: "strata.store"] = "\(url.path)"
        return l
    }

    private init(url: URL, model: ObjectModel, options: StoreOptions, identifier: String, database: DatabasePool) {
        self.url = url
        self.model = model
        self.layout = StorageLayout(model: model)
        self.options = options
        self.identifier = identifier
        self.database = database
    }

    // MARK: - Opening

    /// Opens (or creates) the store at `url` for `model`.
    ///
    /// - Throws: ``StoreError`` naming the path and the problem; the file is unchanged.
    public static func open(at url: URL, model: ObjectModel, options: StoreOptions = StoreOptions()) throws(StoreError) -> PersistentStore {
        let path = url.path
        do {
            try model.validated()
        } catch {
            throw StoreError(.invalidModel, path: path, "the model is not valid: \(error); fix the model before opening a store with it")
        }
        switch try StoreFile.check(path) {
        case .missing, .empty:
            guard options.createIfMissing, !options.readOnly else {
                throw StoreError(.notFound, path: path, "the store does not exist; create it (createIfMissing) or check the path")
            }
            return try create(at: url, model: model, options: options)
        case .database:
            return try openExisting(at: url, model: model, options: options)
        }
    }

    /// Reads a store's metadata without opening it for writing (Core Data's `metadataForPersistentStore`).
    public static func metadata(at url: URL, busyTimeout: TimeInterval = 5) throws(StoreError) -> StoreMetadata {
        let path = url.path
        switch try StoreFile.check(path) {
        case .missing, .empty:
            throw StoreError(.notFound, path: path, "the store does not exist; check the path")
        case .database:
            break
        }
        do {
            let queue = try DatabaseQueue(path: sqlitePath(path, readOnly: true), configuration: connectionConfiguration(readOnly: true, busyTimeout: busyTimeout))
            defer { try? queue.close() }
            return try queue.read { db in try MetadataSchema.read(from: db, path: path) }
        } catch {
            throw StoreError.from(error, path: path, while: "reading store metadata")
        }
    }

    private static func create(at url: URL, model: ObjectModel, options: StoreOptions) throws(StoreError) -> PersistentStore {
        let path = url.path
        let directory = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError(.readOnly, path: path, "cannot create the directory \(directory.path): \(error.localizedDescription); create it or choose another path")
        }
        let identifier = UUID().uuidString
        try StoreFile.createEmptyFile(atPath: path, mode: options.fileMode)
        do {
            // auto_vacuum must be chosen before the first table exists, and before WAL.
            let setup = try DatabaseQueue(path: path, configuration: connectionConfiguration(readOnly: false, busyTimeout: options.busyTimeout))
            try setup.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
                try db.execute(sql: "PRAGMA journal_mode = WAL")
            }
            try setup.close()
            let pool = try DatabasePool(path: path, configuration: connectionConfiguration(readOnly: false, busyTimeout: options.busyTimeout))
            let layout = StorageLayout(model: model)
            try pool.write { db in
                for sql in MetadataSchema.creationSQL + layout.creationSQL { try db.execute(sql: sql) }
                try MetadataSchema.writeModel(model, in: db)
                let now = Date()
                try db.execute(sql: "INSERT INTO \(MetadataSchema.metadataTable)(key, value) VALUES ('storeIdentifier', ?), ('createdAt', ?)",
                               arguments: [identifier, String(now.timeIntervalSince1970)])
                try MetadataSchema.appendHistory(.init(at: now, kind: "created", fromVersion: nil, fromChecksum: nil,
                                                       toVersion: model.version, toChecksum: model.checksum,
                                                       detail: "created with \(model.entities.count) entities"), in: db)
            }
            let store = PersistentStore(url: url, model: model, options: options, identifier: identifier, database: pool)
            store.logger.notice("created store", metadata: ["strata.version": "\(model.version)", "strata.checksum": "\(model.checksum)"])
            return store
        } catch {
            throw StoreError.from(error, path: path, while: "creating the store")
        }
    }

    private static func openExisting(at url: URL, model: ObjectModel, options: StoreOptions) throws(StoreError) -> PersistentStore {
        let path = url.path
        // Everything that can refuse the file runs on a read-only connection first.
        let metadata = try Self.metadata(at: url, busyTimeout: options.busyTimeout)
        var current = metadata
        if !metadata.isCompatible(with: model) {
            guard let migration = options.migration, migration.migrateAutomatically, !options.readOnly else {
                throw StoreError(
                    .incompatibleModel, path: path,
                    "the store was written with model '\(metadata.modelVersion)' (\(metadata.modelChecksum)), not '\(model.version)' (\(model.checksum)); open it with migration options, run `stratactl migrate`, or use the matching model",
                    storeVersion: metadata.modelVersion, storeChecksum: metadata.modelChecksum,
                    modelVersion: model.version, modelChecksum: model.checksum, differences: metadata.differences(from: model))
            }
            current = try StoreMigrator.migrate(at: url, from: metadata, to: model, options: migration, storeOptions: options)
        }
        if !options.readOnly && !isWritable(path) {
            throw StoreError(.readOnly, path: path, "the store or its directory is not writable; fix the permissions or open it with readOnly")
        }
        do {
            let pool = try DatabasePool(path: sqlitePath(path, readOnly: options.readOnly), configuration: connectionConfiguration(readOnly: options.readOnly, busyTimeout: options.busyTimeout))
            let store = PersistentStore(url: url, model: model, options: options, identifier: current.storeIdentifier, database: pool)
            store.logger.debug("opened store", metadata: ["strata.version": "\(model.version)"])
            return store
        } catch {
            throw StoreError.from(error, path: path, while: "opening the store")
        }
    }

    /// The name SQLite opens. A read-only open of a WAL store in a directory that cannot be
    /// written (a read-only file system, a read-only mount) and without `-wal`/`-shm` files
    /// uses the `immutable` URI parameter: SQLite could not create the shared-memory index,
    /// and nobody can change the file there anyway.
    static func sqlitePath(_ path: String, readOnly: Bool) -> String {
        guard readOnly else { return path }
        let directory = (path as NSString).deletingLastPathComponent
        let dir = directory.isEmpty ? "." : directory
        let walSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber)?.intValue ?? 0
        guard walSize == 0, isOnReadOnlyFileSystem(dir) || access(dir, W_OK) != 0 else { return path }
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        let encoded = path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
        return "file:\(encoded)?immutable=1"
    }

    private static func isOnReadOnlyFileSystem(_ directory: String) -> Bool {
        var info = statvfs()
        guard statvfs(directory, &info) == 0 else { return false }
        return info.f_flag & UInt(ST_RDONLY) != 0
    }

    private static func isWritable(_ path: String) -> Bool {
        let directory = (path as NSString).deletingLastPathComponent
        let dir = directory.isEmpty ? "." : directory
        // access(2) says yes to root even on a read-only mount: check the mount too.
        return access(path, W_OK) == 0 && access(dir, W_OK) == 0 && !isOnReadOnlyFileSystem(dir)
    }

    /// The configuration every Strata connection uses.
    static func connectionConfiguration(readOnly: Bool, busyTimeout: TimeInterval) -> Configuration {
        var configuration = Configuration()
        configuration.readonly = readOnly
        configuration.foreignKeysEnabled = true
        // SQLite takes whole milliseconds in an Int32: keep any TimeInterval in range (NaN is 0).
        configuration.busyMode = .timeout(busyTimeout > 0 ? min(busyTimeout, StoreOptions.maximumBusyTimeout) : 0)
        configuration.label = "strata"
        configuration.prepareDatabase { db in
            StoreConnection.prepare(db)
        }
        return configuration
    }

    // MARK: - Metadata and lifecycle

    /// The store's current metadata, read from the store.
    public func currentMetadata() throws(StoreError) -> StoreMetadata {
        do {
            return try database.read { db in try MetadataSchema.read(from: db, path: path) }
        } catch {
            throw StoreError.from(error, path: path, while: "reading store metadata")
        }
    }

    /// Whether deferred cleanup is pending (the ledger is not empty).
    public func hasPendingDeferredWork() throws(StoreError) -> Bool { !(try currentMetadata().deferred.isEmpty) }

    /// Checkpoints the WAL into the main file (`TRUNCATE` mode by default).
    public func checkpoint(_ kind: Database.CheckpointMode = .truncate) throws(StoreError) {
        do {
            try database.writeWithoutTransaction { db in _ = try db.checkpoint(kind) }
        } catch {
            throw StoreError.from(error, path: path, while: "checkpointing")
        }
    }

    /// Writes a consistent copy of the store to `destination` (`VACUUM INTO`), which must not exist.
    public func backup(to destination: URL) throws(StoreError) {
        if FileManager.default.fileExists(atPath: destination.path) {
            throw StoreError(.sqlite, path: path, "backup destination \(destination.path) already exists; choose a new path")
        }
        try StoreFile.createEmptyFile(atPath: destination.path, mode: options.fileMode)
        do {
            // A reader connection outside any transaction: writers keep going during the copy.
            try database.unsafeRead { db in try db.execute(sql: "VACUUM INTO ?", arguments: [destination.path]) }
        } catch {
            try? FileManager.default.removeItem(atPath: destination.path)
            throw StoreError.from(error, path: path, while: "backing up to \(destination.path)")
        }
    }

    /// Closes every connection. The store must not be used afterwards.
    public func close() throws(StoreError) {
        // A paused online backup reads through the writer connection: abandon it first (the
        // ledger keeps the task; the next run starts the copy over).
        if let backup = backupInProgress.withLock({ slot -> OnlineBackup? in defer { slot = nil }; return slot }) {
            database.writeWithoutTransaction { _ in backup.abort() }
        }
        for buffer in indexBuffers.withLock({ buffers in defer { buffers = [:] }; return Array(buffers.values) }) { buffer.close() }
        // The last run's checkpoint, if it still runs (a run never waits for it).
        checkpointQueue.sync {}
        do { try database.close() } catch { throw StoreError.from(error, path: path, while: "closing") }
    }
}

/// Per-connection setup shared by every Strata connection.
enum StoreConnection {
    static func prepare(_ db: Database) {
        SQLFunctions.register(in: db)
    }
}
