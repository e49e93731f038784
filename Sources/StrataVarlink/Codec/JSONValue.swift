import Foundation

/// A JSON value: what Varlink parameters and replies are made of.
public enum JSONValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Memberwise initializer.
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Int64.self) { self = .int(value) }
        else if let value = try? container.decode(Double.self) { self = .double(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }

    /// Encodes the value (see ``init(from:)``).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    // MARK: - Conversions

    /// Decodes one JSON document.
    public static func decode(_ data: Data) throws -> JSONValue {
        try JSONValueParser.parse(data)
    }

    /// The byte offset where JSON text first nests arrays and objects deeper than `limit`,
    /// nil when it never does. A linear scan that needs no valid JSON: run it before a
    /// recursive decoder sees the text.
    public static func offsetPastDepth(_ limit: Int, in bytes: Data) -> Int? {
        bytes.withUnsafeBytes { raw -> Int? in
            var depth = 0
            var inString = false
            var escaped = false
            for offset in 0..<raw.count {
                let byte = raw[offset]
                if inString {
                    if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "["), UInt8(ascii: "{"):
                    depth += 1
                    if depth > limit { return offset }
                case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
                default: break
                }
            }
            return nil
        }
    }

    /// Compact JSON with sorted keys.
    public func encoded() -> Data {
        JSONValueWriter.write(self).map { Data($0) } ?? Data("null".utf8)
    }

    /// Pretty JSON with sorted keys, for people.
    public func prettyPrinted() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// The value as Foundation objects (`JSONSerialization` style), as the library's
    /// `setValues(fromJSON:)` expects.
    /// Numbers are `NSNumber`s, as `JSONSerialization` gives them.
    public var foundationObject: Any {
        switch self {
        case .null: NSNull()
        case .bool(let b): NSNumber(value: b)
        case .int(let i): NSNumber(value: i)
        case .double(let d): NSNumber(value: d)
        case .string(let s): s
        case .array(let elements): elements.map(\.foundationObject)
        case .object(let members): members.mapValues(\.foundationObject)
        }
    }

    /// A Foundation JSON object (`jsonObject(style:)` output) as a JSON value, converted
    /// directly (no text in between). As a round trip through JSON text did, a `Double` with
    /// an integer value that fits in `Int64` becomes `.int`; what is not JSON becomes `.null`.
    public init(foundation object: Any) {
        self = Self.converting(object) ?? .null
    }

    private static func converting(_ object: Any) -> JSONValue? {
        // The types `jsonObject(style:)` makes, matched by their metadata first: a cast from
        // `Any` that fails tries Foundation's bridging (`is NSNull` turned every String into an
        // NSString to find it was not one), which was 40 % of stratad's CPU serving fetches of
        // 100 objects. A cast to the exact type it has takes no such path.
        let type = Swift.type(of: object)
        if type == String.self { return .string(object as! String) }
        if type == Int64.self { return .int(object as! Int64) }
        if type == Double.self { return number(object as! Double) }
        if type == Bool.self { return .bool(object as! Bool) }
        if type == Int.self { return .int(Int64(object as! Int)) }
        if type == [String: Any].self { return converting(members: object as! [String: Any]) }
        if type == [Any].self { return converting(elements: object as! [Any]) }
        if type == NSNull.self { return .null }
        // Anything else, as it always was converted.
        switch object {
        case is NSNull: return .null
        case let string as String: return .string(string)
        case let members as [String: Any]: return converting(members: members)
        case let elements as [Any]: return converting(elements: elements)
        default: break
        }
        // Anything else (NSNumber, Int32, …): through JSON text, as before.
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.fragmentsAllowed]) else { return nil }
        return try? JSONValue.decode(data)
    }

    private static func converting(members: [String: Any]) -> JSONValue? {
        var result: [String: JSONValue] = [:]
        result.reserveCapacity(members.count)
        for (key, member) in members {
            guard let value = converting(member) else { return nil }
            result[key] = value
        }
        return .object(result)
    }

    private static func converting(elements: [Any]) -> JSONValue? {
        var result: [JSONValue] = []
        result.reserveCapacity(elements.count)
        for element in elements {
            guard let value = converting(element) else { return nil }
            result.append(value)
        }
        return .array(result)
    }

    /// A finite double; one with an integer value that fits in `Int64` as `.int` (as JSON text
    /// read back gave it).
    /// A `Double` as ``init(foundation:)`` converts it: integral values within `Int64` as
    /// ``int(_:)``, others as ``double(_:)``; nil for NaN and infinity.
    package static func number(_ d: Double) -> JSONValue? {
        guard d.isFinite else { return nil }
        if d.rounded() == d, d >= -9.223372036854775808e18, d < 9.223372036854775808e18 { return .int(Int64(d)) }
        return .double(d)
    }

    /// A description in words.
    public var description: String { String(decoding: encoded(), as: UTF8.self) }

    /// The JSON type's name, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int: "int"
        case .double: "float"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// The string, if this is one.
    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    /// The integer, if this is one.
    public var intValue: Int64? { if case .int(let i) = self { i } else { nil } }
    /// The Boolean, if this is one.
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    /// The number, if this is one.
    public var doubleValue: Double? {
        switch self {
        case .double(let d): d
        case .int(let i): Double(i)
        default: nil
        }
    }
    /// The object, if this is one.
    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { o } else { nil } }
    /// The array, if this is one.
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }

    /// The member `key` of an object (nil for other values or a missing key).
    public subscript(key: String) -> JSONValue? { objectValue?[key] }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    /// Memberwise initializer.
    public init(stringLiteral value: String) { self = .string(value) }
    /// Memberwise initializer.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// Memberwise initializer.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// Memberwise initializer.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// Memberwise initializer.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// Memberwise initializer.
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(Dictionary(elements, uniquingKeysWith: { $1 })) }
    /// Memberwise initializer.
    public init(nilLiteral: ()) { self = .null }
}
