import Foundation
import GRDB
import Testing
@testable import Strata

/// One predicate run against the fixture rows, with the primary keys it must select.
struct PredicateCase: Sendable, CustomTestStringConvertible {
    var entity: String
    var format: String
    var arguments: [any PredicateArgument]
    var expected: [Int64]

    init(_ format: String, _ arguments: any PredicateArgument..., entity: String = "Vehicle", expect expected: [Int64]) {
        self.entity = entity
        self.format = format
        self.arguments = arguments
        self.expected = expected
    }

    var testDescription: String { "\(entity): \(format)" }
}

@Suite("FetchPredicate compiler against SQLite")
struct PredicateCompilerTests {
    typealias M = PredicateTestModel

    static let strings: [PredicateCase] = [
        PredicateCase("name == 'Spirit'", expect: [3]),
        PredicateCase("name == %@", "spirit", expect: []),
        PredicateCase("name ==[c] %@", "SPIRIT", expect: [3]),
        PredicateCase("name ==[c] 'café racer'", expect: [1]),
        PredicateCase("name ==[c] 'cafe racer'", expect: []),
        PredicateCase("name ==[cd] 'CAFE RACER'", expect: [1]),
        PredicateCase("name ==[d] 'Cafe Racer'", expect: [1]),
        PredicateCase("name !=[c] 'spirit'", expect: [1, 2, 4, 5]),
        PredicateCase("name != 'Spirit'", expect: [1, 2, 4, 5]),
        PredicateCase("name <> 'Spirit' AND name != nil", expect: [1, 2, 4, 5]),
        PredicateCase("name BEGINSWITH 'Caf'", expect: [1]),
        PredicateCase("name BEGINSWITH[c] 'caf'", expect: [1, 2]),
        PredicateCase("name BEGINSWITH[cd] 'CAFE'", expect: [1, 2]),
        PredicateCase("name BEGINSWITH 'É'", expect: [4]),
        PredicateCase("name ENDSWITH 'latte'", expect: [2]),
        PredicateCase("name ENDSWITH[c] 'RACER'", expect: [1]),
        PredicateCase("name CONTAINS 'ir'", expect: [3]),
        PredicateCase("name CONTAINS 'ecureuil'", expect: []),
        PredicateCase("name CONTAINS[cd] 'ecureuil'", expect: [4]),
        PredicateCase("name CONTAINS[c] 'É'", expect: [1, 4]),
        PredicateCase("name LIKE 'Caf* R?cer'", expect: [1]),
        PredicateCase("name LIKE 'caf*'", expect: [2]),
        PredicateCase("name LIKE[c] 'CAF*'", expect: [1, 2]),
        PredicateCase("name LIKE[cd] '?cureuil'", expect: [4]),
        PredicateCase("name LIKE 'Spirit?'", expect: []),
        PredicateCase("name MATCHES 'S[a-z]+'", expect: [3]),
        PredicateCase("name MATCHES 'pirit'", expect: []),
        PredicateCase("name MATCHES 'ab|Spirit'", expect: [3]),
        PredicateCase("name MATCHES[c] 'spi.*'", expect: [3]),
        PredicateCase("name MATCHES[cd] 'ecu.*'", expect: [4]),
        PredicateCase("'Spirit of St. Louis' BEGINSWITH name", expect: [3]),
        PredicateCase("name IN {'Spirit', 'Unknown', 'nothing'}", expect: [3, 5]),
        PredicateCase("name IN[c] %@", ["SPIRIT", "CAFE LATTE"], expect: [2, 3]),
        PredicateCase("name < 'S'", expect: [1]),
        PredicateCase("name >[c] 't'", expect: [4, 5]),
        PredicateCase("website == %@", URL(string: "https://example.com/racer")!, expect: [1]),
        PredicateCase("website BEGINSWITH 'https://example.com/s'", expect: [3]),
    ]

