import Foundation
import GRDB
import Testing
@testable import Strata

/// A WAL that once grew large (a deferred rewrite's batches) is cut back once checkpointed,
/// instead of staying on disk at its largest size; a replicated store's WAL is left alone.
@Suite struct WALSizeLimitTests {
    static let model = ObjectModel(version: "Blobs 1", entities: [Entity("Blob", attributes: [Attribute("bytes", .data)])])

    func walBytes(_ temp: TemporaryStore) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: temp.url.path + "-wal"))?[.size] as? Int) ?? 0
    }

    /// Writes about 80 MiB in one transaction (more than the limit), lets a checkpoint copy it
    /// all, then commits one more row: the write that starts the WAL over.
    func growThenRestart(_ store: PersistentStore) throws {
        try store.database.write { db in
            try db.execute(sql: """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
                INSERT INTO "Blob"("_pk", "bytes") SELECT i, randomblob(4000) FROM n
                """)
        }
        _ = try store.database.writeWithoutTransaction { db in try db.checkpoint(.passive) }
        try store.database.write { db in try db.execute(sql: #"INSERT INTO "Blob"("_pk", "bytes") VALUES (20001, x'00')"#) }
    }

    @Test func aCheckpointedWALIsCutBackAtTheNextWrite() throws {
        let temp = TemporaryStore()
        let store = try temp.open(Self.model)
        defer { try? store.close() }
        #expect(try store.database.read { db in try Int.fetchOne(db, sql: "PRAGMA journal_size_limit") } == PersistentStore.walSizeLimit)
        try growThenRestart(store)
        #expect(walBytes(temp) <= PersistentStore.walSizeLimit, "WAL of \(walBytes(temp)) bytes")
        #expect(try store.database.read { db in try Int.fetchOne(db, sql: #"SELECT count(*) FROM "Blob""#) } == 20_001)
    }

    @Test func aReplicatedStoresWALIsTheReplicators() throws {
        let temp = TemporaryStore()
        let store = try temp.open(Self.model, options: StoreOptions(walCheckpointing: .external))
        defer { try? store.close() }
        // A store created replicated: its own connections, from the first, leave the WAL alone.
        #expect(try store.database.read { db in try Int.fetchOne(db, sql: "PRAGMA journal_size_limit") } == -1)
        #expect(try store.database.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") } == 0)
        try growThenRestart(store)
        #expect(walBytes(temp) > PersistentStore.walSizeLimit, "WAL of \(walBytes(temp)) bytes")
    }
}
