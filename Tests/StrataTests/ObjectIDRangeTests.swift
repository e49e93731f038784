import Foundation
import Testing
@testable import Strata

/// Object identifiers built from a client's number cannot trap: any Int64 prints and looks up.
@Suite("Object ids out of range")
struct ObjectIDRangeTests {
    static let model = ObjectModel(version: "Notes 1", entities: [Entity("Note", attributes: [Attribute("text", .string)])])

    @Test("Any key prints, Int64.min included (it trapped on negation)", arguments: [Int64.min, Int64.min + 1, -1, 0, 1, Int64.max])
    func anyKeyPrints(key: Int64) {
        let id = ObjectID(entityName: "Note", primaryKey: key)
        #expect(id.description == (key < 0 ? "Note/t\(key.magnitude)" : "Note/p\(key)"))
        #expect(id.uri(storeIdentifier: "S").absoluteString.hasSuffix("/Note/p\(key)"))
    }

    @Test("Looking up a temporary or missing key is objectNotFound, naming the key", arguments: [Int64.min, -5, 0, Int64.max])
    func lookupIsAnError(key: Int64) throws {
        let store = TemporaryStore()
        let context = ObjectContext(store: try store.open(Self.model))
        do {
            _ = try context.object(with: ObjectID(entityName: "Note", primaryKey: key))
            Issue.record("found an object for \(key)")
        } catch let error as ObjectContextError {
            #expect(error.code == .objectNotFound)
            #expect(error.description.contains("\(key.magnitude)"), "\(error)")
            if key < 0 { #expect(error.description.contains("temporary identifier")) }
        }
    }
}
