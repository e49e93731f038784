import Foundation

/// The header of a `-shm` WAL index: the WAL's page size, salts and last committed frame, and
/// how many of its frames a checkpoint has copied into the store file.
///
/// Read from the file, not through SQLite: the daemon's replica-lag probe reads it for a store
/// it has no connection to, and ``WALTrimmer`` reads it under the write lock to learn where
/// the WAL's last committed frame ends. Layout (SQLite's `wal.c`): two copies of the 48-byte
/// `WalIndexHdr` at 0 and 48 (native byte order), then `WalCkptInfo` at 96 (`nBackfill` first).
package struct WALIndexHeader: Hashable, Sendable {
    package var pageSize: Int
    /// The last committed frame (`mxFrame`): frames after it are not part of the WAL.
    package var frames: Int
    package var salt1: UInt32
    package var salt2: UInt32
    /// Frames a checkpoint has copied into the store file (`nBackfill`).
    package var backfilled: Int

    package static let walHeaderSize = 32
    package static let frameHeaderSize = 24

    package init(pageSize: Int, frames: Int, salt1: UInt32, salt2: UInt32, backfilled: Int = 0) {
        self.pageSize = pageSize
        self.frames = frames
        self.salt1 = salt1
        self.salt2 = salt2
        self.backfilled = backfilled
    }

    /// The WAL's size up to its last committed frame.
    package var committedEnd: Int { frames == 0 ? 0 : Self.walHeaderSize + frames * (pageSize + Self.frameHeaderSize) }

    /// The header, from the two copies SQLite keeps (retried while a writer updates them;
    /// the first copy, the newer, after three tries); nil when the file is missing, short or
    /// not initialized.
    package static func read(_ path: String) -> WALIndexHeader? {
        for attempt in 0..<3 {
            // Never a descriptor of its own that is then closed: that would release the
            // process's SQLite locks on the index (``StoreFileDescriptors``).
            guard let bytes = StoreFileDescriptors.read(path, offset: 0, count: 100), bytes.count == 100 else { return nil }
            guard bytes[0..<48] == bytes[48..<96] || attempt == 2 else { continue }
            guard bytes[12] == 1 else { return nil }  // isInit
            func native32(_ offset: Int) -> UInt32 {
                bytes[offset..<offset + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
            }
            func big32(_ offset: Int) -> UInt32 {
                bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
            }
            let size = bytes[14..<16].withUnsafeBytes { $0.loadUnaligned(as: UInt16.self) }
            return WALIndexHeader(pageSize: size == 1 ? 65536 : Int(size), frames: Int(native32(16)),
                                  salt1: big32(32), salt2: big32(36), backfilled: Int(native32(96)))
        }
        return nil
    }
}
