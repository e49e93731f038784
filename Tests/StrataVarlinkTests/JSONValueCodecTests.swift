import Foundation
import Testing
@testable import StrataVarlink

/// The hand-written JSON parser and writer (``JSONValueParser``, ``JSONValueWriter``) give
/// what Foundation's `JSONDecoder` and `JSONEncoder` gave for ``JSONValue``, which they replaced
/// on every Varlink message.
@Suite struct JSONValueCodecTests {
    /// What `JSONDecoder` makes of `text` through `JSONValue`'s `Codable` conformance.
    static func foundationDecode(_ text: Data) -> JSONValue? { try? JSONDecoder().decode(JSONValue.self, from: text) }

    static func foundationEncode(_ value: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    static let documents = [
        "1", "-0", "-0.0", "1.0", "1e2", "0.1e1", "1.5", "2.5e0", "1e-400", "1.0000000000000002", "0e0",
        "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
        "12345678901234567890123", "100000000000000000000.0", " 1 ", "\u{FEFF}1",
        "true", "false", "null", "\"\"", "\"a\\\"b\\\\c\\/d\\n\\t\\r\\b\\f\\u0001\\u00e9\\ud83d\\ude00\"", "\"é😀\u{7F}\"",
        "[]", "{}", "[1,]", "{\"a\":1,}", "{\"a\":1,\"a\":2}", "[1, [2, {\"x\": [null, true]}], \"s\"]",
        "{\"method\":\"io.strata.Store.Fetch\",\"parameters\":{\"store\":\"bench\",\"arguments\":[42]},\"more\":false}",
        // Not JSON:
        "", " ", "01", "1.", "-", ".5", "+1", "1e", "1E400", "-1E400", "tru", "nul", "nan", "[1", "[1 2]", "{\"a\" 1}", "{a:1}",
        "{\"a\":1", "\"abc", "\"a\tb\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\\x\"", "\"\\u12G4\"", "1 2", "[,]", "{,}",
    ]

    @Test("the parser reads every document as JSONDecoder did, and refuses what it refused")
    func parserMatchesFoundation() throws {
        for document in Self.documents {
            let data = Data(document.utf8)
            let expected = Self.foundationDecode(data)
            let parsed = try? JSONValue.decode(data)
            #expect(parsed == expected, "\(document.debugDescription): parsed \(String(describing: parsed)), JSONDecoder \(String(describing: expected))")
        }
    }

    @Test("invalid UTF-8 in a string is refused")
    func invalidUTF8() {
        var data = Data("\"a".utf8)
        data.append(0xFF)
        data.append(contentsOf: Array("\"".utf8))
        #expect(throws: (any Error).self) { try JSONValue.decode(data) }
        #expect(Self.foundationDecode(data) == nil)
    }

    @Test("nesting past 512 levels is an error, not a stack overflow")
    func deepNesting() throws {
        let shallow = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(try JSONValue.decode(Data(shallow.utf8)) != .null)
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: (any Error).self) { try JSONValue.decode(Data(deep.utf8)) }
    }

    @Test("the writer writes what JSONEncoder wrote, byte for byte")
    func writerMatchesFoundation() {
        let values: [JSONValue] = [
            .null, true, false, 0, -1, .int(Int64.max), .int(Int64.min),
            3.0, 1.5, 1e20, 1e-7, 0.1, -0.0, 1e16, 1e15, 5e-324, 1.7976931348623157e308, 100, 0.000001, 0.0001, 123456.789,
            "", "a\"b\\c/d\n\t\r\u{8}\u{C}\u{1}\u{1F}\u{7F}é\u{2028}😀",
            ["b": 1, "a10": 2, "a2": 3, "B": 4, "a": nil, "é": 5, "Z": 6, "_pk": 7, "aa": true],
            [], [:], [[1, [2.5, "x"]], ["k": ["n": nil]]],
            .double(.nan), ["x": .double(.infinity)],
        ]
        for value in values {
            #expect(String(decoding: value.encoded(), as: UTF8.self) == Self.foundationEncode(value), "\(Self.foundationEncode(value))")
        }
    }

    @Test("encoding then parsing gives the value back")
    func roundTrip() throws {
        let value: JSONValue = ["objects": [["_pk": 12, "name": "Zoé \"quoted\"\n", "hours": 1.25, "flag": false, "none": nil]]]
        #expect(try JSONValue.decode(value.encoded()) == value)
    }

    @Test("Foundation objects convert directly, integral doubles becoming integers as through JSON text")
    func foundationConversion() {
        let object: [String: Any] = ["s": "x", "i": Int64(3), "n": 4, "d": 2.5, "whole": 3.0, "b": true, "null": NSNull(),
                                     "nested": ["k": [1, "two"] as [Any]] as [String: Any]]
        let expected: JSONValue = ["s": "x", "i": 3, "n": 4, "d": 2.5, "whole": 3, "b": true, "null": nil, "nested": ["k": [1, "two"]]]
        #expect(JSONValue(foundation: object) == expected)
        let back = expected.foundationObject as? [String: Any]
        #expect((back?["d"] as? NSNumber)?.doubleValue == 2.5)
        #expect(back?["s"] as? String == "x")
        #expect(back?["null"] is NSNull)
    }

    @Test("types other than the ones jsonObject makes still convert as before")
    func foundationConversionOfOtherTypes() {
        let object: [String: Any] = ["number": NSNumber(value: 7), "int32": Int32(-2), "strings": ["a": "b"] as [String: String],
                                     "ints": [1, 2] as [Int], "text": NSString(string: "ns")]
        let expected: JSONValue = ["number": 7, "int32": -2, "strings": ["a": "b"], "ints": [1, 2], "text": "ns"]
        #expect(JSONValue(foundation: object) == expected)
        // What is not JSON makes the whole value null.
        #expect(JSONValue(foundation: ["finite": 1.0, "infinite": Double.infinity] as [String: Any]) == .null)
        #expect(JSONValue(foundation: Double.nan) == .null)
        #expect(JSONValue(foundation: -0.0) == .int(0))
    }
}
