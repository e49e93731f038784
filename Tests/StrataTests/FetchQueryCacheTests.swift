import Foundation
import GRDB
import Testing
@testable import Strata

/// ``FetchQueryCache`` gives exactly what ``FetchQuery/select(_:layout:)`` compiles, whether
/// the shape was seen before or not, and whatever the arguments.
@Suite("Compiled fetches cached by shape")
struct FetchQueryCacheTests {
    typealias M = PredicateTestModel

    /// The compiler's corpus: the cache's SQL and arguments equal the compiler's, first
    /// (compiled) and second (from the cache) time.
    @Test(arguments: PredicateCompilerTests.strings + PredicateCompilerTests.numbers + PredicateCompilerTests.scalars
        + PredicateCompilerTests.keyPaths + PredicateCompilerTests.toMany)
    func matchesTheCompiler(_ c: PredicateCase) throws {
        let cache = FetchQueryCache()
        let request = FetchRequest(entityName: c.entity, predicate: try FetchPredicate(format: c.format, arguments: c.arguments))
        let expected = try FetchQuery.select(request, layout: M.layout)
        #expect(try cache.select(request, layout: M.layout) == expected, "\(c.format)")
        #expect(try cache.select(request, layout: M.layout) == expected, "\(c.format), cached")
    }

    /// Same shape, other arguments: a format, the arguments of a first fetch, then of a second.
    static let pairs: [(String, [any PredicateArgument], [any PredicateArgument])] = [
        ("name == %@", ["Spirit"], ["Unknown"]),
        ("name == %@", ["Spirit"], [Value.null]),
        ("name != %@ AND seats > %d", ["Spirit", 2], ["x", 400]),
        ("seats > %d", [2], [Int64(99_999_999_999)]),
        ("seats == %@", [2], [2.5]),
        ("hours < %@", [2.5], [3]),
        ("hours < %@", [3], [2.5]),
        ("SELF == %@", [Int64(3)], [Int64(4)]),
        ("SELF IN %@", [PredicateList([Int64(1), Int64(2)])], [PredicateList([Int64(3), Int64(4)])]),
        ("name IN %@", [PredicateList(["a", "b"])], [PredicateList(["c", "d"])]),
        ("name IN %@", [PredicateList(["a", "b"])], [PredicateList(["c", Value.null])]),
        ("name IN %@", [PredicateList(["a", "b"])], [PredicateList(["c"])]),
        ("name BEGINSWITH %@", ["Caf"], ["Spi"]),
        ("name ==[c] %@", ["spirit"], ["CAFE LATTE"]),
        ("registered > %@", ["2020-01-01T00:00:00Z"], ["2021-06-01T00:00:00Z"]),
        ("serial == %@", [M.serial1.uuidString], [M.serial3.uuidString]),
        ("active == %@", [true], [false]),
        ("owner.name == %@ OR NOT (colorScheme.primary == %@)", ["Ann", "red"], ["Bob", "blue"]),
        ("ANY tags.label == %@", ["fast"], ["slow"]),
        ("name == %@", ["\u{1}strata.sentinel.a.0"], ["Spirit"]),
        ("seats BETWEEN %@", [PredicateList([1, 3])], [PredicateList([2, 9])]),
    ]

    /// A string sentinel is recognized from its bytes: exactly the prefix and a canonical
    /// decimal index, as the sentinel maker writes it; anything else is a value.
    @Test func stringSentinelsAreReadExactly() {
        let sentinels = ArgumentSentinels(stringPrefixes: ["\u{1}s.a.", "\u{1}s.b."], intBases: [0, 2_000_000],
                                          doubleBases: [-1, -2], doubleStep: 0.5, doubleSpan: 1)
        for index in [0, 1, 9, 10, 99, 100, 12_345, 999_999, 1_000_000] {
            for round in 0..<2 {
                let sentinel = sentinels.sentinel(for: .string("x"), index: index, round: round)!
                #expect(sentinels.index(of: sentinel, round: round) == index)
                #expect(sentinels.index(of: sentinel, round: 1 - round) == nil, "the other round's sentinel")
            }
        }
        for text in ["\u{1}s.a.", "\u{1}s.a.07", "\u{1}s.a.00", "\u{1}s.a.+7", "\u{1}s.a.-7", "\u{1}s.a.7x", "\u{1}s.a. 7",
                     "\u{1}s.a.1234567890123456789", "s.a.7", "\u{1}s.a", "", "\u{1}s.a.\u{0661}", "x\u{1}s.a.7"] {
            #expect(sentinels.index(of: .string(text), round: 0) == nil, "\(text.debugDescription)")
        }
        // Canonically equivalent to a sentinel but other bytes: a value (a full compile), not an argument.
        let composed = ArgumentSentinels(stringPrefixes: ["\u{1}\u{E9}.", "\u{1}b."], intBases: [0, 2_000_000],
                                         doubleBases: [-1, -2], doubleStep: 0.5, doubleSpan: 1)
        #expect(composed.index(of: .string("\u{1}\u{E9}.3"), round: 0) == 3)
        #expect(composed.index(of: .string("\u{1}e\u{301}.3"), round: 0) == nil)
    }

