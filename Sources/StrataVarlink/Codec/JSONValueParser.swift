import Foundation

/// Parses JSON text into a ``JSONValue`` in one pass over the bytes, without Foundation's
/// `Codable` machinery (which tried each JSON type in turn and threw an error per miss for
/// every value of every message).
///
/// It accepts what `JSONDecoder` accepted for ``JSONValue``, so that nothing a client sends
/// changes meaning: RFC 8259 JSON, any value at the top level, a leading UTF-8 byte order mark,
/// a trailing comma in an array or object, the first of duplicate keys. A number is `.int`
/// when it has an integer value that fits in `Int64` (`1`, `1.0`, `1e2`), `.double` otherwise;
/// a number past `Double`'s range, a lone surrogate, invalid UTF-8, a raw control character in
/// a string, and nesting deeper than ``maxDepth`` are errors.
struct JSONValueParser {
    /// Deepest nesting of arrays and objects (`JSONDecoder`'s limit). Varlink messages are
    /// checked against their own, lower, limit before they are parsed.
    static let maxDepth = 512

    /// Why the text is not JSON, and where.
    struct Failure: Error, CustomStringConvertible {
        var offset: Int
        var reason: String
        var description: String { "\(reason) at byte \(offset)" }
    }

    private let bytes: UnsafeRawBufferPointer
    private var offset = 0
    private var depth = 0

    private init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The value of a whole document.
    static func parse(_ data: Data) throws(Failure) -> JSONValue {
        let result: Result<JSONValue, Failure> = data.withUnsafeBytes { raw in
            var parser = JSONValueParser(raw)
            do {
                if raw.count >= 3, raw[0] == 0xEF, raw[1] == 0xBB, raw[2] == 0xBF { parser.offset = 3 }
                let value = try parser.value()
                parser.skipWhitespace()
                guard parser.offset == raw.count else { throw parser.failure("unexpected text after the value") }
                return .success(value)
            } catch let error as Failure {
                return .failure(error)
            } catch {
                return .failure(Failure(offset: 0, reason: "\(error)"))
            }
        }
        return try result.get()
    }

    private func failure(_ reason: String) -> Failure { Failure(offset: offset, reason: reason) }

