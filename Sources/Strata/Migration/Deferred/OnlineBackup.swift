import Foundation
import GRDB
import GRDBSQLite

/// A consistent copy of a store written with SQLite's online backup API (`sqlite3_backup_*`),
/// a few pages per step, so that no step holds the store for longer than a batch.
///
/// The copy is written to `destination.partial` and renamed to `destination` once complete
/// (its ledger without the backup task): a `.partial` file is never a usable backup.
///
/// **What restarts a copy.** SQLite restarts an online backup from its first page when the
/// source is changed by a connection other than the one the backup reads through. The copy
/// reads through the store's **writer connection** (``Mode/writer``): every page that
/// connection writes between two steps is carried into the copy as well, so the store's own
/// writes — the daemon's clients — never restart it, and the copy survives pauses of the
/// finisher (it is kept by the store between runs). A write by another process does restart
/// it. After ``maxRestarts`` restarts the copy starts over in ``Mode/snapshot``: it reads
/// through a dedicated connection that holds one read transaction until the copy is complete.
/// Nothing restarts that (WAL readers see a fixed snapshot and block no writer), but the WAL
/// cannot be checkpointed past the snapshot meanwhile, so a snapshot copy is abandoned (and
/// starts over in writer mode) when the finisher pauses.
final class OnlineBackup: @unchecked Sendable {
    // @unchecked: wraps C handles (sqlite3 *, sqlite3_backup *). Every call is made from the
    // store's writer queue (writer mode) or from the finisher's thread while it holds the
    // store's backup slot (snapshot mode), never concurrently.

    enum Mode: String, Sendable {
        case writer, snapshot
    }

    /// Restarts (other processes writing) before switching to snapshot mode.
    static let maxRestarts = 3

    let destination: URL
    let partial: URL
    let mode: Mode
    private let storePath: String
    private var destinationHandle: OpaquePointer?
    private var snapshotHandle: OpaquePointer?
    private var backup: OpaquePointer?
    private var copied: Int32 = 0
    /// Restarts seen in this copy (writer mode).
    private(set) var restarts = 0
    /// Steps run.
    private(set) var steps = 0

    /// What one step did.
    struct Step {
        var done: Bool
        var copiedPages: Int
        var totalPages: Int
        var restarted: Bool
    }

