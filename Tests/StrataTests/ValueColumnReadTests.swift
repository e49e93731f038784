import Foundation
import GRDB
import GRDBSQLite
import Testing
@testable import Strata

/// A fetched row's columns are read straight from the statement
/// (`Value(sqliteStatement:index:type:)`); what it reads must be what the `DatabaseValue` path
/// reads, for every attribute type and every storage class a column can hold (values written
/// by other tools included).
@Suite("Values read from a statement's column match the DatabaseValue path")
struct ValueColumnReadTests {
    static let stored: [DatabaseValue] = [
        .null, 0.databaseValue, 1.databaseValue, (-42).databaseValue, Int64.max.databaseValue,
        3.0.databaseValue, 2.5.databaseValue, 1e300.databaseValue, (-0.0).databaseValue,
        "".databaseValue, "text".databaseValue, "a longer text than fifteen bytes, é ü".databaseValue,
        "12.5".databaseValue, "2026-11-27T10:00:00Z".databaseValue, "E621E1F8-C36C-495A-93FC-0C247A3E6E5F".databaseValue,
        "https://example.com/a?b=c".databaseValue, Data([0, 1, 2, 255]).databaseValue, Data().databaseValue,
    ]

    @Test(arguments: AttributeType.allCases)
    func everyStorageClassReadsAlike(type: AttributeType) throws {
        let queue = try DatabaseQueue()
        try queue.read { db in
            for value in Self.stored {
                let statement = try db.makeStatement(sql: "SELECT ?")
                try statement.setArguments([value])
                let rows = try Row.fetchCursor(statement)
                let row = try #require(try rows.next())
                let direct = Value(sqliteStatement: statement.sqliteStatement, index: 0, type: type)
                #expect(direct == Value(databaseValue: row[0], type: type), "\(value) as \(type)")
                #expect(direct == Value(databaseValue: value, type: type), "\(value) as \(type)")
            }
        }
    }

    @Test func anObjectsContextIsNilOnceTheContextIsGone() throws {
        let temp = TemporaryStore()
        let store = try temp.open(TestModels.fleet)
        defer { try? store.close() }
        var context: ObjectContext? = ObjectContext(store: store)
        let pilot = try #require(try context?.insert("Pilot"))
        pilot["name"] = "Amelia"
        try context?.save()
        #expect(pilot.context === context)
        weak let gone = context
        context = nil
        #expect(gone == nil, "nothing else keeps the context")
        #expect(pilot.context == nil)
        #expect(pilot["name"] == "Amelia", "the object keeps its values")
    }
}