    @Test func otherArgumentsOfTheSameShape() throws {
        let queue = try M.makeDatabase()
        for (format, first, second) in Self.pairs {
            let cache = FetchQueryCache()
            for arguments in [first, second, first] {
                var request = FetchRequest(entityName: "Vehicle", predicate: try FetchPredicate(format: format, arguments: arguments))
                let cached = try cache.select(request, layout: M.layout)
                #expect(try cached == FetchQuery.select(request, layout: M.layout), "\(format) \(arguments)")
                // And it selects what the compiler's query selects.
                let keys = try queue.read { db in try Int64.fetchAll(db, sql: "SELECT _pk FROM (\(cached.sql))", arguments: cached.statementArguments) }
                #expect(try keys == M.primaryKeys(request, in: queue), "\(format) \(arguments)")
                request.fetchLimit = arguments.count + 1
                request.fetchOffset = arguments.count
                #expect(try cache.select(request, layout: M.layout) == FetchQuery.select(request, layout: M.layout), "\(format) \(arguments) windowed")
            }
        }
    }

    @Test func errorsStayTheCompilers() throws {
        let cache = FetchQueryCache()
        var request = FetchRequest(entityName: "Vehicle", predicate: try FetchPredicate(format: "name == %@", "a"), fetchLimit: 3)
        _ = try cache.select(request, layout: M.layout)
        request.fetchLimit = -1
        #expect(throws: FetchPredicateError.self) { try cache.select(request, layout: M.layout) }
        request.fetchLimit = nil
        request.fetchOffset = -2
        #expect(throws: FetchPredicateError.self) { try cache.select(request, layout: M.layout) }
        let mismatch = FetchRequest(entityName: "Vehicle", predicate: try FetchPredicate(format: "registered == %@", "not a date"))
        #expect(throws: FetchPredicateError.self) { try cache.select(mismatch, layout: M.layout) }
        #expect(throws: FetchPredicateError.self) { try cache.select(mismatch, layout: M.layout) }
    }

    /// What the parser gives for `format` with `arguments`, without the parse cache.
    static func parsed(_ format: String, _ arguments: [any PredicateArgument]) throws -> Strata.PredicateExpression {
        var parser = PredicateParser(format: format, arguments: arguments.map(\.predicateOperand), limits: .standard)
        return try parser.parse()
    }

    @Test func parsedFormatsMatchTheParser() throws {
        let corpus = PredicateCompilerTests.strings + PredicateCompilerTests.numbers + PredicateCompilerTests.scalars
            + PredicateCompilerTests.keyPaths + PredicateCompilerTests.toMany
        for c in corpus {
            for _ in 0..<2 {
                #expect(try FetchPredicate(format: c.format, arguments: c.arguments).expression == Self.parsed(c.format, c.arguments), "\(c.format)")
            }
        }
        for (format, first, second) in Self.pairs + [("%K == %@", ["name", "x"], ["serial", "y"]), ("name == %d", [3], [4])] {
            for arguments in [first, second, first] {
                let expression = try FetchPredicate(format: format, arguments: arguments).expression
                #expect(try expression == Self.parsed(format, arguments), "\(format) \(arguments)")
                #expect(expression.description == (try Self.parsed(format, arguments)).description, "\(format) \(arguments)")
            }
        }
        // A bad argument is still the parser's error.
        #expect(throws: FetchPredicateError.self) { try FetchPredicate(format: "name == %d", "x") }
        #expect(throws: FetchPredicateError.self) { try FetchPredicate(format: "name == %@ AND seats == %@", "x") }
    }
}