    /// Starts a copy of the store `db` is connected to (its writer connection in writer mode).
    ///
    /// - Throws: ``StoreError`` when the destination exists or cannot be created.
    init(source db: Database, storePath: String, destination: URL, mode: Mode) throws {
        self.destination = destination
        self.partial = URL(fileURLWithPath: destination.path + ".partial")
        self.mode = mode
        self.storePath = storePath
        if FileManager.default.fileExists(atPath: destination.path) {
            throw StoreError(.sqlite, path: storePath, "the backup destination \(destination.path) already exists; move it away (or remove the backup task by migrating again) and retry")
        }
        Self.removePartial(partial)
        do {
            try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw StoreError(.readOnly, path: storePath, "cannot create the backup directory \(destination.deletingLastPathComponent().path): \(error.localizedDescription)")
        }
        // Created owner-only before SQLite opens it: a backup holds every row of the store.
        try StoreFile.createEmptyFile(atPath: partial.path, mode: StoreOptions.defaultFileMode)
        var handle: OpaquePointer?
        guard sqlite3_open_v2(partial.path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            throw StoreError(.readOnly, path: storePath, "cannot create the backup file \(partial.path): \(message)")
        }
        destinationHandle = handle
        // The copy is synced once, at the end; a crash leaves a .partial file that the next
        // attempt removes.
        sqlite3_exec(handle, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF", nil, nil, nil)
        let source: OpaquePointer?
        switch mode {
        case .writer:
            source = db.sqliteConnection
        case .snapshot:
            var reader: OpaquePointer?
            guard sqlite3_open_v2(storePath, &reader, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let reader else {
                sqlite3_close(reader)
                close()
                throw StoreError(.sqlite, path: storePath, "cannot open a snapshot connection for the backup")
            }
            sqlite3_busy_timeout(reader, 5000)
            snapshotHandle = reader
            // One read transaction for the whole copy: a fixed snapshot.
            guard sqlite3_exec(reader, "BEGIN; SELECT count(*) FROM sqlite_master", nil, nil, nil) == SQLITE_OK else {
                let message = String(cString: sqlite3_errmsg(reader))
                close()
                throw StoreError(.sqlite, path: storePath, "cannot start the backup's read transaction: \(message)")
            }
            source = reader
        }
        guard let object = sqlite3_backup_init(handle, "main", source, "main") else {
            let message = String(cString: sqlite3_errmsg(handle))
            close()
            throw StoreError(.sqlite, path: storePath, "cannot start the backup to \(destination.path): \(message)")
        }
        backup = object
    }

    deinit { close() }

    /// Copies up to `pages` more pages (-1: all of them).
    func step(pages: Int32) throws -> Step {
        guard let backup else { throw StoreError(.sqlite, path: storePath, "the backup to \(destination.path) was already finished") }
        let rc = sqlite3_backup_step(backup, pages < 0 ? -1 : max(1, pages))
        steps += 1
        switch rc {
        case SQLITE_OK, SQLITE_DONE, SQLITE_BUSY, SQLITE_LOCKED:
            break
        default:
            let message = destinationHandle.map { String(cString: sqlite3_errmsg($0)) } ?? "error \(rc)"
            throw DatabaseError(resultCode: ResultCode(rawValue: rc), message: "backup to \(destination.path): \(message)")
        }
        let total = sqlite3_backup_pagecount(backup)
        let remaining = sqlite3_backup_remaining(backup)
        let copiedNow = total - remaining
        // A restart puts the copy back at its first page: the step copied from page 1 instead
        // of going on from where the last one stopped.
        let expected = pages < 0 ? total : min(total, copied + max(1, pages))
        let restarted = rc == SQLITE_OK && copiedNow < expected
        if restarted { restarts += 1 }
        copied = copiedNow
        return Step(done: rc == SQLITE_DONE, copiedPages: Int(copiedNow), totalPages: Int(total), restarted: restarted)
    }

    /// Ends a complete copy (``finishCopy()``, on the writer queue in writer mode), then
    /// ``publish()``es it. Returns the size in bytes.
    @discardableResult
    func complete() throws -> Int {
        finishCopy()
        return try publish()
    }

    /// Releases the SQLite handles of a complete copy (the source connection's side too: call
    /// it on the writer queue in writer mode).
    func finishCopy() {
        close()
    }

    /// Removes the backup tasks from the copy's own ledger, syncs it and renames it to
    /// `destination`. Returns the size in bytes.
    func publish() throws -> Int {
        do {
            let queue = try DatabaseQueue(path: partial.path)
            try queue.writeWithoutTransaction { db in
                if try db.tableExists(DeferredLedger.table) {
                    try db.execute(sql: "DELETE FROM \(DeferredLedger.table) WHERE kind = 'backup'")
                }
                _ = try db.checkpoint(.truncate)
            }
            try queue.close()
            syncPartial()
            try FileManager.default.moveItem(at: partial, to: destination)
            Self.syncDirectory(destination.deletingLastPathComponent())
        } catch {
            throw StoreError.from(error, path: storePath, while: "completing the backup \(destination.path)")
        }
        return (try? FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int) ?? 0
    }

    /// Writes the copy's pages back to the disk so far (spreads the I/O over the copy).
    func syncPartial() {
        let fd = open(partial.path, O_RDWR)
        guard fd >= 0 else { return }
        fdatasync(fd)
        Foundation.close(fd)
    }

    /// Abandons the copy and removes the partial file.
    func abort() {
        if let backup { sqlite3_backup_finish(backup) }
        backup = nil
        close()
        Self.removePartial(partial)
    }

    private func close() {
        if let backup { sqlite3_backup_finish(backup) }
        backup = nil
        if let snapshotHandle {
            sqlite3_exec(snapshotHandle, "COMMIT", nil, nil, nil)
            sqlite3_close(snapshotHandle)
        }
        snapshotHandle = nil
        if let destinationHandle { sqlite3_close(destinationHandle) }
        destinationHandle = nil
    }

    private static func removePartial(_ partial: URL) {
        for suffix in ["", "-journal", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: partial.path + suffix)
        }
    }

    private static func syncDirectory(_ directory: URL) {
        let fd = open(directory.path, O_RDONLY)
        guard fd >= 0 else { return }
        fsync(fd)
        Foundation.close(fd)
    }

    // MARK: - One-step copy

    /// Copies the store `db` reads to `destination` in one step (before a migration that
    /// destroys data, or offline). `db` must be outside a transaction.
    static func copyNow(from db: Database, storePath: String, to destination: URL) throws -> Int {
        let copy = try OnlineBackup(source: db, storePath: storePath, destination: destination, mode: .writer)
        do {
            while try !copy.step(pages: -1).done {}
            return try copy.complete()
        } catch {
            copy.abort()
            throw error
        }
    }
}
