import Foundation
import GRDB
import Testing
@testable import Strata

@Suite("FetchQuery: sorting, windows, counts, plans and semantic errors")
struct FetchQueryTests {
    typealias M = PredicateTestModel

    // MARK: - Sorting

    @Test("Sort descriptors", arguments: [
        ("name", [1, 3, 5, 2, 4]),                       // binary: uppercase, then lowercase, then É
        ("name:ci", [2, 1, 3, 5, 4]),                    // folded: cafe latte, café racer, spirit, unknown, écureuil
        ("name:desc", [4, 2, 5, 3, 1]),
        ("hours:desc", [3, 4, 1, 2, 5]),                 // nil last when descending
        ("hours", [5, 2, 1, 4, 3]),                      // nil first when ascending
        ("colorScheme.primary", [5, 2, 3, 1, 4]),
        ("colorScheme.primary:ci", [5, 3, 1, 2, 4]),     // blue, red (1 before 2 by the pk tiebreak), white
        ("owner.name, name", [5, 1, 3, 2, 4]),
        ("owner.name:desc, name:desc", [4, 2, 3, 1, 5]),
        ("owner.manager.name, name", [1, 3, 5, 2, 4]),
        ("seats", [5, 1, 2, 3, 4]),
        ("seats:desc", [4, 2, 3, 1, 5]),                 // ties (2, 3) in primary key order
        ("tags.@count:desc", [1, 2, 3, 4, 5]),
        ("-registered", [4, 2, 1, 3, 5]),
        ("owner", [5, 1, 3, 2, 4]),
    ] as [(String, [Int64])])
    func sorting(_ sort: String, expected: [Int64]) throws {
        let queue = try M.makeDatabase()
        let request = FetchRequest(entityName: "Vehicle", sortDescriptors: try FetchSortDescriptor.list(parsing: sort))
        #expect(try M.primaryKeys(request, in: queue) == expected)
    }

    @Test func sortingWithAPredicateAndASubEntity() throws {
        let queue = try M.makeDatabase()
        let request = FetchRequest(entityName: "Aircraft", predicate: try FetchPredicate(format: "wingspan > 10"),
                                   sortDescriptors: [FetchSortDescriptor("wingspan", ascending: false)])
        #expect(try M.primaryKeys(request, in: queue) == [4, 3])
    }

    @Test func tiebreakIsOnThePrimaryKey() throws {
        let q = try FetchQuery.select(FetchRequest(entityName: "Vehicle", sortDescriptors: [FetchSortDescriptor("seats")]),
                                      layout: M.layout)
        #expect(q.sql.hasSuffix(#"ORDER BY t0."seats", t0."_pk""#))
        let ci = try FetchQuery.select(
            FetchRequest(entityName: "Vehicle", sortDescriptors: [FetchSortDescriptor("name", caseInsensitive: true)]), layout: M.layout)
        #expect(ci.sql.contains(#"ORDER BY strata_fold(t0."name", 1), t0."_pk""#))
    }

    // MARK: - Windows and counts

    @Test("Limit and offset", arguments: [
        (nil, 0, [1, 2, 3, 4, 5]),
        (2, 0, [1, 2]),
        (2, 1, [2, 3]),
        (nil, 3, [4, 5]),
        (10, 4, [5]),
        (0, 0, []),
        (3, 7, []),
    ] as [(Int?, Int, [Int64])])
    func window(limit: Int?, offset: Int, expected: [Int64]) throws {
        let queue = try M.makeDatabase()
        let request = FetchRequest(entityName: "Vehicle", fetchLimit: limit, fetchOffset: offset)
        #expect(try M.primaryKeys(request, in: queue) == expected)
        let count = try FetchQuery.count(request, layout: M.layout)
        #expect(try queue.read { db in try Int.fetchOne(db, sql: count.sql, arguments: count.statementArguments) } == expected.count)
    }

    @Test("Count", arguments: [
        ("Vehicle", "TRUEPREDICATE", nil, 5),
        ("Vehicle", "hours > 100", nil, 3),
        ("Vehicle", "hours > 100", 2, 2),
        ("Vehicle", "ANY tags.label == 'vintage'", nil, 2),
        ("Aircraft", "TRUEPREDICATE", nil, 2),
        ("Person", "vehicles.@count > 0", nil, 3),
        ("Person", "vehicles.@count > 0", 10, 3),
    ] as [(String, String, Int?, Int)])
    func count(entity: String, format: String, limit: Int?, expected: Int) throws {
        let queue = try M.makeDatabase()
        let request = FetchRequest(entityName: entity, predicate: try FetchPredicate(format: format),
                                   sortDescriptors: [FetchSortDescriptor("name")], fetchLimit: limit)
        let query = try FetchQuery.count(request, layout: M.layout)
        #expect(!query.sql.contains("ORDER BY"))
        #expect(try queue.read { db in try Int.fetchOne(db, sql: query.sql, arguments: query.statementArguments) } == expected)
    }

