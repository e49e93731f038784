import Foundation
import GRDBSQLite

/// Reads a store's pages as they were at one moment, without taking any lock a writer waits for.
///
/// A read-only connection opens a read transaction (in WAL mode a reader blocks no writer, and
/// SQLite keeps what it sees fixed). Pages are then read from the files as that snapshot holds
/// them: the newest WAL frame of the page at or before the snapshot's last frame, otherwise the
/// database file. The snapshot's last frame and the WAL's salts come from the WAL index header
/// (the `-shm` file, format in sqlite.org/walformat.html), read before and after the
/// transaction starts: equal headers mean no commit came between, so the snapshot is that
/// header. While the transaction is open SQLite neither backfills frames past it nor restarts
/// the WAL, so the files hold the snapshot's pages. Any page read from the WAL is checked
/// against the frame's page number and salts.
///
/// Used by the online backup (``DeferredFinisher``'s backup step): each step of its first pass
/// reads a range of pages in a short snapshot of its own; its last pass reads every page in one.
final class SnapshotPageReader {
    /// The snapshot's shape.
    struct Snapshot: Equatable {
        /// Database size in pages.
        var pageCount: Int
        var pageSize: Int
        /// The snapshot's last WAL frame (0: every page is in the database file).
        var lastFrame: Int
        /// The WAL header's salts, as their bytes (the index copies them unconverted).
        var salts: (UInt32, UInt32)
        static func == (a: Snapshot, b: Snapshot) -> Bool {
            a.pageCount == b.pageCount && a.pageSize == b.pageSize && a.lastFrame == b.lastFrame && a.salts == b.salts
        }
    }

    let storePath: String
    private var connection: OpaquePointer?
    private let databaseFD: Int32
    private var walFD: Int32 = -1
    private(set) var snapshot: Snapshot?
    /// Newest frame of each page in the snapshot's WAL (pages read from the WAL).
    private var frames: [Int: Int] = [:]

