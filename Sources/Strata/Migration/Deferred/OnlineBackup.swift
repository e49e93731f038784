import Foundation
import GRDB
import GRDBSQLite

/// A consistent copy of a store written in one step with SQLite's online backup API
/// (`sqlite3_backup_*`), through the connection `db` (outside a transaction): before a
/// migration whose synchronous part destroys data, and offline. The copy is written to
/// `destination.partial` and renamed to `destination` once complete (its ledger without the
/// backup task): a `.partial` file is never a usable backup.
///
/// The deferred online backup does not use it: it copies in bounded, durable steps (see
/// ``DeferredFinisher``'s backup step, ``SnapshotPageReader`` and ``BackupSideFile``).
final class OnlineBackup {
    let destination: URL
    let partial: URL
    private let storePath: String
    private var destinationHandle: OpaquePointer?
    private var backup: OpaquePointer?

    /// Starts a copy of the store `db` is connected to.
    ///
    /// - Throws: ``StoreError`` when the destination exists or cannot be created.
    init(source db: Database, storePath: String, destination: URL) throws {
        self.destination = destination
        self.partial = URL(fileURLWithPath: destination.path + ".partial")
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
        guard let object = sqlite3_backup_init(handle, "main", db.sqliteConnection, "main") else {
            let message = String(cString: sqlite3_errmsg(handle))
            close()
            throw StoreError(.sqlite, path: storePath, "cannot start the backup to \(destination.path): \(message)")
        }
        backup = object
    }

    deinit { close() }

    /// Copies every page.
    func copyAll() throws {
        guard let backup else { throw StoreError(.sqlite, path: storePath, "the backup to \(destination.path) was already finished") }
        var rc = sqlite3_backup_step(backup, -1)
        var attempts = 0
        while (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && attempts < 500 {
            attempts += 1
            usleep(10_000)
            rc = sqlite3_backup_step(backup, -1)
        }
        guard rc == SQLITE_DONE else {
            let message = destinationHandle.map { String(cString: sqlite3_errmsg($0)) } ?? "error \(rc)"
            throw DatabaseError(resultCode: ResultCode(rawValue: rc), message: "backup to \(destination.path): \(message)")
        }
    }

    /// Releases the SQLite handles, removes the backup tasks from the copy's own ledger, syncs
    /// it and renames it to `destination`. Returns the size in bytes.
    func complete() throws -> Int {
        close()
        do {
            return try Self.publish(partial, as: destination)
        } catch {
            throw StoreError.from(error, path: storePath, while: "completing the backup \(destination.path)")
        }
    }

    /// Makes the complete copy `partial` the backup `destination`, for the online copy and the
    /// durable side file alike: removes the backup tasks from the copy's own ledger (restored,
    /// it has no backup left to make), checkpoints and syncs it, renames it and syncs the
    /// directory, so that `destination` exists only whole. Returns its size in bytes.
    static func publish(_ partial: URL, as destination: URL) throws -> Int {
        let queue = try DatabaseQueue(path: partial.path)
        try queue.writeWithoutTransaction { db in
            if try db.tableExists(DeferredLedger.table) {
                try db.execute(sql: "DELETE FROM \(DeferredLedger.table) WHERE kind = 'backup'")
            }
            _ = try db.checkpoint(.truncate)
        }
        try queue.close()
        let fd = open(partial.path, O_RDWR)
        if fd >= 0 { fdatasync(fd); Foundation.close(fd) }
        try FileManager.default.moveItem(at: partial, to: destination)
        syncDirectory(destination.deletingLastPathComponent())
        return PersistentStore.fileSize(destination.path)
    }

    /// Abandons the copy and removes the partial file.
    func abort() {
        close()
        Self.removePartial(partial)
    }

    private func close() {
        if let backup { sqlite3_backup_finish(backup) }
        backup = nil
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
        let copy = try OnlineBackup(source: db, storePath: storePath, destination: destination)
        do {
            try copy.copyAll()
            return try copy.complete()
        } catch {
            copy.abort()
            throw error
        }
    }
}