    @Test func selectReturnsEveryColumnOfTheTable() throws {
        let queue = try M.makeDatabase()
        let request = FetchRequest(entityName: "Vehicle", predicate: try FetchPredicate(format: "owner.name == 'Zoé'"))
        let query = try FetchQuery.select(request, layout: M.layout)
        let rows = try queue.read { db in try Row.fetchAll(db, sql: query.sql, arguments: query.statementArguments) }
        #expect(rows.count == 1)
        let row = try #require(rows.first)
        #expect(Array(row.columnNames) == M.layout.tables["Vehicle"]!.columns.map(\.name))
        #expect(row["_pk"] as Int64? == 4)
        #expect(row["tailNumber"] as String? == "F-HBXA")
        #expect(row["colorScheme_primary"] as String? == "white")
    }

    // MARK: - Index usage

    private func plan(_ format: String, _ arguments: any PredicateArgument..., sort: [FetchSortDescriptor] = []) throws -> String {
        let queue = try M.makeDatabase()
        let request = FetchRequest(entityName: "Vehicle", predicate: try FetchPredicate(format: format, arguments: arguments),
                                   sortDescriptors: sort)
        let query = try FetchQuery.select(request, layout: M.layout)
        return try queue.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + query.sql, arguments: query.statementArguments)
                .map { $0["detail"] as String? ?? "" }.joined(separator: "\n")
        }
    }

    @Test func compositeLeafEqualityUsesItsIndex() throws {
        let detail = try plan("colorScheme.primary == %@", "red")
        #expect(detail.contains("USING INDEX Vehicle_byPrimaryColor (colorScheme_primary=?)"), "\(detail)")
        let queue = try M.makeDatabase()
        #expect(try M.primaryKeys(FetchRequest(entityName: "Vehicle", predicate: try FetchPredicate(format: "colorScheme.primary == %@", "red")), in: queue) == [1])
    }

    @Test func prefixSearchAndInUseTheIndex() throws {
        let prefix = try plan("colorScheme.primary BEGINSWITH %@", "re")
        #expect(prefix.contains("USING INDEX Vehicle_byPrimaryColor (colorScheme_primary>? AND colorScheme_primary<?)"), "\(prefix)")
        let list = try plan("colorScheme.primary IN %@", ["red", "blue"])
        #expect(list.contains("USING INDEX Vehicle_byPrimaryColor (colorScheme_primary=?)"), "\(list)")
        let toOne = try plan("owner == %@", 1)
        #expect(toOne.contains("USING INDEX Vehicle_owner_id (owner_id=?)"), "\(toOne)")
    }

    // MARK: - Semantic errors

    private func compileError(_ format: String, _ arguments: any PredicateArgument..., entity: String = "Vehicle") throws -> FetchPredicateError {
        let predicate = try FetchPredicate(format: format, arguments: arguments)
        do {
            _ = try FetchQuery.select(FetchRequest(entityName: entity, predicate: predicate), layout: M.layout)
        } catch {
            return error
        }
        Issue.record("'\(format)' compiled without error")
        return FetchPredicateError(.syntax, "")
    }

    @Test func unknownKeyPathNamesEntityKeyPathAndSuggestions() throws {
        let e = try compileError("nmae == 'x'")
        #expect(e.code == .unknownKeyPath)
        #expect(e.entity == "Vehicle")
        #expect(e.keyPath == "nmae")
        #expect(e.position == 0)
        #expect(e.reason.contains("entity 'Vehicle' has no property 'nmae'"))
        #expect(e.reason.contains("did you mean 'name'?"))

        let hop = try compileError("hours > 1 AND owner.nmae == %@", "x")
        #expect(hop.code == .unknownKeyPath)
        #expect(hop.position == 14)
        #expect(hop.reason.contains("entity 'Person' (reached through 'owner') has no property 'nmae' (in keypath 'owner.nmae')"))
        #expect(hop.reason.contains("'name'"))
        #expect(hop.description.contains("hours > 1 AND owner.nmae == %@\n                  ^"))

        let sub = try compileError("wingspan > 3")
        #expect(sub.reason.contains("declared on the sub-entity 'Aircraft'"))

        let leaf = try compileError("colorScheme.primry == 'red'")
        #expect(leaf.reason.contains("did you mean 'colorScheme.primary'?"))

        let whole = try compileError("colorScheme == 'red'")
        #expect(whole.code == .invalidOperator)
        #expect(whole.reason.contains("colorScheme.primary, colorScheme.secondary, colorScheme.trim.finish"))
    }

    @Test("Aggregate errors", arguments: [
        ("ANY owner.name == 'x'", 4),
        ("ALL name == 'x'", 4),
        ("NONE tags.@count == 1", 5),
        ("tags == nil", 0),
        ("name.@count > 1", 0),
        ("owner.@count > 1", 0),
        ("name == tags.label", 8),
    ] as [(String, Int)])
    func aggregateErrors(_ format: String, position: Int) throws {
        let e = try compileError(format)
        #expect(e.code == .invalidAggregate, "\(e)")
        #expect(e.position == position, "\(e)")
    }

    @Test("Type and operator errors", arguments: [
        ("seats == 'four'", FetchPredicateError.Code.typeMismatch, 9, "'seats' is an int32 attribute of 'Vehicle'"),
        ("registered > 'yesterday'", .typeMismatch, 13, "Pass a Date"),
        ("active == 'yes'", .typeMismatch, 10, "'active' is a bool attribute"),
        ("serial == 42", .typeMismatch, 10, "Pass a UUID"),
        ("owner == 'Alice'", .typeMismatch, 9, "'owner', a to-one relationship to 'Person', can only be compared with nil"),
        ("seats BEGINSWITH '4'", .invalidOperator, 0, "BEGINSWITH compares strings, but 'seats' is an int32 attribute"),
        ("name CONTAINS 4", .typeMismatch, 14, "CONTAINS compares strings"),
        ("hours ==[c] 1", .invalidOperator, 0, "[c] compares strings"),
        ("name < nil", .invalidOperator, 5, "< cannot compare with nil"),
        ("name MATCHES '(['", .invalidOperator, 13, "the MATCHES pattern is refused at byte 1 of the pattern ([)"),
        ("name MATCHES '(a)\\\\1'", .invalidOperator, 13, "MATCHES takes RE2 syntax, which has no backreferences or lookaround"),
        ("name MATCHES 'x(?=y)'", .invalidOperator, 13, "the MATCHES pattern is refused at byte 1 of the pattern"),
        ("name == hours", .typeMismatch, 5, "cannot compare 'name' (a string attribute of 'Vehicle') with 'hours' (a double attribute of 'Vehicle')"),
        ("ANY vehicles.hours > 'x'", .typeMismatch, 21, "'hours' is a double attribute of 'Vehicle'"),
    ] as [(String, FetchPredicateError.Code, Int, String)])
    func typeErrors(_ format: String, code: FetchPredicateError.Code, position: Int, message: String) throws {
        let e = try compileError(format, entity: format.contains("vehicles") ? "Person" : "Vehicle")
        #expect(e.code == code, "\(e)")
        #expect(e.position == position, "\(e)")
        #expect(e.reason.contains(message), "\(e)")
    }

    @Test func requestErrors() throws {
        #expect {
            try FetchQuery.select(FetchRequest(entityName: "Vehicel"), layout: M.layout)
        } throws: { error in
            let e = error as! FetchPredicateError
            return e.code == .unknownEntity && e.reason.contains("did you mean 'Vehicle'?")
        }
        #expect {
            try FetchQuery.select(FetchRequest(entityName: "Vehicle", fetchLimit: -1), layout: M.layout)
        } throws: { ($0 as! FetchPredicateError).code == .invalidRequest }
        #expect {
            try FetchQuery.select(FetchRequest(entityName: "Vehicle", sortDescriptors: [FetchSortDescriptor("tags.label")]), layout: M.layout)
        } throws: { error in
            let e = error as! FetchPredicateError
            return e.code == .invalidAggregate && e.reason.contains("sort by tags.@count")
        }
        #expect {
            try FetchQuery.select(FetchRequest(entityName: "Vehicle", sortDescriptors: [FetchSortDescriptor("nmae")]), layout: M.layout)
        } throws: { error in
            let e = error as! FetchPredicateError
            return e.code == .unknownKeyPath && e.format == "nmae" && e.reason.contains("did you mean 'name'?")
        }
    }
}
