import Foundation
import GRDB

/// Opening a store: create it, or check it and migrate it to the model it is opened with.
///
/// Like every extension of ``PersistentStore`` (Store/PersistentStore+*.swift), opening is
/// the library's façade over the layers below it: it runs the migrator (Migration/Open/) and
/// reads the deferred ledger (Migration/Deferred/). Store's core files (layout, files,
/// connections, metadata tables) name no Migration type (LayeringTests).
extension PersistentStore {
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

    /// Opens the existing store at `url` whose metadata the caller has just read with
    /// ``metadata(at:busyTimeout:)``: the same as ``open(at:model:options:)`` (migrating with
    /// ``StoreOptions/migration``), without reading the metadata a second time (stratad reads it
    /// once per open: to refuse a store of another model directory, then to open it).
    ///
    /// ```swift
    /// let metadata = try PersistentStore.metadata(at: url)
    /// let store = try PersistentStore.open(at: url, model: model, options: options, metadata: metadata)
    /// ```
    ///
    /// - Throws: ``StoreError`` naming the path and the problem; the file is unchanged.
    public static func open(at url: URL, model: ObjectModel, options: StoreOptions = StoreOptions(), metadata: StoreMetadata) throws(StoreError) -> PersistentStore {
        do {
            try model.validated()
        } catch {
            throw StoreError(.invalidModel, path: url.path, "the model is not valid: \(error); fix the model before opening a store with it")
        }
        guard case .database = try StoreFile.check(url.path) else {
            throw StoreError(.notFound, path: url.path, "the store does not exist; create it (createIfMissing) or check the path")
        }
        return try openExisting(at: url, model: model, options: options, metadata: metadata)
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
            return try queue.read { db in try StoreMetadata.read(from: db, path: path) }
        } catch {
            throw StoreError.from(error, path: path, while: "reading store metadata")
        }
    }

    static func create(at url: URL, model: ObjectModel, options: StoreOptions) throws(StoreError) -> PersistentStore {
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
            // The store's own pool: its connections as the options say (a replicated store's
            // WAL is checkpointed by the replicator from its first write).
            let pool = try DatabasePool(path: path, configuration: connectionConfiguration(readOnly: false, busyTimeout: options.busyTimeout,
                                                                                           checkpointing: options.walCheckpointing))
            let layout = StorageLayout(model: model)
            try pool.write { db in
                for sql in MetadataSchema.creationSQL + [DeferredLedger.creationSQL] + HistorySchema.creationSQL + layout.creationSQL { try db.execute(sql: sql) }
                try MetadataSchema.writeModel(model, in: db)
                let now = Date()
                try db.execute(sql: "INSERT INTO \(MetadataSchema.metadataTable)(key, value) VALUES ('storeIdentifier', ?), ('createdAt', ?)",
                               arguments: [identifier, String(now.timeIntervalSince1970)])
                try MetadataSchema.appendHistory(.init(at: now, kind: "created", fromVersion: nil, fromChecksum: nil,
                                                       toVersion: model.version, toChecksum: model.checksum,
                                                       detail: "created with \(model.entities.count) entities"), in: db)
            }
            let store = PersistentStore(url: url, model: model, options: options, identifier: identifier, database: pool)
            try HistoryRecorder.start(store)
            store.logger.notice("created store", metadata: ["strata.version": "\(model.version)", "strata.checksum": "\(model.checksum)"])
            return store
        } catch {
            throw StoreError.from(error, path: path, while: "creating the store")
        }
    }

    static func openExisting(at url: URL, model: ObjectModel, options: StoreOptions, metadata known: StoreMetadata? = nil) throws(StoreError) -> PersistentStore {
        let path = url.path
        // Everything that can refuse the file runs on a read-only connection first (unless the
        // caller has just read the metadata).
        let metadata: StoreMetadata
        if let known { metadata = known } else { metadata = try Self.metadata(at: url, busyTimeout: options.busyTimeout) }
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
            let pool = try DatabasePool(path: sqlitePath(path, readOnly: options.readOnly),
                                        configuration: connectionConfiguration(readOnly: options.readOnly, busyTimeout: options.busyTimeout,
                                                                               checkpointing: options.walCheckpointing))
            let store = PersistentStore(url: url, model: model, options: options, identifier: current.storeIdentifier, database: pool)
            if !options.readOnly { try HistoryRecorder.start(store) }
            store.logger.debug("opened store", metadata: ["strata.version": "\(model.version)"])
            return store
        } catch {
            throw StoreError.from(error, path: path, while: "opening the store")
        }
    }

    // MARK: - Metadata

    /// The store's current metadata, read from the store.
    public func currentMetadata() throws(StoreError) -> StoreMetadata {
        do {
            return try database.read { db in try StoreMetadata.read(from: db, path: path) }
        } catch {
            throw StoreError.from(error, path: path, while: "reading store metadata")
        }
    }

    /// Whether deferred cleanup is pending (the ledger is not empty).
    public func hasPendingDeferredWork() throws(StoreError) -> Bool { !(try currentMetadata().deferred.isEmpty) }
}
