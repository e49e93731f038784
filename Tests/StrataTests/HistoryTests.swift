import Foundation
import GRDB
import Testing
@testable import Strata

/// Change history in the store: what a save records, in its own transaction; gaps for other
/// processes' raw writes; reading pages; bad input.
@Suite struct HistoryTests {
    static let model = MigrationTestModels.model("History 1", [
        MigrationTestModels.aircraft(attributes: [
            Attribute("tailNumber", .string, isOptional: false, preservesValueInHistoryOnDeletion: true),
            Attribute("seats", .int16),
            Attribute("photo", .data),
        ], unique: [UniquenessConstraint(["tailNumber"])]),
        MigrationTestModels.owner(),
    ])

    func insertAircraft(_ store: PersistentStore, _ tails: [String], author: String? = nil) throws -> [ManagedObject] {
        let context = ObjectContext(store: store)
        context.transactionAuthor = author
        let objects = try tails.map { tail in
            let object = try context.insert("Aircraft")
            object["tailNumber"] = .string(tail)
            return object
        }
        try context.save()
        return objects
    }

    @Test func eachChangeKindIsRecordedWithAuthorAndUser() throws {
        let temp = TemporaryStore()
        let store = try temp.open(Self.model)
        defer { try? store.close() }
        #expect(try store.latestHistoryToken() == 0)
        _ = try insertAircraft(store, ["F-GSPT", "D-EABC"], author: "importer")

        let context = ObjectContext(store: store)
        context.transactionAuthor = "editor"
        let owner = try context.insert("Owner")
        owner["name"] = "Ann"
        let first = try context.object(with: ObjectID(entityName: "Aircraft", primaryKey: 1))
        first["seats"] = 4
        first["colorScheme.primary"] = "red"
        try first.setObject(owner, forRelationship: "owner")
        try context.save()

        let second = try context.object(with: ObjectID(entityName: "Aircraft", primaryKey: 2))
        try context.delete(second)
        try context.save()

        let page = try store.history(since: 0)
        #expect(page.transactions.map(\.token) == [1, 2, 3])
        #expect(page.next == 3 && page.latest == 3)
        let (insert, update, delete) = (page.transactions[0], page.transactions[1], page.transactions[2])
        #expect(insert.author == "importer" && insert.user == ObjectContext.processUser && insert.kind == .objects)
        #expect(insert.changes == [HistoryChange(entity: "Aircraft", primaryKey: 1, kind: .insert),
                                   HistoryChange(entity: "Aircraft", primaryKey: 2, kind: .insert)])
        #expect(update.author == "editor")
        #expect(update.changes == [HistoryChange(entity: "Owner", primaryKey: 1, kind: .insert),
                                   HistoryChange(entity: "Aircraft", primaryKey: 1, kind: .update, properties: ["colorScheme", "owner", "seats"])])
        #expect(delete.changes == [HistoryChange(entity: "Aircraft", primaryKey: 2, kind: .delete, tombstone: ["tailNumber": .string("D-EABC")])])
    }

    @Test func aFailedSaveRecordsNothing() throws {
        let temp = TemporaryStore()
        let store = try temp.open(Self.model)
        defer { try? store.close() }
        _ = try insertAircraft(store, ["F-GSPT"])
        #expect(throws: ObjectContextError.self) { _ = try insertAircraft(store, ["N1", "F-GSPT"]) }
        #expect(try store.latestHistoryToken() == 1)
        #expect(try temp.rawQueue().strings("SELECT count(*) FROM _strata_object_changes") == ["1"])
    }

    @Test func historyOffRecordsNothing() throws {
        let temp = TemporaryStore()
        let store = try temp.open(Self.model, options: StoreOptions(recordsHistory: false))
        defer { try? store.close() }
        _ = try insertAircraft(store, ["F-GSPT"])
        #expect(try store.latestHistoryToken() == 0)
        #expect(try store.history(since: 0).transactions.isEmpty)
    }

    @Test func aRawWriteByAnotherConnectionIsAGap() throws {
        let temp = TemporaryStore()
        let store = try temp.open(Self.model)
        defer { try? store.close() }
        _ = try insertAircraft(store, ["F-GSPT"])
        let raw = try DatabaseQueue(path: temp.url.path)
        try raw.write { db in try db.execute(sql: #"UPDATE "Aircraft" SET "seats" = 9"#) }
        try raw.close()
        // Found by the next save, before its own record…
        _ = try insertAircraft(store, ["N1"])
        let kinds = try store.history(since: 1).transactions.map(\.kind)
        #expect(kinds == [.gap, .objects])
        // …or by asking, without a save.
        try DatabaseQueue(path: temp.url.path).write { db in try db.execute(sql: #"DELETE FROM "Aircraft" WHERE "_pk" = 1"#) }
        let gap = try #require(try store.recordExternalWrites())
        #expect(try store.history(since: gap - 1).transactions.map(\.kind) == [.gap])
        #expect(try store.recordExternalWrites() == nil)
    }

    @Test func anotherStrataWriterIsNotAGap() throws {
        let temp = TemporaryStore()
        let store = try temp.open(Self.model)
        defer { try? store.close() }
        let other = try temp.open(Self.model)
        _ = try insertAircraft(other, ["F-GSPT"])
        try other.close()
        _ = try insertAircraft(store, ["N1"])
        #expect(try store.history(since: 0).transactions.map(\.kind) == [.objects, .objects])
    }

    @Test func entityFilterAndPaging() throws {
        let temp = TemporaryStore()
        let store = try temp.open(Self.model)
        defer { try? store.close() }
        for i in 0..<5 { _ = try insertAircraft(store, ["T\(i)"]) }
        let context = ObjectContext(store: store)
        try context.insert("Owner")["name"] = "Ann"
        try context.save()
        let owners = try store.history(since: 0, entities: ["Owner"])
        #expect(owners.transactions.map(\.token) == [6] && owners.next == 6)
        let first = try store.history(since: 0, entities: ["Aircraft"], limit: 2)
        #expect(first.transactions.map(\.token) == [1, 2] && first.next == 2)
        let rest = try store.history(since: first.next, entities: ["Aircraft"], limit: 10)
        #expect(rest.transactions.map(\.token) == [3, 4, 5] && rest.next == 6)
    }

    @Test func badInputIsRefusedWithAdvice() throws {
        let temp = TemporaryStore()
        let store = try temp.open(Self.model)
        defer { try? store.close() }
        _ = try insertAircraft(store, ["F-GSPT"])
        func code(_ body: () throws -> Void) -> (HistoryError.Code?, String) {
            do { try body(); return (nil, "") } catch let error as HistoryError { return (error.code, error.description) } catch { return (nil, "\(error)") }
        }
        let negative = code { _ = try store.history(since: -1) }
        #expect(negative.0 == .invalidToken && negative.1.contains("negative"))
        let future = code { _ = try store.history(since: 99) }
        #expect(future.0 == .invalidToken && future.1.contains("newer than the store's latest token 1"))
        #expect(code { _ = try store.history(since: 0, limit: 0) }.0 == .limitOutOfRange)
        #expect(code { _ = try store.history(since: 0, limit: 10_001) }.0 == .limitOutOfRange)
        let unknown = code { _ = try store.history(since: 0, entities: ["Nope"]) }
        #expect(unknown.0 == .unknownEntity && unknown.1.contains("known entities: Aircraft, Owner"))
        #expect(code { try store.purgeHistory(through: 5) }.0 == .invalidToken)
        #expect(code { try store.purgeHistory(through: -1) }.0 == .invalidToken)
    }

    @Test func theHistoryTablesAreStrataOwn() throws {
        let temp = TemporaryStore()
        let store = try temp.open(Self.model)
        defer { try? store.close() }
        _ = try insertAircraft(store, ["F-GSPT"])
        let check = try store.checkSchema()
        #expect(check.problems.isEmpty && check.unexpected.isEmpty, "\(check)")
        #expect(try !store.hasPendingDeferredWork())
    }
}
