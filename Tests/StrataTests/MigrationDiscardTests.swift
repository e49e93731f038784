import Foundation
import GRDB
import Testing
@testable import Strata

/// Plans mark the operations that throw stored data away, and count it on a store.
@Suite("Migration plans: discarded data")
struct MigrationDiscardTests {
    typealias M = MigrationTestModels

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var destination: ObjectModel
        /// `what: count` for each discarded piece of data, in plan order.
        var expected: [String]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "removed attribute", destination: M.model("Aircraft 2", [M.aircraft(attributes: [Attribute("tailNumber", .string, isOptional: false), Attribute("seats", .int16)]), M.owner()]),
             expected: ["attribute Aircraft.photo: 1"]),
        Case(name: "removed composite", destination: M.model("Aircraft 2", [M.aircraft(composites: []), M.owner()]),
             expected: ["attribute Aircraft.colorScheme.primary: 2", "attribute Aircraft.colorScheme.secondary: 1"]),
        Case(name: "removed relationship", destination: M.model("Aircraft 2", [M.aircraft(relationships: []), M.owner(nil)]),
             expected: ["to-one relationship Aircraft.owner: 3"]),
        Case(name: "removed entity", destination: M.model("Aircraft 2", [M.aircraft(relationships: [])]),
             expected: ["objects of Owner: 2", "to-one relationship Aircraft.owner: 3"]),
        Case(name: "added attribute", destination: M.model("Aircraft 2", [M.aircraft(attributes: M.defaultAttributes + [Attribute("note", .string)]), M.owner()]),
             expected: []),
    ]

    @Test("each discarding step names its data and counts it on the store", arguments: cases)
    func discarded(_ change: Case) throws {
        let temp = TemporaryStore()
        try MigrationSafetyTests.seededStore(temp)
        let plan = try MigrationPlan.infer(from: M.base, to: change.destination)
        let counted = try temp.rawQueue().read { db in try plan.countDiscarded(in: db) }
        #expect(counted.flatMap { $0.discarded.map { "\($0.0.what): \($0.1)" } } == change.expected)
        #expect(plan.discardingOperations.allSatisfy(\.isDeferrable) || change.expected.isEmpty)
    }

    @Test("an ordered relationship that stops being ordered discards its order")
    func order() throws {
        let ordered = M.model("Aircraft 1", [M.aircraft(), M.owner(Relationship("aircraft", destination: "Aircraft", inverse: "owner", toMany: true, ordered: true))])
        let unordered = M.model("Aircraft 2", [M.aircraft(), M.owner()])
        let temp = TemporaryStore()
        let store = try temp.open(ordered)
        try store.database.write { db in for sql in M.baseSeed { try db.execute(sql: sql) } }
        try store.database.write { db in try db.execute(sql: #"UPDATE "Aircraft" SET "owner_order" = "_pk""#) }
        try store.close()
        let plan = try MigrationPlan.infer(from: ordered, to: unordered)
        let counted = try temp.rawQueue().read { db in try plan.countDiscarded(in: db) }
        #expect(counted.flatMap { $0.discarded.map { "\($0.0.what): \($0.1)" } } == ["order column of Owner.aircraft: 3"])
    }

    @Test("operations decoded from a ledger written before discards existed have none")
    func oldLedgerDecodes() throws {
        let json = #"{"kind":{"incrementalVacuum":{}},"isDeferrable":true,"summary":"reclaim"}"#
        let operation = try JSONDecoder().decode(MigrationOperation.self, from: Data(json.utf8))
        #expect(operation.discards.isEmpty)
        #expect(operation.summary == "reclaim")
    }
}
