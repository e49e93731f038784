import Foundation
import GRDB
import Testing
@testable import Strata

/// A saved object keeps, per changed slot, the value it had before its first change since the
/// last save (``ManagedObject/savedValues``) instead of a second copy of every value: a
/// rollback, a deletion's history tombstone and the next save must all see the values last
/// read from or written to the store.
@Suite struct SavedValuesTests {
    @Test func rollbackPutsBackTheValuesOfTheLastSaveNotTheFirst() throws {
        let temp = TemporaryStore()
        let store = try temp.open(HistoryTests.model)
        defer { try? store.close() }
        let context = ObjectContext(store: store)
        let object = try context.insert("Aircraft")
        object["tailNumber"] = "F-AAAA"
        object["seats"] = 4
        try context.save()

        object["seats"] = 5
        object["seats"] = 6                 // the same slot twice: the saved value is kept once
        object["tailNumber"] = "F-BBBB"
        #expect(object.savedValues.count == 2)
        try context.save()
        #expect(object.savedValues.isEmpty, "a save makes the current values the saved ones")

        object["seats"] = 7
        object["tailNumber"] = "F-CCCC"
        object["seats"] = 8
        context.rollback()
        #expect(object["seats"] == 6)
        #expect(object["tailNumber"] == "F-BBBB")
        #expect(!context.hasChanges)
        // Nothing of the rolled-back change reaches the store with a later save.
        object["photo"] = .data(Data([1]))
        try context.save()
        let row = try temp.rawQueue().read { db in try Row.fetchOne(db, sql: "SELECT tailNumber, seats FROM Aircraft") }
        #expect(row?["tailNumber"] == "F-BBBB")
        #expect(row?["seats"] == 6)
    }

    @Test func aChangedThenDeletedObjectsTombstoneHoldsItsSavedValue() throws {
        let temp = TemporaryStore()
        let store = try temp.open(HistoryTests.model)
        defer { try? store.close() }
        let context = ObjectContext(store: store)
        let object = try context.insert("Aircraft")
        object["tailNumber"] = "F-SAVED"
        try context.save()
        let key = object.objectID.primaryKey

        object["tailNumber"] = "F-UNSAVED"
        try context.delete(object)
        try context.save()
        let delete = try #require(try store.history(since: 0).transactions.last)
        #expect(delete.changes == [HistoryChange(entity: "Aircraft", primaryKey: key, kind: .delete, tombstone: ["tailNumber": .string("F-SAVED")])])
    }
}
