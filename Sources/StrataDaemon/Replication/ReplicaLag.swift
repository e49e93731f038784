import Foundation
import Strata

/// How far a store's replica is behind the store: the WAL bytes not yet shipped.
///
/// Read from files only (the daemon's unit has no network): the store's WAL index (`-shm`)
/// gives the WAL's salts and last committed frame; the newest LTX file of the replica's level
/// 0 (`DIR/ltx/0/MINTXID-MAXTXID.ltx`, written by Litestream 0.5) records in its header the
/// WAL salts, offset and size it shipped. The same WAL generation: the bytes past that end.
/// Another (the WAL restarted after a checkpoint and nothing of it is shipped yet): every
/// frame of the current WAL.
///
/// ```swift
/// let lag = ReplicaLag.read(storePath: "/var/lib/strata/aircraft.sqlite",
///                           positionDirectory: "/var/lib/strata/replicas/aircraft")
/// lag.unshippedBytes   // 0 once Litestream has shipped the last commit
/// ```
public struct ReplicaLag: Sendable, Hashable {
    /// WAL bytes committed on the store and not yet in the replica (0 when caught up).
    public var unshippedBytes: Int
    /// When the replica's newest LTX file was written (its header's timestamp); nil when none.
    public var shippedAt: Date?
    /// Why the position could not be read (no replica yet, an unreadable directory, a foreign
    /// file); nil when it was. Deferred work holds while there is one.
    public var problem: String?
    /// The WAL's committed end (bytes) and its generation (its two salts): how much the store's
    /// writers have written since the WAL last restarted.
    var walEnd = 0
    var walGeneration: UInt64 = 0

    /// Reads the lag of the store at `storePath` against the replica under `positionDirectory`.
    public static func read(storePath: String, positionDirectory: String) -> ReplicaLag {
        between(storePath: storePath, and: ShippedPosition.read(positionDirectory: positionDirectory))
    }

    /// The lag of the store at `storePath` (its WAL's end read now) against a position read
    /// before: the shipped position moves only when Litestream writes an LTX file, so it may be
    /// read less often than the WAL's end, which every commit moves (an older position only
    /// overstates the lag).
    public static func between(storePath: String, and shipped: ShippedPosition) -> ReplicaLag {
        let wal = WALIndexHeader.read(storePath + "-shm")
        let walEnd = wal.map { $0.committedEnd } ?? 0
        let generation = wal.map { UInt64($0.salt1) << 32 | UInt64($0.salt2) } ?? 0
        guard let header = shipped.header else {
            return ReplicaLag(unshippedBytes: walEnd, shippedAt: nil, problem: shipped.problem ?? "no replica position",
                              walEnd: walEnd, walGeneration: generation)
        }
        guard let wal else {
            // No WAL index: no connection has the store open in WAL mode, nothing unshipped.
            return ReplicaLag(unshippedBytes: 0, shippedAt: header.timestamp, problem: nil)
        }
        let unshipped: Int
        if header.walSalt1 == wal.salt1 && header.walSalt2 == wal.salt2 {
            unshipped = max(0, walEnd - Int(clamping: header.walOffset + header.walSize))
        } else {
            unshipped = wal.frames == 0 ? 0 : max(0, walEnd - WALIndexHeader.walHeaderSize)
        }
        return ReplicaLag(unshippedBytes: unshipped, shippedAt: header.timestamp, problem: nil, walEnd: walEnd, walGeneration: generation)
    }
}

/// The fields of a Litestream 0.5 LTX file header that place it in the WAL (big endian:
/// magic `LTX1`, flags, page size, commit, min and max TXID, timestamp in ms, pre-apply
/// checksum, WAL offset, WAL size, WAL salts).
struct LTXHeader: Hashable {
    var maxTXID: UInt64
    var timestamp: Date
    var walOffset: Int64
    var walSize: Int64
    var walSalt1: UInt32
    var walSalt2: UInt32

    static let size = 100

    struct Failure: Error {
        var reason: String
    }

    static func read(_ path: String) throws(Failure) -> LTXHeader {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw Failure(reason: "cannot read the replica's LTX file \(path); check the permissions of the replica directory")
        }
        let data = (try? handle.read(upToCount: size)) ?? nil
        try? handle.close()
        guard let data, data.count == size else {
            throw Failure(reason: "the replica's LTX file \(path) ends at byte \(data?.count ?? 0), before its \(size)-byte header; is another tool writing there?")
        }
        let bytes = [UInt8](data)
        guard bytes[0..<4].elementsEqual("LTX1".utf8) else {
            throw Failure(reason: "the replica's LTX file \(path) does not start with LTX1 at offset 0; point `replication.replica` at a Litestream 0.5 file replica")
        }
        func big(_ offset: Int, _ count: Int) -> UInt64 {
            bytes[offset..<offset + count].reduce(0) { $0 << 8 | UInt64($1) }
        }
        let walOffset = Int64(bitPattern: big(48, 8)), walSize = Int64(bitPattern: big(56, 8))
        guard walOffset >= 0, walSize >= 0, walOffset <= Int64(Int32.max) * 65_560, walSize <= Int64(Int32.max) * 65_560 else {
            throw Failure(reason: "the replica's LTX file \(path) has a WAL offset \(walOffset) and size \(walSize) at offset 48 out of range")
        }
        return LTXHeader(maxTXID: big(24, 8), timestamp: Date(timeIntervalSince1970: Double(Int64(bitPattern: big(32, 8))) / 1000),
                         walOffset: walOffset, walSize: walSize, walSalt1: UInt32(big(64, 4)), walSalt2: UInt32(big(68, 4)))
    }
}
