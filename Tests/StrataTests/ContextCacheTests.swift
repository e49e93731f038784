import Foundation
import GRDB
import Synchronization
import Testing
@testable import Strata

/// A context lends its store's entity descriptions and row plans (``ContextCaches``) for its
/// life and gives them back; a host's ``TransactionGate`` runs inside every transaction of a
/// store-backed context.
@Suite("Context caches and the transaction gate")
struct ContextCacheTests {
    static func seeded(_ temp: TemporaryStore) throws -> PersistentStore {
        let store = try temp.open(TestModels.fleet)
        let context = ObjectContext(store: store)
        for (i, color) in ["red", "blue", "red"].enumerated() {
            let aircraft = try context.insert("Aircraft")
            aircraft["serial"] = .string("S\(i)")
            aircraft["tailNumber"] = .string("F-GC\(i)")
            aircraft["colorScheme.primary"] = .string(color)
        }
        let pilot = try context.insert("Pilot")
        pilot["name"] = "Amelia"
        try context.save()
        return store
    }

    @Test func aContextGivesItsCachesBackForTheNextOne() throws {
        let temp = TemporaryStore()
        let store = try Self.seeded(temp)
        defer { try? store.close() }
        let idle = store.contextCaches.idleCount
        var first: ObjectContext? = ObjectContext(store: store)
        let lent = try #require(first?.caches)
        #expect(store.contextCaches.idleCount == max(0, idle - 1))
        #expect(try first?.fetch("Aircraft", where: "colorScheme.primary == %@", "red").count == 2)
        #expect(lent.rowPlans.count == 1, "the fetch's row plan is kept in the lent caches")
        #expect(lent.entityInfos["Aircraft"] != nil)
        first = nil
        let second = ObjectContext(store: store)
        #expect(second.caches === lent, "the next context finds the plans of the last one")
        // The kept plan reads the rows as the first context did, into the new context's objects.
        let red = try second.fetch("Aircraft", where: "colorScheme.primary == %@", "red", sortedBy: [FetchSortDescriptor("tailNumber")])
        #expect(red.map { $0["tailNumber"].stringValue } == ["F-GC0", "F-GC2"])
        #expect(red.allSatisfy { $0.context === second })
        #expect(lent.rowPlans.count == 2, "a different SQL (sorted) adds its own plan")
    }

    @Test func contextsAliveAtOnceNeverShareCaches() throws {
        let temp = TemporaryStore()
        let store = try Self.seeded(temp)
        defer { try? store.close() }
        let contexts = (0..<4).map { _ in ObjectContext(store: store) }
        let identities = Set(contexts.map { ObjectIdentifier($0.caches) })
        #expect(identities.count == 4)
        // Contexts made on threads at the same time, each fetching through its own caches.
        let counts = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let context = ObjectContext(store: store)
            let count = (try? context.fetch("Aircraft").count) ?? -1
            counts.withLock { $0.append(count) }
        }
        #expect(counts.withLock { $0 } == Array(repeating: 3, count: 8))
        #expect(store.contextCaches.idleCount <= ContextCachePool.capacity)
    }

    @Test func theGateRunsInsideEachTransactionAndItsErrorEndsTheCall() throws {
        struct Refused: Error, Equatable {}
        let temp = TemporaryStore()
        let store = try Self.seeded(temp)
        defer { try? store.close() }
        let seen = Mutex<[Bool]>([])
        let refuse = Mutex(false)
        store.transactionGate.install { db in
            seen.withLock { $0.append(db.isInsideTransaction) }
            if refuse.withLock({ $0 }) { throw Refused() }
        }
        let context = ObjectContext(store: store)
        #expect(try context.fetch("Aircraft").count == 3)
        #expect(try context.count(FetchRequest(entityName: "Aircraft")) == 3)
        let pilot = try context.insert("Pilot")
        pilot["name"] = "Bessie"
        try context.save()
        #expect(seen.withLock { $0 } == [true, true, true], "one check per transaction, each inside it")

        refuse.withLock { $0 = true }
        #expect(throws: Refused.self) { try context.fetch("Aircraft") }
        #expect(throws: Refused.self) { try context.count(FetchRequest(entityName: "Pilot")) }
        let refused = try context.insert("Pilot")
        refused["name"] = "Not saved"
        #expect(throws: Refused.self) { try context.save() }
        #expect(context.hasChanges, "a refused save keeps the changes for a retry")

        store.transactionGate.install(nil)
        let names = try temp.rawQueue().strings("SELECT name FROM \(quoteIdentifier(store.layout.entity("Pilot")!.table)) ORDER BY name")
        #expect(names == ["Amelia", "Bessie"], "the refused save wrote nothing")
        try context.save()
        #expect(try context.count(FetchRequest(entityName: "Pilot")) == 3)
    }

    @Test func theSchemaVersionReadInATransactionMatchesTheStoresOwn() throws {
        let temp = TemporaryStore()
        let store = try Self.seeded(temp)
        defer { try? store.close() }
        let before = try store.schemaVersion()
        #expect(try store.database.read { db in try PersistentStore.schemaVersion(in: db) } == before)
        try temp.rawQueue().write { db in try db.execute(sql: "CREATE INDEX outside ON \(quoteIdentifier(store.layout.entity("Pilot")!.table))(name)") }
        let after = try store.database.read { db in try PersistentStore.schemaVersion(in: db) }
        #expect(after == before + 1)
        let check = try store.database.read { db in try store.checkSchema(in: db) }
        #expect(check.schemaVersion == after)
        #expect(check.isUsable)
        #expect(check.unexpected.contains { $0.contains("outside") }, "\(check.unexpected)")
    }
}
