import Foundation
import GRDB
import Strata
import Testing
@testable import StrataDaemon

/// Issue 23: the `replication` signal counts what the clients write in one of Litestream's
/// sync intervals, so that holding the deferred work keeps the lag at the sync under `max_lag`
/// (holding at `max_lag` alone lets the clients carry it past). A real SQLite WAL, and a
/// replica position written as Litestream 0.5 writes it (an LTX header).
@Suite(.serialized)
struct ReplicaLagProbeTests {
    final class Fixture {
        let directory: String
        let store: String
        let replica: String
        let queue: DatabaseQueue

        init() throws {
            directory = NSTemporaryDirectory() + "strata-lag-\(UUID().uuidString.prefix(8))"
            replica = directory + "/replica"
            try FileManager.default.createDirectory(atPath: replica + "/ltx/0", withIntermediateDirectories: true)
            store = directory + "/store.sqlite"
            var configuration = Configuration()
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA journal_mode = WAL")
                try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            }
            queue = try DatabaseQueue(path: store, configuration: configuration)
            try queue.write { try $0.execute(sql: "CREATE TABLE t(x BLOB)") }
        }

        /// Commits `count` rows of 4 KiB (about a page each).
        func write(_ count: Int) throws {
            try queue.write { db in
                for _ in 0..<count { try db.execute(sql: "INSERT INTO t VALUES (randomblob(4000))") }
            }
        }

        var wal: WALIndexHeader { WALIndexHeader.read(store + "-shm")! }

        /// Writes the replica's newest LTX file: shipped up to the WAL's end now, at `at`.
        func ship(at: Date = Date(), txid: UInt64) throws {
            let wal = self.wal
            var bytes = [UInt8]("LTX1".utf8)
            func put(_ value: UInt64, _ width: Int) { for i in (0..<width).reversed() { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * i))) } }
            put(0, 4); put(4096, 4); put(1, 4); put(txid, 8); put(txid, 8)
            put(UInt64(at.timeIntervalSince1970 * 1000), 8); put(0, 8)
            put(0, 8); put(UInt64(wal.committedEnd), 8); put(UInt64(wal.salt1), 4); put(UInt64(wal.salt2), 4)
            bytes += [UInt8](repeating: 0, count: LTXHeader.size - bytes.count)
            let name = String(format: "%016llx-%016llx.ltx", txid, txid)
            try Data(bytes).write(to: URL(filePath: replica + "/ltx/0/" + name))
        }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }
    }

    @Test func theClientsWritesOfOneSyncIntervalCountAgainstMaxLag() throws {
        let f = try Fixture()
        defer { f.remove() }
        try f.write(1)
        try f.ship(txid: 1)
        let probe = ReplicaLagProbe(store: "s", storePath: f.store,
                                    configuration: ReplicationConfiguration(replica: f.replica, maxLag: 1 << 20, syncInterval: .seconds(10)))
        let t0 = ContinuousClock.now
        let caughtUp = probe.projection(now: t0, at: .workIdle)
        #expect(caughtUp.lag.problem == nil && caughtUp.lag.unshippedBytes == 0 && caughtUp.expectedBytes == 0)

        // The clients write 100 pages in 200 ms while no work runs: their rate.
        let before = f.wal.committedEnd
        try f.write(100)
        let written = f.wal.committedEnd - before
        let measured = probe.projection(now: t0 + .milliseconds(200), at: .workIdle)
        #expect(measured.lag.unshippedBytes == written)
        let rate = Double(written) / 0.2 * (1 - exp(-0.2 / ReplicaLagProbe.rateMemory))
        #expect(abs(probe.othersRate - rate) < 1e-6 * rate, "\(probe.othersRate) vs \(rate)")
        // A 10 s sync interval: 10 s of the clients' writes to come.
        #expect(measured.expectedBytes == Int(rate * 10))
        #expect(measured.lag.unshippedBytes < 1 << 20 && measured.projectedBytes > 1 << 20)
        let reading = probe.reading(now: t0 + .milliseconds(210))
        #expect(reading.isBusy, "under max_lag now, over it at the next sync: the work holds (\(reading.summary))")
        #expect(reading.note?.contains("MiB the clients write per sync interval") == true, "\(reading.note ?? "")")

        // The work's own writes (read before its batches) do not count as the clients'.
        _ = probe.projection(now: t0 + .milliseconds(300), at: .beforeBatch)
        try f.write(200)
        _ = probe.projection(now: t0 + .milliseconds(400), at: .beforeBatch)
        _ = probe.projection(now: t0 + .milliseconds(500), at: .other)
        _ = probe.projection(now: t0 + .milliseconds(600), at: .workIdle)
        #expect(abs(probe.othersRate - rate) < 1e-6 * rate, "the work's writes were counted as the clients'")

        // Shipped: the lag is back to the clients' share alone.
        try f.ship(txid: 2)
        let shipped = probe.projection(now: t0 + .milliseconds(700), at: .other)
        #expect(shipped.lag.unshippedBytes == 0 && shipped.projectedBytes == Int(probe.othersRate * 10))
    }

    /// The work's next batch counts too: the WAL its last batch wrote, capped at half of what
    /// the clients leave of `max_lag`, so that a large last batch never holds the work for good.
    @Test func theNextBatchCountsCappedAtHalfOfWhatTheClientsLeave() throws {
        let f = try Fixture()
        defer { f.remove() }
        try f.write(1)
        try f.ship(txid: 1)
        func probe(maxLag: Int) -> ReplicaLagProbe {
            ReplicaLagProbe(store: "s", storePath: f.store, configuration: ReplicationConfiguration(replica: f.replica, maxLag: maxLag))
        }
        let roomy = probe(maxLag: 64 << 20), tight = probe(maxLag: 256 << 10)
        let t0 = ContinuousClock.now
        for p in [roomy, tight] { _ = p.projection(now: t0, at: .beforeBatch) }
        let start = f.wal.committedEnd
        try f.write(100)
        let batch = f.wal.committedEnd - start
        #expect(batch > 256 << 10)
        let next = roomy.projection(now: t0 + .milliseconds(20), at: .beforeBatch)
        #expect(next.nextBatchBytes == batch && next.expectedBytes == 0)
        #expect(next.projectedBytes == next.lag.unshippedBytes + batch)
        #expect(tight.projection(now: t0 + .milliseconds(20), at: .beforeBatch).nextBatchBytes == 128 << 10)

        // Shipped: a tight bound still lets the work run (the cap is under max_lag).
        try f.ship(txid: 2)
        let caughtUp = tight.reading(now: t0 + .milliseconds(100), at: .workIdle)
        #expect(!caughtUp.isBusy, "\(caughtUp.summary)")
        // The estimate outlives the pause: the next run starts with it.
        #expect(roomy.projection(now: t0 + .milliseconds(100), at: .workIdle).nextBatchBytes == batch)
    }

    @Test func withoutAPositionNothingIsProjectedAndTheWorkHolds() throws {
        let f = try Fixture()
        defer { f.remove() }
        try f.write(3)
        let probe = ReplicaLagProbe(store: "s", storePath: f.store, configuration: ReplicationConfiguration(replica: f.replica))
        let reading = probe.reading(at: .workIdle)
        #expect(reading.value == ReplicaLagProbe.unknownValue && reading.isBusy)
        #expect(reading.note?.contains("no LTX file in \(f.replica)/ltx/0 yet") == true, "\(reading.note ?? "")")
        #expect(probe.projection(at: .workIdle).expectedBytes == 0)
    }
}
