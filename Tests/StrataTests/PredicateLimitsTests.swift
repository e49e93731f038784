import Foundation
import GRDB
import Testing
@testable import Strata

/// Predicates from outside (a daemon client, `stratactl --where`) cannot exhaust the stack,
/// stall the compiler or reach SQLite past its limits: each bound gives a
/// `FetchPredicateError.limitExceeded` naming the limit.
@Suite("Predicate limits")
struct PredicateLimitsTests {
    /// `Node`: a chain of to-one relationships (`next`, `left`, `right`) and a value.
    static let chainModel = ObjectModel(version: "Chain 1", entities: [
        Entity("Node",
               attributes: [Attribute("value", .int64)],
               relationships: [
                   Relationship("next", destination: "Node"),
                   Relationship("left", destination: "Node"),
                   Relationship("right", destination: "Node"),
               ]),
    ])
    static let layout = StorageLayout(model: chainModel)
    static let limits = PredicateLimits.standard

    func parse(_ format: String, _ arguments: [any PredicateArgument] = []) throws(FetchPredicateError) -> FetchPredicate {
        try FetchPredicate(format: format, arguments: arguments)
    }

    func select(_ predicate: FetchPredicate, sort: [FetchSortDescriptor] = []) throws(FetchPredicateError) -> SQLFragment {
        try FetchQuery.select(FetchRequest(entityName: "Node", predicate: predicate, sortDescriptors: sort), layout: Self.layout)
    }

