import Foundation
import GRDB
import Testing
@testable import Strata

/// Runs of like changes stored as one history record: what is written, what reads back, and
/// stores whose history predates runs.
@Suite struct HistoryRunTests {
    func insert(_ store: PersistentStore, count: Int, prefix: String) throws {
        let context = ObjectContext(store: store)
        for i in 0..<count { try context.insert("Aircraft")["tailNumber"] = .string("\(prefix)\(i)") }
        try context.save()
    }

    @Test func aBulkSaveIsOneRecordPerThousandObjectsAndReadsBackEveryChange() throws {
        let temp = TemporaryStore()
        let store = try temp.open(HistoryTests.model)
        defer { try? store.close() }
        try insert(store, count: 2_500, prefix: "N")
        let raw = try temp.rawQueue()
        // 1,024 + 1,024 + 452 objects; the first key in `object`, the others packed.
        #expect(try raw.strings("SELECT seq || ':' || object || ':' || coalesce(length(more_objects), 0) FROM _strata_object_changes ORDER BY seq")
                == ["0:1:1023", "1024:1025:1023", "2048:2049:451"])
        let changes = try store.history(since: 0).transactions.flatMap(\.changes)
        #expect(changes == (1...2_500).map { HistoryChange(entity: "Aircraft", primaryKey: Int64($0), kind: .insert) })
    }

    @Test func unlikeChangesAndTombstonesKeepRecordsOfTheirOwn() throws {
        let temp = TemporaryStore()
        let store = try temp.open(HistoryTests.model)
        defer { try? store.close() }
        try insert(store, count: 6, prefix: "T")
        let context = ObjectContext(store: store)
        func object(_ pk: Int64) throws -> ManagedObject { try context.object(with: ObjectID(entityName: "Aircraft", primaryKey: pk)) }
        try object(5)["seats"] = 1
        try object(2)["seats"] = 2
        try object(3)["seats"] = 3
        try object(4)["tailNumber"] = "X"
        try context.delete(object(6))
        try context.delete(object(1))
        try context.save()

        let transaction = try store.history(since: 1).transactions[0]
        // Deletes (in the order they were made) carry tombstones: one record each. Updates in
        // key order: 2 and 3 alike, 4 not, 5 like 2 and 3 but not next to them.
        #expect(transaction.changes == [
            HistoryChange(entity: "Aircraft", primaryKey: 6, kind: .delete, tombstone: ["tailNumber": .string("T5")]),
            HistoryChange(entity: "Aircraft", primaryKey: 1, kind: .delete, tombstone: ["tailNumber": .string("T0")]),
            HistoryChange(entity: "Aircraft", primaryKey: 2, kind: .update, properties: ["seats"]),
            HistoryChange(entity: "Aircraft", primaryKey: 3, kind: .update, properties: ["seats"]),
            HistoryChange(entity: "Aircraft", primaryKey: 4, kind: .update, properties: ["tailNumber"]),
            HistoryChange(entity: "Aircraft", primaryKey: 5, kind: .update, properties: ["seats"]),
        ])
        #expect(try temp.rawQueue().strings("SELECT count(*) FROM _strata_object_changes WHERE token = 2") == ["5"])
    }

    @Test(arguments: [
        [Int64(7)],
        [1, 2, 3, 4],
        [10, 3, 1_000_000, -5, 0],
        [Int64.max, Int64.min, 0, Int64.max],
    ])
    func packedKeysReadBackExactly(_ keys: [Int64]) {
        let packed = HistoryObjectRun.pack(keys)
        #expect((packed == nil) == (keys.count == 1))
        #expect(HistoryObjectRun.unpack(first: keys[0], more: packed) == keys)
    }

    @Test func damagedPackedBytesEndTheRunWithoutReadingPastThem() {
        // A continuation byte with nothing after it, then an over-long varint.
        #expect(HistoryObjectRun.unpack(first: 9, more: Data([0x02, 0x80])) == [9, 10])
        #expect(HistoryObjectRun.unpack(first: 9, more: Data(repeating: 0xFF, count: 12)) == [9])
    }

    @Test func aStoreWhoseHistoryPredatesRunsIsReadThenUpgradedAtAWritableOpen() throws {
        let temp = TemporaryStore()
        do {
            let store = try temp.open(HistoryTests.model)
            try insert(store, count: 3, prefix: "A")
            try store.close()
        }
        // The changes table as the first history format wrote it: no more_objects, a row per change.
        try temp.rawQueue().write { db in
            try db.execute(sql: "DELETE FROM _strata_object_changes")
            try db.execute(sql: "ALTER TABLE _strata_object_changes DROP COLUMN more_objects")
            for pk in 1...3 {
                try db.execute(sql: "INSERT INTO _strata_object_changes(token, seq, entity, object, kind) VALUES (1, ?, 1, ?, 0)", arguments: [pk - 1, pk])
            }
        }
        let expected = (1...3).map { HistoryChange(entity: "Aircraft", primaryKey: Int64($0), kind: .insert) }
        do {
            let readOnly = try temp.open(HistoryTests.model, options: StoreOptions(createIfMissing: false, readOnly: true))
            defer { try? readOnly.close() }
            #expect(try readOnly.history(since: 0).transactions.flatMap(\.changes) == expected)
        }
        let store = try temp.open(HistoryTests.model)
        defer { try? store.close() }
        try insert(store, count: 2, prefix: "B")
        let page = try store.history(since: 0)
        #expect(page.transactions.map { $0.changes.map(\.primaryKey) } == [[1, 2, 3], [4, 5]])
        #expect(page.transactions[0].changes == expected)
        #expect(try temp.rawQueue().strings("SELECT count(*) FROM _strata_object_changes") == ["4"])
    }
}