    init(storePath: String) throws {
        self.storePath = storePath
        var handle: OpaquePointer?
        guard sqlite3_open_v2(storePath, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let handle else {
            sqlite3_close(handle)
            throw StoreError(.sqlite, path: storePath, "cannot open a read connection for the backup; check that the store file is readable")
        }
        sqlite3_busy_timeout(handle, 5000)
        connection = handle
        // Descriptors that stay open (``StoreFileDescriptors``): closing one would release
        // this process's SQLite locks on the store.
        databaseFD = StoreFileDescriptors.descriptor(storePath) ?? -1
        guard databaseFD >= 0 else {
            sqlite3_close(handle)
            throw StoreError(.sqlite, path: storePath, "cannot read the store file for the backup: \(String(cString: strerror(errno)))")
        }
    }

    deinit { close() }

    /// Starts a read transaction and learns its snapshot. Retries while commits race the start.
    @discardableResult
    func begin() throws -> Snapshot {
        end()
        guard let connection else { throw StoreError(.sqlite, path: storePath, "the backup's read connection is closed") }
        for _ in 0..<100 {
            let before = try walIndexHeader()
            guard sqlite3_exec(connection, "BEGIN; SELECT count(*) FROM sqlite_master", nil, nil, nil) == SQLITE_OK else {
                let message = String(cString: sqlite3_errmsg(connection))
                sqlite3_exec(connection, "ROLLBACK", nil, nil, nil)
                throw StoreError(.sqlite, path: storePath, "cannot start the backup's read transaction: \(message)")
            }
            let backfilled = try backfilledFrames()
            let after = try walIndexHeader()
            if let before, before == after {
                try adopt(before, backfilled: backfilled)
                return snapshot!
            }
            if before == nil && after == nil {
                // Not in WAL mode: the read transaction's shared lock keeps the file still.
                try adopt(nil, backfilled: 0)
                return snapshot!
            }
            sqlite3_exec(connection, "COMMIT", nil, nil, nil)
        }
        throw StoreError(.locked, path: storePath, "the store changed on every attempt to take a snapshot for the backup; retry when it is less busy")
    }

    /// Ends the read transaction.
    func end() {
        if snapshot != nil, let connection { sqlite3_exec(connection, "COMMIT", nil, nil, nil) }
        snapshot = nil
        frames = [:]
    }

    /// The bytes of pages `range` (1-based page numbers) in the snapshot.
    func read(pages range: Range<Int>) throws -> [UInt8] {
        guard let snapshot else { throw StoreError(.sqlite, path: storePath, "the backup read a page outside a snapshot") }
        let size = snapshot.pageSize
        var bytes = [UInt8](repeating: 0, count: range.count * size)
        let got = bytes.withUnsafeMutableBytes { pread(databaseFD, $0.baseAddress, $0.count, off_t((range.lowerBound - 1) * size)) }
        guard got >= 0 else { throw StoreError(.sqlite, path: storePath, "cannot read the store file for the backup: \(String(cString: strerror(errno)))") }
        guard !frames.isEmpty else { return bytes }
        var frame = [UInt8](repeating: 0, count: 24 + size)
        for page in range {
            guard let index = frames[page] else { continue }
            let offset = off_t(32 + (index - 1) * (24 + size))
            let n = frame.withUnsafeMutableBytes { pread(walFD, $0.baseAddress, $0.count, offset) }
            guard n == frame.count, Self.bigEndian(frame, 0) == UInt32(page),
                  Self.native(frame, 8) == snapshot.salts.0, Self.native(frame, 12) == snapshot.salts.1 else {
                throw StoreError(.sqlite, path: storePath, "the WAL changed under the backup's snapshot (page \(page), frame \(index)); the step is retried")
            }
            let start = (page - range.lowerBound) * size
            bytes.replaceSubrange(start..<start + size, with: frame[24...])
        }
        return bytes
    }

    func close() {
        end()
        if let connection { sqlite3_close(connection) }
        connection = nil
        walFD = -1
    }

    // MARK: - The WAL index

    private func adopt(_ header: Snapshot?, backfilled: Int) throws {
        guard var header else {
            let size = try pragma("page_size"), count = try pragma("page_count")
            snapshot = Snapshot(pageCount: count, pageSize: size, lastFrame: 0, salts: (0, 0))
            return
        }
        // Everything backfilled: the database file holds the whole snapshot (and SQLite may
        // restart the WAL under a reader that reads the file only), so the WAL is not read.
        if backfilled >= header.lastFrame { header.lastFrame = 0 }
        snapshot = header
        frames = [:]
        guard header.lastFrame > 0 else { return }
        if walFD < 0 { walFD = StoreFileDescriptors.descriptor(storePath + "-wal") ?? -1 }
        guard walFD >= 0 else { throw StoreError(.sqlite, path: storePath, "cannot read the store's WAL for the backup: \(String(cString: strerror(errno)))") }
        // The page number of each frame: the index's aPgno arrays, 4062 in its first 32 KiB
        // block (after the 136-byte header), 4096 in each later one.
        let blocks = header.lastFrame <= 4062 ? 1 : 2 + (header.lastFrame - 4063) / 4096
        var index = [UInt8](repeating: 0, count: blocks * 32768)
        guard let fd = StoreFileDescriptors.descriptor(storePath + "-shm") else { throw StoreError(.sqlite, path: storePath, "cannot read the store's WAL index for the backup") }
        _ = index.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        for frame in 1...header.lastFrame {
            let offset = frame <= 4062 ? 136 + (frame - 1) * 4 : (1 + (frame - 4063) / 4096) * 32768 + ((frame - 4063) % 4096) * 4
            let page = Int(Self.native(index, offset))
            if page > 0 && page <= header.pageCount { frames[page] = frame }
        }
    }

    /// The index header (both copies equal, initialised), nil when the store has no WAL index.
    private func walIndexHeader() throws -> Snapshot? {
        guard let header = StoreFileDescriptors.read(storePath + "-shm", offset: 0, count: 96), header.count == 96,
              header[0..<48] == header[48..<96], header[12] == 1 else { return nil }
        let sizeField = Int(header.withUnsafeBytes { $0.load(fromByteOffset: 14, as: UInt16.self) })
        return Snapshot(pageCount: Int(Self.native(header, 20)), pageSize: sizeField == 1 ? 65536 : sizeField,
                        lastFrame: Int(Self.native(header, 16)), salts: (Self.native(header, 32), Self.native(header, 36)))
    }

    private func backfilledFrames() throws -> Int {
        guard let field = StoreFileDescriptors.read(storePath + "-shm", offset: 96, count: 4), field.count == 4 else { return 0 }
        return Int(Self.native(field, 0))
    }

    private func pragma(_ name: String) throws -> Int {
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        guard sqlite3_prepare_v2(connection, "PRAGMA \(name)", -1, &statement, nil) == SQLITE_OK, sqlite3_step(statement) == SQLITE_ROW else {
            throw StoreError(.sqlite, path: storePath, "cannot read PRAGMA \(name) for the backup")
        }
        return Int(sqlite3_column_int64(statement, 0))
    }

    private static func native(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
    }

    private static func bigEndian(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }
}