    private var current: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    private mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    private mutating func value() throws(Failure) -> JSONValue {
        skipWhitespace()
        guard let byte = current else { throw failure("unexpected end of the text") }
        switch byte {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("unexpected character")
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard offset + count <= bytes.count else { throw failure("unexpected end of the text") }
        for i in 0..<count where bytes[offset + i] != word.utf8Start[i] { throw failure("unexpected character") }
        offset += count
    }

    private mutating func enter() throws(Failure) {
        depth += 1
        guard depth <= Self.maxDepth else { throw failure("arrays and objects nested deeper than \(Self.maxDepth)") }
    }

    private mutating func array() throws(Failure) -> JSONValue {
        var elements: [JSONValue] = []
        try container(closedBy: UInt8(ascii: "]"), expected: "expected ',' or ']' in an array") { parser throws(Failure) in
            elements.append(try parser.value())
        }
        return .array(elements)
    }

    private mutating func object() throws(Failure) -> JSONValue {
        var members: [String: JSONValue] = [:]
        try container(closedBy: UInt8(ascii: "}"), expected: "expected ',' or '}' in an object") { parser throws(Failure) in
            parser.skipWhitespace()
            guard parser.current == UInt8(ascii: "\"") else { throw parser.failure("expected a string key in an object") }
            let key = try parser.string()
            parser.skipWhitespace()
            guard parser.current == UInt8(ascii: ":") else { throw parser.failure("expected ':' after an object key") }
            parser.offset += 1
            let member = try parser.value()
            if members[key] == nil { members[key] = member }
        }
        return .object(members)
    }

    /// An array's elements or an object's members, from the opening bracket at `offset` to
    /// `close`: each read by `element`, separated by commas (one before `close` is accepted).
    /// `expected` is the error when something else follows an element.
    private mutating func container(closedBy close: UInt8, expected: String,
                                    _ element: (inout JSONValueParser) throws(Failure) -> Void) throws(Failure) {
        try enter()
        offset += 1
        skipWhitespace()
        if current == close {
            offset += 1
            depth -= 1
            return
        }
        while true {
            try element(&self)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ",")?:
                offset += 1
                skipWhitespace()
                if current == close { offset += 1; depth -= 1; return }
            case close?:
                offset += 1
                depth -= 1
                return
            default: throw failure(expected)
            }
        }
    }

    private mutating func string() throws(Failure) -> String {
        offset += 1
        let start = offset
        // Fast path: no escapes — validate the UTF-8 of the slice once. ASCII needs no
        // validation: `String(decoding:)` takes it as it is (`String(validating:)` is generic
        // over the encoding and looks its metadata up at run time, a tenth of a client's CPU
        // when it reads 100,000 observer replies a second).
        var orOfBytes: UInt8 = 0  // below 0x80: ASCII
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeRawBufferPointer(rebasing: bytes[start..<offset])
                offset += 1
                if orOfBytes < 0x80 { return String(decoding: slice, as: UTF8.self) }
                guard let text = String(validating: slice, as: UTF8.self) else { throw Failure(offset: start, reason: "invalid UTF-8 in a string") }
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw failure("a control character in a string (escape it)") }
            orOfBytes |= byte
            offset += 1
        }
        var utf8 = Array(UnsafeRawBufferPointer(rebasing: bytes[start..<offset]))
        while true {
            guard let byte = current else { throw failure("unterminated string") }
            offset += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: utf8, as: UTF8.self) else { throw Failure(offset: start, reason: "invalid UTF-8 in a string") }
                return text
            case UInt8(ascii: "\\"):
                guard let escape = current else { throw failure("unterminated string") }
                offset += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"): utf8.append(contentsOf: try unicodeEscape())
                default: throw failure("an invalid escape in a string")
                }
            case 0..<0x20:
                throw failure("a control character in a string (escape it)")
            default:
                utf8.append(byte)
            }
        }
    }

    /// The UTF-8 of a `\uXXXX` escape (the `\u` read), a surrogate pair taking two.
    private mutating func unicodeEscape() throws(Failure) -> [UInt8] {
        let high = try hex4()
        var scalar: Unicode.Scalar?
        if (0xD800...0xDBFF).contains(high) {
            guard offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u") else {
                throw failure("a lone surrogate in a string")
            }
            offset += 2
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw failure("a lone surrogate in a string") }
            scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
        } else {
            scalar = Unicode.Scalar(high)
        }
        guard let scalar else { throw failure("a lone surrogate in a string") }
        return Array(String(Character(scalar)).utf8)
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard offset + 4 <= bytes.count else { throw failure("unterminated string") }
        var result: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw failure("an invalid \\u escape")
            }
            result = result << 4 | digit
            offset += 1
        }
        return result
    }

    private mutating func number() throws(Failure) -> JSONValue {
        let start = offset
        var isInteger = true
        if current == UInt8(ascii: "-") { offset += 1 }
        guard let first = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { throw failure("a malformed number") }
        if first == UInt8(ascii: "0") {
            offset += 1
            if let next = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(next) { throw failure("a number with a leading zero") }
        } else {
            skipDigits()
        }
        if current == UInt8(ascii: ".") {
            isInteger = false
            offset += 1
            guard skipDigits() > 0 else { throw failure("a malformed number") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isInteger = false
            offset += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { offset += 1 }
            guard skipDigits() > 0 else { throw failure("a malformed number") }
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        if isInteger, let integer = Int64(text) { return .int(integer) }
        guard let double = Double(text), double.isFinite else { throw Failure(offset: start, reason: "a number out of range") }
        if isInteger { return .double(double) }
        // An integral value that fits is an integer, as JSONDecoder decoded it (1.0, 1e2).
        if double.rounded() == double, double >= -9.223372036854775808e18, double < 9.223372036854775808e18 {
            return .int(Int64(double))
        }
        return .double(double)
    }

    @discardableResult
    private mutating func skipDigits() -> Int {
        let start = offset
        while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { offset += 1 }
        return offset - start
    }
}