    static let numbers: [PredicateCase] = [
        PredicateCase("hours > 100", expect: [1, 3, 4]),
        PredicateCase("hours >= 120.5", expect: [1, 3, 4]),
        PredicateCase("hours => %f", 120.5, expect: [1, 3, 4]),
        PredicateCase("hours < %d", 100, expect: [2]),
        PredicateCase("seats == 4", expect: [2, 3]),
        PredicateCase("seats = 0x4", expect: [2, 3]),
        PredicateCase("seats =< %i", 2, expect: [1]),
        PredicateCase("seats > -1", expect: [1, 2, 3, 4]),
        PredicateCase("seats > 2.5", expect: [2, 3, 4]),
        PredicateCase("5 < seats", expect: [4]),
        PredicateCase("seats BETWEEN {3, 6}", expect: [2, 3, 4]),
        PredicateCase("hours BETWEEN %@", [100, 400], expect: [1, 4]),
        PredicateCase("seats IN {2, 6}", expect: [1, 4]),
        PredicateCase("seats IN %@", Set([2]), expect: [1]),
        PredicateCase("seats IN %@", [Int?.none, 6], expect: [4, 5]),
        PredicateCase("seats IN {}", expect: []),
        PredicateCase("price > 100", expect: [3]),
        PredicateCase("price == %@", Decimal(string: "19.99")!, expect: [1]),
        PredicateCase("seats == hours", expect: []),
        PredicateCase("hours > seats", expect: [1, 2, 3, 4]),
    ]

    static let scalars: [PredicateCase] = [
        PredicateCase("registered > %@", M.date("2020-06-01"), expect: [2, 4]),
        PredicateCase("registered < '2020-01-02T00:00:00Z'", expect: [1, 3]),
        PredicateCase("registered BETWEEN %@", [M.date("2019-01-01"), M.date("2020-01-01")], expect: [1, 3]),
        PredicateCase("registered == nil", expect: [5]),
        PredicateCase("active == YES", expect: [1, 3]),
        PredicateCase("active == TRUE", expect: [1, 3]),
        PredicateCase("active = false", expect: [2]),
        PredicateCase("active == NO", expect: [2]),
        PredicateCase("active == %@", true, expect: [1, 3]),
        PredicateCase("active == 1", expect: [1, 3]),
        PredicateCase("active == nil", expect: [4, 5]),
        PredicateCase("active != YES", expect: [2, 4, 5]),
        PredicateCase("serial == %@", M.serial1, expect: [1]),
        PredicateCase("serial == %@", M.serial1.uuidString.lowercased(), expect: [1]),
        PredicateCase("serial IN %@", [M.serial1, M.serial3], expect: [1, 3]),
        PredicateCase("serial != nil", expect: [1, 3]),
        PredicateCase("serial == NULL", expect: [2, 4, 5]),
        PredicateCase("nil == serial", expect: [2, 4, 5]),
        PredicateCase("TRUEPREDICATE", expect: [1, 2, 3, 4, 5]),
        PredicateCase("FALSEPREDICATE", expect: []),
        PredicateCase("NOT (hours > 100)", expect: [2, 5]),
        PredicateCase("!(name == 'Spirit')", expect: [1, 2, 4, 5]),
        PredicateCase("name == 'Spirit' OR name == 'Unknown' AND seats == 4", expect: [3]),
        PredicateCase("(name == 'Spirit' OR name == 'Unknown') AND hours == nil", expect: [5]),
        PredicateCase("NOT name == 'Spirit' AND NOT name == 'Unknown'", expect: [1, 2, 4]),
        PredicateCase("hours > 100 && seats < 5 || name == 'Unknown'", expect: [1, 3, 5]),
        PredicateCase("%K == %@", "colorScheme.primary", "blue", expect: [3]),
        PredicateCase("SELF IN %@", [2, 4], expect: [2, 4]),
        PredicateCase("self == 3", expect: [3]),
    ]

    static let keyPaths: [PredicateCase] = [
        PredicateCase("colorScheme.primary == 'red'", expect: [1]),
        PredicateCase("colorScheme.primary ==[c] 'RED'", expect: [1, 2]),
        PredicateCase("colorScheme.secondary == colorScheme.primary", expect: []),
        PredicateCase("colorScheme.trim.finish == 'matte'", expect: [1]),
        PredicateCase("colorScheme.trim.finish != nil", expect: [1, 3]),
        PredicateCase("colorScheme.primary == nil", expect: [5]),
        PredicateCase("owner.name == 'Alice'", expect: [1, 3]),
        PredicateCase("owner.name == 'Alice' AND owner.age == 30", expect: [1, 3]),
        PredicateCase("owner.age > 29", expect: [1, 2, 3]),
        PredicateCase("owner.name BEGINSWITH[cd] 'zo'", expect: [4]),
        PredicateCase("owner.manager.name == 'Alice'", expect: [2]),
        PredicateCase("owner.manager.manager.name == %@", "Alice", expect: [4]),
        PredicateCase("owner.manager == nil", expect: [1, 3, 5]),
        PredicateCase("owner == nil", expect: [5]),
        PredicateCase("owner != nil", expect: [1, 2, 3, 4]),
        PredicateCase("owner == %@", 1, expect: [1, 3]),
        PredicateCase("owner IN {2, 3}", expect: [2, 4]),
        PredicateCase("owner.name == name", expect: []),
        PredicateCase("tailNumber BEGINSWITH 'F-H'", entity: "Aircraft", expect: [4]),
        PredicateCase("rotorCount == 1", entity: "Helicopter", expect: [4]),
    ]

