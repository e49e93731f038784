import Foundation
import Testing
@testable import StrataVarlink

/// What ``JSONValueDecoder`` accepts and how it names what it refuses: the key path of the
/// first offending value (`operations[1].op`) and why — a missing key, a mistyped or null
/// value, a number out of range, a key the type does not declare (the first in key order of
/// the first object opened), at every depth; dictionaries take any key.
@Suite struct JSONValueDecoderTests {
    typealias Batch = StrataStore.Batch.Parameters

    static func value(_ text: String) throws -> JSONValue { try JSONValueParser.parse(Data(text.utf8)) }

    /// The error decoding `text` as `T`, as "path: reason"; nil when it decodes.
    static func failure<T: Decodable>(_ type: T.Type, _ text: String, rejectsUnknownKeys: Bool = true) throws -> String? {
        let parsed = try value(text)
        do {
            _ = try JSONValueDecoder(rejectsUnknownKeys: rejectsUnknownKeys).decode(type, from: parsed)
            return nil
        } catch {
            return "\(error.path): \(error.reason)"
        }
    }

    @Test func decodesNestedStructsArraysEnumsAndObjects() throws {
        let decoded = try JSONValueDecoder().decode(Batch.self, from: try Self.value(
            #"{"store":"s","operations":[{"op":"insert","entity":"A","values":{"x":1,"y":[true,null]}},{"op":"delete","entity":"A","id":3,"values":null}],"author":null}"#))
        #expect(decoded == Batch(store: "s", operations: [
            .init(op: .insert, entity: "A", values: .object(["x": .int(1), "y": .array([.bool(true), .null])])),
            .init(op: .delete, entity: "A", id: 3),
        ]))
        let fetch = try JSONValueDecoder().decode(StrataStore.Fetch.Parameters.self, from: try Self.value(
            #"{"store":"s","entity":"E","predicate":"SELF == %@","arguments":[5,"x",1.5,null],"sort":["-a","b"],"limit":10,"offset":0}"#))
        #expect(fetch == .init(store: "s", entity: "E", predicate: "SELF == %@", arguments: [.int(5), .string("x"), .double(1.5), .null],
                               sort: ["-a", "b"], limit: 10, offset: 0))
    }

    @Test func namesWhatIsWrongByItsPath() throws {
        let cases: [(String, String)] = [
            (#"{"operations":[]}"#, "store: missing"),
            (#"{"store":null,"operations":[]}"#, "store: null for a required value"),
            (#"{"store":1,"operations":[]}"#, "store: expected a string, found int"),
            (#"{"store":"s","operations":{}}"#, "operations: expected an array, found object"),
            (#"{"store":"s","operations":[{"entity":"A"}]}"#, "operations[0].op: missing"),
            (#"{"store":"s","operations":[{"op":"insert","entity":"A"},{"op":"upsert","entity":"A"}]}"#,
             "operations[1].op: Cannot initialize Kind from invalid String value upsert"),
            (#"{"store":"s","operations":[{"op":"delete","entity":"A","id":1.5}]}"#, "operations[0].id: expected an integer, found float"),
            (#"{"store":"s","operations":[{"op":"delete","entity":"A","id":"3"}]}"#, "operations[0].id: expected an integer, found string"),
            (#"{"store":"s","operations":[{"op":"insert","entity":"A"},{"op":"insert","entity":"A"},null]}"#, "operations[2]: null in an array"),
            (#"{"store":"s","operations":[{"op":"insert","entity":"A"},{"op":"insert","entity":"A","extra":1}]}"#, "operations[1].extra: not a known parameter"),
            (#"{"store":"s","operations":[{"op":"insert","entity":"A","zz":1,"aa":2}]}"#, "operations[0].aa: not a known parameter"),
            (#"{"store":"s","zzz":0,"operations":[{"op":"insert","entity":"A","aaa":1}]}"#, "zzz: not a known parameter"),
            (#"[1]"#, ": expected an object, found array"),
        ]
        for (text, expected) in cases {
            let actual = try Self.failure(Batch.self, text)
            #expect(actual == expected, "\(text) → \(actual ?? "decoded")")
        }
        let sort = try Self.failure(StrataStore.Fetch.Parameters.self, #"{"store":"s","entity":"E","sort":["a",2]}"#)
        #expect(sort == "sort[1]: expected a string, found int", "\(sort ?? "decoded")")
        // An exponent that leaves an integer is one (as Foundation's JSONSerialization reads it).
        #expect(try JSONValueDecoder().decode(StrataStore.Fetch.Parameters.self, from: try Self.value(#"{"store":"s","entity":"E","limit":1e3}"#)).limit == 1000)
        let limit = try Self.failure(StrataStore.Fetch.Parameters.self, #"{"store":"s","entity":"E","limit":1.5e0}"#)
        #expect(limit == "limit: expected an integer, found float", "\(limit ?? "decoded")")
    }

    @Test func unknownKeysPassWhenAskedAndDictionariesTakeAnyKey() throws {
        #expect(try Self.failure(Batch.self, #"{"store":"s","new":1,"operations":[{"op":"insert","entity":"A","later":2}]}"#,
                                 rejectsUnknownKeys: false) == nil)
        let stats = #"{"runs":1,"workSeconds":0.5,"delaySeconds":0,"windowRuntimeSeconds":0,"rowsProcessed":7,"batches":2,"tasksFinished":1,"pauses":3,"#
            + #""pausesByCause":{"requests":2,"cpu pressure":1},"pauseLatencyP50Ms":1,"pauseLatencyP99Ms":2,"pauseLatencyMaxMs":3,"recentPauses":[],"errors":0}"#
        let decoded = try JSONValueDecoder().decode(StrataAdmin.SchedulerStats.self, from: try Self.value(stats))
        #expect(decoded.pausesByCause == ["requests": 2, "cpu pressure": 1])
        #expect(decoded.rowsProcessed == 7 && decoded.lastError == nil)
        let mistyped = try Self.failure(StrataAdmin.SchedulerStats.self, stats.replacingOccurrences(of: #""cpu pressure":1"#, with: #""cpu pressure":1.5"#))
        #expect(mistyped == "pausesByCause.cpu pressure: expected an integer, found float", "\(mistyped ?? "decoded")")
    }
}
