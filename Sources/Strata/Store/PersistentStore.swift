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
    /// The options the store was opened with.
    public let options: StoreOptions
    /// The store's identifier (a UUID kept in its metadata).
    public let identifier: String
    /// The GRDB connection pool: one writer, concurrent readers (WAL).
    ///
    /// Package access only: applications go through contexts, fetch requests and the
    /// migration API, which keep the metadata, the ledger and the optimistic-locking versions
    /// right; the package's own tools (stratactl, strata-bench) and tests read it directly.
    package let database: DatabasePool
    /// What the deferred finisher keeps open between two runs on this store (a paused online
    /// backup, the sort buffers of paused index builds), by key; released when the store
    /// closes. Migration/Deferred/ owns them; `PersistentStore+FinisherResources.swift` types them.
    let finisherResources = Mutex<[String: any FinisherResource]>([:])
    /// Where the deferred work's WAL checkpoints run, off the writer (``WALCheckpointer``):
    /// serial; a run's last checkpoint may still be on it after the run returned.
    let checkpointQueue = DispatchQueue(label: "io.strata.checkpoint", qos: .utility)
    /// The change history's in-memory side: the writer's baseline and the observers (History/).
    let historyState = HistoryState()
    /// Compiled fetches by shape, shared by the store's contexts (``FetchQueryCache``).
    let queryCache = FetchQueryCache()
    /// Run at the start of every transaction of the store's contexts (``TransactionGate``).
    package let transactionGate = TransactionGate()
    /// Entity descriptions and row plans, lent to one context at a time (``ContextCaches``).
    let contextCaches = ContextCachePool()
    /// The read-only connections contexts and history reads go through (``ReaderLanes``).
    let readers: ReaderLanes

    /// The store file's path.
    let path: String
    var logger: Logger {
        var l = options.logger
        l[metadataKey: "strata.store"] = "\(url.path)"
        return l
    }

    /// A store on an open pool (``open(at:model:options:)`` opens, creates and migrates).
    init(url: URL, model: ObjectModel, options: StoreOptions, identifier: String, database: DatabasePool) {
        self.url = url
        self.path = url.path
        self.model = model
        self.layout = StorageLayout(model: model)
        self.options = options
        self.identifier = identifier
        self.database = database
        self.readers = ReaderLanes(path: database.path, configuration: database.configuration,
                                   maximum: database.configuration.maximumReaderCount)
        StoreFileDescriptors.retain(path)
    }

    /// The name SQLite opens. A read-only open of a WAL store in a directory that cannot be
    /// written (a read-only file system, a read-only mount) and without `-wal`/`-shm` files
    /// uses the `immutable` URI parameter: SQLite could not create the shared-memory index,
    /// and nobody can change the file there anyway.
    static func sqlitePath(_ path: String, readOnly: Bool) -> String {
        guard readOnly else { return path }
        let directory = (path as NSString).deletingLastPathComponent
        let dir = directory.isEmpty ? "." : directory
        guard fileSize(path + "-wal") == 0, isOnReadOnlyFileSystem(dir) || access(dir, W_OK) != 0 else { return path }
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

    static func isWritable(_ path: String) -> Bool {
        let directory = (path as NSString).deletingLastPathComponent
        let dir = directory.isEmpty ? "." : directory
        // access(2) says yes to root even on a read-only mount: check the mount too.
        return access(path, W_OK) == 0 && access(dir, W_OK) == 0 && !isOnReadOnlyFileSystem(dir)
    }

    /// The size, in bytes, a WAL file is cut back to once checkpointed (`journal_size_limit`).
    static let walSizeLimit = 64 << 20

    /// The configuration every Strata connection uses.
    static func connectionConfiguration(readOnly: Bool, busyTimeout: TimeInterval, checkpointing: WALCheckpointing = .strata) -> Configuration {
        var configuration = Configuration()
        configuration.readonly = readOnly
        configuration.foreignKeysEnabled = true
        // SQLite takes whole milliseconds in an Int32: keep any TimeInterval in range (NaN is 0).
        configuration.busyMode = .timeout(busyTimeout > 0 ? min(busyTimeout, StoreOptions.maximumBusyTimeout) : 0)
        configuration.label = "strata"
        configuration.prepareDatabase { db in
            StoreConnection.prepare(db)
            // A replicator checkpoints (WALCheckpointing.external): no automatic checkpoint.
            if checkpointing == .external, !readOnly { try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
            // SQLite reuses a WAL file at its largest size: a deferred rewrite's idle batches
            // would leave gigabytes behind (1.9 GB of WAL after finishing at 4M rows). Once a
            // checkpoint has copied it all, the next write truncates it to this size. Not for
            // replicated stores: their WAL is the replicator's to manage.
            if checkpointing == .strata, !readOnly { try db.execute(sql: "PRAGMA journal_size_limit = \(Self.walSizeLimit)") }
        }
        return configuration
    }

    // MARK: - Metadata and lifecycle

    /// A cheap row count per table, without a full scan: the primary-key span, as the deferred
    /// ledger estimates the rows of its tasks. Tables the store does not have are left out.
    ///
    /// ```swift
    /// let rows = try store.estimatedRowCounts(ofTables: ["Aircraft"])   // ["Aircraft": 200000]
    /// ```
    public func estimatedRowCounts(ofTables tables: Set<String>) throws(StoreError) -> [String: Int64] {
        do {
            return try database.read { db in
                var result: [String: Int64] = [:]
                for table in tables where try db.tableExists(table) {
                    result[table] = try TableStatistics.estimatedRows(table, db)
                }
                return result
            }
        } catch {
            throw StoreError.from(error, path: path, while: "estimating row counts")
        }
    }

    /// Checkpoints the WAL into the main file (`TRUNCATE` mode by default). A store whose
    /// checkpoints belong to a replicator (``WALCheckpointing/external``) runs a `PASSIVE`
    /// checkpoint whatever `kind` asks: it stops at the replicator's read mark.
    public func checkpoint(_ kind: Database.CheckpointMode = .truncate) throws(StoreError) {
        var kind = kind
        if options.walCheckpointing == .external, kind != .passive {
            logger.notice("the store's checkpoints belong to its replicator: running a PASSIVE checkpoint instead", metadata: ["strata.requested": "\(kind)"])
            kind = .passive
        }
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

    /// Runs `body` in a read transaction on one of the store's read-only lanes, or through the
    /// pool's readers when every lane is taken (``ReaderLanes``): the reads clients wait for —
    /// an ``ObjectContext``'s fetches and counts, the change history.
    func readThroughLanes<T>(_ body: (Database) throws -> T) throws -> T {
        let database = self.database
        return try readers.read(body, pool: { try database.read($0) })
    }

    /// Closes every connection. The store must not be used afterwards.
    public func close() throws(StoreError) {
        // A paused online backup reads through the writer connection: abandon it first (the
        // ledger keeps the task; the next run starts the copy over); index sort buffers close.
        for resource in finisherResources.withLock({ resources in defer { resources = [:] }; return Array(resources.values) }) {
            resource.release(on: database)
        }
        // The last run's checkpoint, if it still runs (a run never waits for it).
        checkpointQueue.sync {}
        historyState.finishAll()
        // The readers close first (GRDB's close() closes the writer first): the writer, closing
        // last, checkpoints the WAL into the store file and removes it, as SQLite does for the
        // last connection, so that a closed store is whole in its one file. Not for a store
        // whose checkpoints are a replicator's (WALCheckpointing.external): a replicator that
        // is not running at that moment would find its WAL gone and start over from a snapshot.
        // The contexts' read-only lanes (``ReaderLanes``) likewise: before the writer, or, for a
        // replicated store, after it (a reader still open then keeps the WAL in place).
        if options.walCheckpointing == .strata {
            readers.close()
            database.releaseMemory()
        }
        let closed = Result { try database.close() }
        readers.close()   // a no-op when they closed above
        if case .failure(let error) = closed { throw StoreError.from(error, path: path, while: "closing") }
        // Only once the connections are closed (closing a descriptor of a file releases the
        // process's SQLite locks on it).
        StoreFileDescriptors.release(path)
    }
}

/// Per-connection setup shared by every Strata connection.
enum StoreConnection {
    static func prepare(_ db: Database) {
        SQLFunctions.register(in: db)
        CallDeadline.install(on: db)
    }
}

/// Something the deferred finisher keeps open between two runs on a store (a paused online
/// backup, an index build's sort buffer): released when the store closes.
protocol FinisherResource: Sendable {
    /// Releases the resource (before the store's connections close).
    func release(on database: DatabasePool)
}