    static let toMany: [PredicateCase] = [
        PredicateCase("ANY tags.label == 'fast'", expect: [1, 3]),
        PredicateCase("SOME tags.label == 'fast'", expect: [1, 3]),
        PredicateCase("tags.label == 'vintage'", expect: [1, 2]),
        PredicateCase("ALL tags.label == 'vintage'", expect: [2, 5]),
        PredicateCase("NONE tags.label == 'fast'", expect: [2, 4, 5]),
        PredicateCase("ANY tags.label ==[cd] 'electrique'", expect: [4]),
        PredicateCase("ANY tags.label IN {'fast', 'Électrique'}", expect: [1, 3, 4]),
        PredicateCase("'fast' IN tags.label", expect: [1, 3]),
        PredicateCase("tags.@count > 1", expect: [1]),
        PredicateCase("tags.@count == 0", expect: [5]),
        PredicateCase("ANY tags == 2", expect: [1, 2]),
        PredicateCase("%@ IN tags", 1, expect: [1, 3]),
        PredicateCase("tags CONTAINS %@", 3, expect: [4]),
        PredicateCase("ANY tags.label == 'fast' AND owner.name == 'Alice'", expect: [1, 3]),
        PredicateCase("NOT (ANY tags.label == 'vintage')", expect: [3, 4, 5]),
        PredicateCase("ANY tags.vehicles.name == 'Spirit'", expect: [1, 3]),
        PredicateCase("ANY owner.vehicles.name == 'Spirit'", expect: [1, 3]),
        PredicateCase("ANY vehicles.hours > 1000", entity: "Person", expect: [1]),
        PredicateCase("vehicles.@count == 0", entity: "Person", expect: [4]),
        PredicateCase("vehicles.@count >= 2", entity: "Person", expect: [1]),
        PredicateCase("ALL vehicles.active == YES", entity: "Person", expect: [1, 4]),
        PredicateCase("NONE vehicles.name BEGINSWITH 'Caf'", entity: "Person", expect: [2, 3, 4]),
        PredicateCase("vehicles.@sum.hours > 1000", entity: "Person", expect: [1]),
        PredicateCase("vehicles.@sum.hours == 0", entity: "Person", expect: [4]),
        PredicateCase("vehicles.@avg.seats == 3", entity: "Person", expect: [1]),
        PredicateCase("vehicles.@max.hours < 200", entity: "Person", expect: [2]),
        PredicateCase("vehicles.@min.name == 'Café Racer'", entity: "Person", expect: [1]),
        PredicateCase("reports.@count > 0", entity: "Person", expect: [1, 2]),
        PredicateCase("ANY reports.name == 'Zoé'", entity: "Person", expect: [2]),
        PredicateCase("ANY vehicles.tags.label == 'fast'", entity: "Person", expect: [1]),
        PredicateCase("ANY vehicles.owner.manager.name == 'Bob'", entity: "Person", expect: [3]),
        PredicateCase("ANY vehicles.name == name", entity: "Person", expect: []),
        PredicateCase("ANY vehicles.colorScheme.secondary == 'red'", entity: "Person", expect: [3]),
        PredicateCase("ANY vehicles.registered > %@", M.date("2022-01-01"), entity: "Person", expect: [3]),
        PredicateCase("ANY vehicles.colorScheme.primary ==[c] 'red'", entity: "Person", expect: [1, 2]),
        PredicateCase("ANY vehicles.tags.label == 'vintage' AND NOT (vehicles.@count > 1)", entity: "Person", expect: [2]),
        PredicateCase("ANY vehicles.owner.name == 'Alice'", entity: "Tag", expect: [1, 2]),
        PredicateCase("ANY vehicles.owner.name == 'Alice'", entity: "Person", expect: [1]),
        PredicateCase("vehicles.@count == 2", entity: "Tag", expect: [1, 2]),
    ]

