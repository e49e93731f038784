import Foundation
import GRDB

/// A store file could not be opened, read or written.
///
/// Every error names the store path and says what to do. Opening never modifies a file it
/// refuses: the checks that can fail run on a read-only connection first.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, for programs: the message says it for people.
    public enum Code: String, Sendable, Hashable {
        /// The file is not an SQLite database (wrong header).
        case notSQLite
        /// The path (or its `-wal`, `-shm` or `-journal` companion) is a FIFO, socket or
        /// device: refused before anything opens it, since opening it could block forever.
        case notRegularFile
        /// The file is shorter than its header says: it was cut off.
        case truncated
        /// SQLite reports corruption.
        case corrupt
        /// An SQLite database without Strata metadata.
        case notAStrataStore
        /// The store was written with a different model version and migration was not requested.
        case incompatibleModel
        /// A migration was requested but cannot be inferred or failed; nothing was changed.
        case migrationRefused
        /// Another connection holds a lock for longer than the busy timeout.
        case locked
        /// The file or its directory cannot be written.
        case readOnly
        /// The file does not exist and creation was not requested.
        case notFound
        /// The store's metadata is damaged or from a newer Strata.
        case invalidMetadata
        /// The disk (or `max_page_count`) is full.
        case full
        /// The model given to open the store is not valid (see ``ModelError``).
        case invalidModel
        /// A table rewrite's copy does not hold exactly the table's rows: the swap was refused,
        /// the table is unchanged and the task starts over on the next run.
        case copyMismatch
        /// A call ran longer than its ``CallDeadline`` and was stopped (nothing written).
        case callTimeout
        /// Another SQLite or I/O failure.
        case sqlite
    }

    /// What went wrong.
    public var code: Code
    /// The store file's path.
    public var path: String
    /// What went wrong and what to do.
    public var reason: String
    /// Byte offset in the file, for header problems.
    public var offset: Int?
    /// The model version and checksum recorded in the store, when known.
    public var storeVersion: String?
    /// The checksum of the model the store was written with, when it matters.
    public var storeChecksum: String?
    /// The model version and checksum the caller asked for, when relevant.
    public var modelVersion: String?
    /// The checksum of the model given, when it matters.
    public var modelChecksum: String?
    /// Entity-level differences between store and model (for ``Code/incompatibleModel``).
    public var differences: [String]
    /// The SQLite result code, when the error came from SQLite.
    public var sqliteCode: Int32?

    /// An error about the store at `path`, with the message `reason` (what is wrong and what to do).
    public init(
        _ code: Code, path: String, _ reason: String, offset: Int? = nil, storeVersion: String? = nil,
        storeChecksum: String? = nil, modelVersion: String? = nil, modelChecksum: String? = nil,
        differences: [String] = [], sqliteCode: Int32? = nil
    ) {
        self.code = code
        self.path = path
        self.reason = reason
        self.offset = offset
        self.storeVersion = storeVersion
        self.storeChecksum = storeChecksum
        self.modelVersion = modelVersion
        self.modelChecksum = modelChecksum
        self.differences = differences
        self.sqliteCode = sqliteCode
    }

    /// `store PATH: REASON`, with the versions when they matter.
    public var description: String {
        var text = "store \(path): \(reason)"
        if let offset { text += " (at byte offset \(offset))" }
        if !differences.isEmpty { text += "\n" + differences.map { "  - \($0)" }.joined(separator: "\n") }
        return text
    }

    /// Maps an SQLite error raised while working on `path` to a store error.
    static func from(_ error: any Error, path: String, while action: String) -> StoreError {
        if let e = error as? StoreError { return e }
        guard let db = error as? DatabaseError else {
            return StoreError(.sqlite, path: path, "\(action) failed: \(error)")
        }
        let primary = db.resultCode.primaryResultCode
        let message = db.message ?? "\(db.resultCode)"
        switch primary {
        case .SQLITE_NOTADB:
            return StoreError(.notSQLite, path: path, "\(action) failed: the file is not an SQLite database (\(message)); check the path, or restore the store from a backup", sqliteCode: db.extendedResultCode.rawValue)
        case .SQLITE_CORRUPT:
            return StoreError(.corrupt, path: path, "\(action) failed: the database is corrupt (\(message)); run `stratactl inspect --check` and restore from a backup", sqliteCode: db.extendedResultCode.rawValue)
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return StoreError(.locked, path: path, "\(action) failed: the store is locked by another connection or process (\(message)); stop the other writer or retry later", sqliteCode: db.extendedResultCode.rawValue)
        case .SQLITE_READONLY, .SQLITE_PERM:
            return StoreError(.readOnly, path: path, "\(action) failed: the store is not writable (\(message)); fix the file and directory permissions, or open it read-only", sqliteCode: db.extendedResultCode.rawValue)
        case .SQLITE_CANTOPEN where !FileManager.default.isWritableFile(atPath: path):
            // CANTOPEN has other causes (a missing directory): only an unwritable file is `readOnly`.
            return StoreError(.readOnly, path: path, "\(action) failed: the store is not writable (\(message)); fix the file and directory permissions, or open it read-only", sqliteCode: db.extendedResultCode.rawValue)
        case .SQLITE_FULL:
            return StoreError(.full, path: path, "\(action) failed: the database or disk is full (\(message)); free space and retry — nothing was committed", sqliteCode: db.extendedResultCode.rawValue)
        default:
            return StoreError(.sqlite, path: path, "\(action) failed: \(message)", sqliteCode: db.extendedResultCode.rawValue)
        }
    }
}