    func expectLimit(_ name: String, _ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            try body()
            Issue.record("accepted past \(name)", sourceLocation: sourceLocation)
        } catch let error as FetchPredicateError {
            #expect(error.code == .limitExceeded, "\(error)", sourceLocation: sourceLocation)
            #expect(error.reason.contains(name), "\(error.reason)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }

    // MARK: - Nesting (found as a SIGSEGV in the daemon and in stratactl fetch/count)

    @Test("4 KB of nesting is refused with the limit's name", arguments: [
        String(repeating: "(", count: 4096) + "value == 1" + String(repeating: ")", count: 4096),
        String(repeating: "NOT ", count: 1024) + "value == 1",
        String(repeating: "!", count: 4096) + "value == 1",
        "value IN " + String(repeating: "{", count: 4096) + "1" + String(repeating: "}", count: 4096),
        String(repeating: "(NOT ", count: 1000) + "value == 1" + String(repeating: ")", count: 1000),
    ])
    func deepNestingIsRefused(format: String) {
        expectLimit("maxNestingDepth") { _ = try parse(format) }
    }

    @Test("The error points at the first level past the limit")
    func nestingErrorPosition() throws {
        let format = String(repeating: "(", count: 150) + "value == 1" + String(repeating: ")", count: 150)
        let error = try #require(throws: FetchPredicateError.self) { try parse(format) }
        #expect(error.position == Self.limits.maxNestingDepth)
        #expect(error.reason.contains("\(Self.limits.maxNestingDepth) levels"))
    }

    @Test("Nesting up to the limit parses, compiles and runs")
    func nestingAtTheLimitWorks() throws {
        let depth = Self.limits.maxNestingDepth
        let parens = String(repeating: "(", count: depth) + "value == 1" + String(repeating: ")", count: depth)
        let nots = String(repeating: "NOT ", count: depth) + "value == 1"
        let alternating = (0..<8).map { _ in "(value == 1 OR (value == 2 AND " }.joined() + "value == 3" + String(repeating: "))", count: 8)
        let store = TemporaryStore()
        let opened = try store.open(Self.chainModel)
        let context = ObjectContext(store: opened)
        for value in [1, 2, 3] { _ = try context.insert("Node", values: ["value": Int64(value)]) }
        try context.save()
        #expect(try context.fetch(FetchRequest(entityName: "Node", predicate: parse(parens))).count == 1)
        #expect(try context.fetch(FetchRequest(entityName: "Node", predicate: parse(nots))).count == 1)  // even count of NOTs
        #expect(try context.fetch(FetchRequest(entityName: "Node", predicate: parse(alternating))).count == 1)
    }

    @Test("A shape within the limits that SQLite's parser cannot take gives a limit error, not a store failure")
    func sqliteParserLimitIsAPredicateError() throws {
        let pairs = Self.limits.maxNestingDepth / 2
        let format = (0..<pairs).map { _ in "(value == 1 OR (value == 2 AND " }.joined() + "value == 3" + String(repeating: "))", count: pairs)
        let store = TemporaryStore()
        let context = ObjectContext(store: try store.open(Self.chainModel))
        _ = try context.insert("Node", values: ["value": Int64(1)])
        try context.save()
        for run in [{ try context.fetch(FetchRequest(entityName: "Node", predicate: parse(format))).count },
                    { try context.count(FetchRequest(entityName: "Node", predicate: parse(format))) }] {
            do {
                #expect(try run() == 1)  // a SQLite whose parser stack grows runs it
            } catch let error as FetchPredicateError {
                #expect(error.code == .limitExceeded)
                #expect(error.reason.contains("parser stack overflow"), "\(error.reason)")
                #expect(error.reason.contains("flatten it"))
            }
        }
    }

    @Test("A tree built in code nested too deep is refused by the compiler")
    func deepTreeFromCodeIsRefused() {
        var expression = PredicateExpression.comparison(PredicateComparison(.keyPath("value"), .equalTo, .value(.int(1))))
        for _ in 0..<1000 { expression = .not(expression) }
        let predicate = FetchPredicate(expression)
        expectLimit("maxNestingDepth") { _ = try select(predicate) }
    }

    @Test("A format longer than maxFormatLength is refused before lexing")
    func longFormatIsRefused() throws {
        let format = "value IN {" + Array(repeating: "1", count: 40_000).joined(separator: ",") + "}"
        #expect(format.utf8.count > Self.limits.maxFormatLength)
        let error = try #require(throws: FetchPredicateError.self) { try parse(format) }
        #expect(error.code == .limitExceeded)
        #expect(error.reason.contains("maxFormatLength"))
        #expect(error.description.utf8.count < 1000)  // the message does not repeat the whole format
    }

    // MARK: - Keypaths (1,500 hops took ~cubic time and stalled the daemon)

    @Test("A to-one chain of 1,500 hops is refused, naming maxKeyPathComponents")
    func longKeyPathIsRefused() throws {
        let keyPath = Array(repeating: "next", count: 1500).joined(separator: ".") + ".value"
        let predicate = try parse("\(keyPath) == 1")
        let error = try #require(throws: FetchPredicateError.self) { try select(predicate) }
        #expect(error.code == .limitExceeded)
        #expect(error.reason.contains("1501 components"))
        #expect(error.reason.contains("maxKeyPathComponents"))
        #expect(error.reason.utf8.count < 600)  // the keypath is abbreviated in the message
        // Also through %K and as a sort key.
        expectLimit("maxKeyPathComponents") { _ = try select(parse("%K == 1", [keyPath])) }
        expectLimit("maxKeyPathComponents") { _ = try select(.true, sort: [FetchSortDescriptor(keyPath)]) }
    }

    @Test("The longest allowed to-one chain compiles and runs in SQLite")
    func longestKeyPathRuns() throws {
        let hops = Self.limits.maxKeyPathComponents - 1
        let store = TemporaryStore()
        let opened = try store.open(Self.chainModel)
        let context = ObjectContext(store: opened)
        var nodes: [ManagedObject] = []
        for value in 0...hops {
            nodes.append(try context.insert("Node", values: ["value": Int64(value)]))
        }
        for (i, node) in nodes.dropLast().enumerated() { try node.setObject(nodes[i + 1], forRelationship: "next") }
        try context.save()
        let keyPath = Array(repeating: "next", count: hops).joined(separator: ".") + ".value"
        let found = try context.fetch(FetchRequest(entityName: "Node", predicate: parse("\(keyPath) == %d", [Int64(hops)])))
        #expect(found.map { $0["value"] } == [.int(0)])
    }

    @Test("More than maxJoinedTables distinct to-one hops in one query are refused")
    func tooManyJoinsAreRefused() throws {
        let chain = { (name: String) in Array(repeating: name, count: 31).joined(separator: ".") + ".value == 1" }
        // left×31 and right×31 are 62 joins; right.left and right.right need two more.
        let format = [chain("left"), chain("right"), "right.left.value == 1", "right.right.left.value == 1"].joined(separator: " OR ")
        let predicate = try parse(format)
        let error = try #require(throws: FetchPredicateError.self) { try select(predicate) }
        #expect(error.code == .limitExceeded)
        #expect(error.reason.contains("maxJoinedTables"))
        #expect(error.reason.contains("SQLite joins at most 64 tables"))
        // Shared prefixes share their joins: 62 joins are fine.
        _ = try select(parse([chain("left"), chain("right")].joined(separator: " OR ")))
    }

    // MARK: - Request size

    @Test("More sort keys than maxSortDescriptors are refused")
    func tooManySortKeys() {
        let sort = Array(repeating: FetchSortDescriptor("value"), count: Self.limits.maxSortDescriptors + 1)
        expectLimit("maxSortDescriptors") { _ = try select(.true, sort: sort) }
    }

    @Test("More bound values than SQLite takes are refused before SQLite sees them")
    func tooManyBoundValues() throws {
        let values: [any PredicateArgument] = (0...Int64(Self.limits.maxBoundValues)).map { $0 }
        let predicate = try parse("value IN %@", [PredicateList(values)])
        expectLimit("maxBoundValues") { _ = try select(predicate) }
        let fewer = try parse("value IN %@", [PredicateList(Array(values.prefix(1000)))])
        _ = try select(fewer)
    }
}