    @Test(arguments: strings + numbers + scalars + keyPaths + toMany)
    func selects(_ c: PredicateCase) throws {
        let queue = try M.makeDatabase()
        let predicate = try FetchPredicate(format: c.format, arguments: c.arguments)
        let request = FetchRequest(entityName: c.entity, predicate: predicate)
        #expect(try M.primaryKeys(request, in: queue) == c.expected, "\(c.format)")
        // The rendered predicate (arguments inlined) parses back and selects the same rows.
        let reparsed = try FetchPredicate(format: predicate.description)
        #expect(try M.primaryKeys(FetchRequest(entityName: c.entity, predicate: reparsed), in: queue) == c.expected,
                "\(predicate.description)")
    }

    @Test("Hierarchy filter", arguments: [
        ("Vehicle", true, [1, 2, 3, 4, 5]),
        ("Vehicle", false, [5]),
        ("Aircraft", true, [3, 4]),
        ("Aircraft", false, [3]),
        ("Helicopter", true, [4]),
        ("Car", true, [1, 2]),
        ("Person", false, [1, 2, 3, 4]),
    ] as [(String, Bool, [Int64])])
    func hierarchy(entity: String, includesSubentities: Bool, expected: [Int64]) throws {
        let queue = try M.makeDatabase()
        let request = FetchRequest(entityName: entity, includesSubentities: includesSubentities)
        #expect(try M.primaryKeys(request, in: queue) == expected)
        var filtered = request
        filtered.predicate = try FetchPredicate(format: "name != 'Spirit'")
        #expect(try M.primaryKeys(filtered, in: queue) == (entity == "Person" ? expected : expected.filter { $0 != 3 }))
    }

    @Test func rootFetchHasNoEntityFilter() throws {
        let root = try FetchQuery.select(FetchRequest(entityName: "Vehicle"), layout: M.layout)
        #expect(!root.sql.contains("_entity\" IN"))
        #expect(!root.sql.contains("WHERE"))
        let only = try FetchQuery.select(FetchRequest(entityName: "Vehicle", includesSubentities: false), layout: M.layout)
        #expect(only.sql.contains(#"t0."_entity" = ?"#))
        #expect(only.arguments == ["Vehicle"])
        let aircraft = try FetchQuery.select(FetchRequest(entityName: "Aircraft"), layout: M.layout)
        #expect(aircraft.sql.contains(#"t0."_entity" IN (?, ?)"#))
        #expect(aircraft.arguments == ["Aircraft", "Helicopter"])
    }

    @Test func equalityOnAColumnStaysPlain() throws {
        let p = try FetchPredicate(format: "colorScheme.primary == %@ AND owner.name == %@", "red", "Alice")
        let q = try FetchQuery.selectPrimaryKeys(FetchRequest(entityName: "Vehicle", predicate: p), layout: M.layout)
        #expect(q.sql.contains(#"t0."colorScheme_primary" = ?"#))
        #expect(q.sql.contains(#"LEFT JOIN "Person" AS t1 ON t1."_pk" = t0."owner_id""#))
        #expect(q.sql.contains(#"t1."name" = ?"#))
        #expect(q.arguments == ["red", "Alice"])
    }

    @Test func argumentsAreStoredForms() throws {
        let date = M.date("2020-06-01")
        let p = try FetchPredicate(format: "registered > %@ AND active == YES AND serial == %@", date, M.serial1.uuidString.lowercased())
        let q = try FetchQuery.selectPrimaryKeys(FetchRequest(entityName: "Vehicle", predicate: p), layout: M.layout)
        #expect(q.statementArguments == StatementArguments([date.timeIntervalSince1970, 1, M.serial1.uuidString]))
    }

    @Test func joinsAreSharedAndSelfJoinsGetTheirOwnAlias() throws {
        let p = try FetchPredicate(format: "owner.name == 'Bob' AND owner.manager.name == 'Alice' AND owner.age > 1")
        let q = try FetchQuery.selectPrimaryKeys(FetchRequest(entityName: "Vehicle", predicate: p), layout: M.layout)
        #expect(q.sql.components(separatedBy: "LEFT JOIN").count == 3)
        #expect(q.sql.contains(#"LEFT JOIN "Person" AS t2 ON t2."_pk" = t1."manager_id""#))
        let queue = try M.makeDatabase()
        #expect(try M.primaryKeys(FetchRequest(entityName: "Vehicle", predicate: p), in: queue) == [2])
    }

    @Test func manyToManyUsesTheJoinTable() throws {
        let p = try FetchPredicate(format: "ANY tags.label == 'fast'")
        let q = try FetchQuery.selectPrimaryKeys(FetchRequest(entityName: "Vehicle", predicate: p), layout: M.layout)
        #expect(q.sql.contains(#"EXISTS (SELECT 1 FROM "Tag_vehicles" AS j1 JOIN "Tag" AS t2 ON t2."_pk" = j1."source_id" WHERE j1."target_id" = t0."_pk""#))
        let count = try FetchQuery.selectPrimaryKeys(
            FetchRequest(entityName: "Vehicle", predicate: try FetchPredicate(format: "tags.@count > 1")), layout: M.layout)
        #expect(count.sql.contains(#"(SELECT COUNT(*) FROM "Tag_vehicles" AS j1 WHERE j1."target_id" = t0."_pk") > ?"#))
    }

    @Test func sqlInjectionIsBound() throws {
        let queue = try M.makeDatabase()
        let evil = "'); DROP TABLE \"Vehicle\"; --"
        for format in ["name == %@", "name BEGINSWITH %@", "name CONTAINS[cd] %@", "name LIKE %@", "name IN %@", "ANY tags.label == %@"] {
            let argument: any PredicateArgument = format.contains("IN %@") ? [evil] : evil
            let request = FetchRequest(entityName: "Vehicle", predicate: try FetchPredicate(format: format, argument))
            let query = try FetchQuery.selectPrimaryKeys(request, layout: M.layout)
            #expect(!query.sql.contains("DROP"))
            #expect(try M.primaryKeys(request, in: queue) == [])
        }
        let count = try queue.read { db in try Int.fetchOne(db, sql: #"SELECT COUNT(*) FROM "Vehicle""#) }
        #expect(count == 5)
        // A keypath argument cannot smuggle SQL either: it must name a property.
        let request = FetchRequest(entityName: "Vehicle", predicate: try FetchPredicate(format: "%K == 1", "name\" = 1; DROP TABLE x; --"))
        #expect(throws: FetchPredicateError.self) { try FetchQuery.select(request, layout: M.layout) }
    }

    @Test func notTreatsNullAsFalse() throws {
        // `active == YES` is NULL for rows 4 and 5; NOT of it must still select them.
        let queue = try M.makeDatabase()
        let p = try FetchPredicate(format: "NOT active == YES")
        #expect(try M.primaryKeys(FetchRequest(entityName: "Vehicle", predicate: p), in: queue) == [2, 4, 5])
        let q = try FetchPredicate(format: "NOT (owner.name == 'Alice' OR hours < 100)")
        #expect(try M.primaryKeys(FetchRequest(entityName: "Vehicle", predicate: q), in: queue) == [4, 5])
    }

    @Test func combinatorsCompile() throws {
        let queue = try M.makeDatabase()
        let fast = try FetchPredicate(format: "ANY tags.label == 'fast'")
        let alice = FetchPredicate.comparison("owner.name", .equalTo, "Alice")
        let cases: [(FetchPredicate, [Int64])] = [
            (fast && alice, [1, 3]),
            (fast || FetchPredicate.comparison("seats", .greaterThan, 5), [1, 3, 4]),
            (!fast, [2, 4, 5]),
            (FetchPredicate.and([]), [1, 2, 3, 4, 5]),
            (FetchPredicate.or([]), []),
            (FetchPredicate.comparison("tags.label", .equalTo, "vintage", modifier: .all), [2, 5]),
            (FetchPredicate.comparison("name", .beginsWith, "CAF", options: [.caseInsensitive, .diacriticInsensitive]), [1, 2]),
        ]
        for (predicate, expected) in cases {
            #expect(try M.primaryKeys(FetchRequest(entityName: "Vehicle", predicate: predicate), in: queue) == expected,
                    "\(predicate)")
        }
    }
}
