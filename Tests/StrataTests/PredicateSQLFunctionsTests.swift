import Foundation
import GRDB
import Testing
@testable import Strata

@Suite("SQL functions used by predicates")
struct PredicateSQLFunctionsTests {
    private func value(_ sql: String, _ arguments: StatementArguments = []) throws -> DatabaseValue {
        var configuration = Configuration()
        configuration.prepareDatabase { db in SQLFunctions.register(in: db) }
        let queue = try DatabaseQueue(configuration: configuration)
        return try queue.read { db in try DatabaseValue.fetchOne(db, sql: "SELECT " + sql, arguments: arguments)! }
    }

    static let cases: [(String, Value)] = [
        ("strata_fold('Café ÉTÉ', 1)", Value.string("café été")),
        ("strata_fold('Café ÉTÉ', 2)", .string("Cafe ETE")),
        ("strata_fold('Café ÉTÉ', 3)", .string("cafe ete")),
        ("strata_fold('Café', 0)", .string("Café")),
        ("strata_fold(NULL, 3)", .null),
        ("strata_fold(42, 3)", .int(42)),
        ("strata_beginswith('Écureuil', 'ec', 3)", .int(1)),
        ("strata_beginswith('Écureuil', 'ec', 1)", .int(0)),
        ("strata_beginswith(NULL, 'ec', 1)", .null),
        ("strata_endswith('Café', 'FE', 3)", .int(1)),
        ("strata_endswith('Café', 'fé', 0)", .int(1)),
        ("strata_endswith('Café', 'fe', 0)", .int(0)),
        ("strata_contains('Crème brûlée', 'BRULEE', 3)", .int(1)),
        ("strata_contains('abc', '', 0)", .int(1)),
        ("strata_like('a*b', 'a\\*b', 0)", .int(1)),
        ("strata_like('axb', 'a\\*b', 0)", .int(0)),
        ("strata_like('abcabd', '*ab?', 0)", .int(1)),
        ("strata_like('', '*', 0)", .int(1)),
        ("strata_like('abc', 'a*c*', 0)", .int(1)),
        ("strata_like('Zoé', 'zo?', 0)", .int(0)),
        ("strata_like('Zoé', 'zo?', 1)", .int(1)),
        ("strata_matches('abc123', '[a-z]+\\d+', 0)", .int(1)),
        ("strata_matches('abc123x', '[a-z]+\\d+', 0)", .int(0)),
        ("strata_matches('ab', 'a|ab', 0)", .int(1)),
        ("strata_matches('ÉTÉ', 'ete', 3)", .int(1)),
    ]

    @Test("Functions", arguments: cases)
    func functions(_ sql: String, _ expected: Value) throws {
        #expect(Value(databaseValue: try value(sql)) == expected)
    }

    @Test func invalidRegexAtRunTimeIsAnSQLError() throws {
        #expect(throws: DatabaseError.self) { try value("strata_matches('a', '(', 0)") }
    }

    @Test("Prefix upper bounds", arguments: [
        ("abc", "abd" as String?), ("É", "Ê"), ("a\u{D7FF}", "a\u{E000}"), ("a\u{10FFFF}", nil), ("", nil),
    ] as [(String, String?)])
    func prefixUpperBound(_ prefix: String, _ bound: String?) {
        #expect(PredicateCompiler.prefixUpperBound(prefix) == bound)
    }

    @Test func prefixWithoutUpperBoundFallsBackToInstr() throws {
        let p = try FetchPredicate(format: "name BEGINSWITH %@", "a\u{10FFFF}")
        let q = try FetchQuery.selectPrimaryKeys(FetchRequest(entityName: "Vehicle", predicate: p), layout: PredicateTestModel.layout)
        #expect(q.sql.contains(#"instr(t0."name", ?) = 1"#))
    }
}
