import Foundation

/// Decodes `Decodable` values from a ``JSONValue``, as strictly as Varlink parameters must be
/// read: an `int` only from a JSON integer, a `float` from any number, `null` the same as a
/// missing key, and a key that the type does not declare refused (so a misspelt parameter is
/// never silently ignored). Fields of type ``JSONValue`` take any JSON (Varlink's `object`).
///
/// ```swift
/// let parameters = try JSONValueDecoder().decode(StrataAdmin.Pending.Parameters.self, from: .object(call.parameters))
/// ```
public struct JSONValueDecoder: Sendable {
    /// Refuse keys the type does not declare (parameters a server reads); a client reading
    /// replies sets it to false, so that a newer server's extra fields do no harm.
    public var rejectsUnknownKeys: Bool

    /// Memberwise initializer.
    public init(rejectsUnknownKeys: Bool = true) {
        self.rejectsUnknownKeys = rejectsUnknownKeys
    }

    /// - Throws: ``JSONValueDecodingError`` naming the first offending key path
    ///   (`operations[2].op`): missing, of the wrong type, or not declared by `type`.
    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws(JSONValueDecodingError) -> T {
        let tracker = KeyTracker()
        let result: T
        do {
            result = try ValueDecoder(value, path: nil, tracker: tracker).unbox(type)
        } catch let error as DecodingError {
            throw JSONValueDecodingError(error)
        } catch {
            throw JSONValueDecodingError(path: "", reason: "\(error)")
        }
        if rejectsUnknownKeys, let unknown = tracker.firstUnknownKey() {
            throw JSONValueDecodingError(path: unknown, reason: "not a known parameter")
        }
        return result
    }
}

/// Why a ``JSONValue`` does not decode: the key path (`operations[2].op`, empty for the value
/// itself) and what is wrong with it.
public struct JSONValueDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where in the value the problem is: `stores[2].name`.
    public var path: String
    /// Why, in words, and what to do.
    public var reason: String

    /// Memberwise initializer.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    init(_ error: DecodingError) {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            self.init(path: Self.path(context.codingPath), reason: context.debugDescription)
        case .keyNotFound(let key, let context):
            self.init(path: Self.path(context.codingPath + [key]), reason: "missing")
        @unknown default:
            self.init(path: "", reason: "\(error)")
        }
    }

    /// A description in words.
    public var description: String { path.isEmpty ? reason : "\(path): \(reason)" }

    /// `operations[2].op` from coding keys.
    static func path(_ keys: [any CodingKey]) -> String {
        var text = ""
        for key in keys {
            if let index = key.intValue, key.stringValue == "Index \(index)" || key.stringValue == "\(index)" {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }
}

// MARK: - Unknown keys

/// Every JSON object a decoding opened as a keyed container, with the keys the decoded type
/// asked for. Dictionaries (which enumerate `allKeys`) accept any key.
///
/// Kept cheap for the daemon's every call: the keys asked for go in a small array (a type
/// asks for each of its fields once or twice), and the object's own keys are compared with
/// them only at the end — no sets built and hashed per object.
private final class KeyTracker {
    struct Record {
        var path: CodingPathNode?
        var object: [String: JSONValue]
        var accessed: [String] = []
        var acceptsAnyKey = false
    }

    var records: [Record] = []

    func open(path: CodingPathNode?, object: [String: JSONValue]) -> Int {
        records.append(Record(path: path, object: object))
        return records.count - 1
    }

    func access(_ record: Int, _ key: String) { records[record].accessed.append(key) }
    func acceptAnyKey(_ record: Int) { records[record].acceptsAnyKey = true }

    func firstUnknownKey() -> String? {
        for record in records where !record.acceptsAnyKey {
            let unknown = record.object.keys.filter { !record.accessed.contains($0) }
            if let key = unknown.min() {
                return JSONValueDecodingError.path(CodingPathNode.keys(record.path) + [AnyKey(key)])
            }
        }
        return nil
    }
}

/// A coding path as a list from the value back to the root, so that a child decoder costs one
/// small allocation instead of a copy of its parent's whole path; the `[any CodingKey]` form
/// is built only when asked for (an error, or a type that reads `codingPath`). Shared by
/// ``JSONValueDecoder`` and ``JSONValueEncoder``.
final class CodingPathNode {
    let parent: CodingPathNode?
    let key: any CodingKey

    init(parent: CodingPathNode?, key: any CodingKey) {
        self.parent = parent
        self.key = key
    }

    /// The keys from the root to `node`.
    static func keys(_ node: CodingPathNode?) -> [any CodingKey] {
        var keys: [any CodingKey] = []
        var node = node
        while let current = node {
            keys.append(current.key)
            node = current.parent
        }
        return keys.reversed()
    }
}

struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        self.stringValue = "Index \(intValue)"
        self.intValue = intValue
    }
}

// MARK: - Decoder

private struct ValueDecoder: Decoder {
    let value: JSONValue
    let path: CodingPathNode?
    let tracker: KeyTracker
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var codingPath: [any CodingKey] { CodingPathNode.keys(path) }

    init(_ value: JSONValue, path: CodingPathNode?, tracker: KeyTracker) {
        self.value = value
        self.path = path
        self.tracker = tracker
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else { throw mismatch("an object") }
        let record = tracker.open(path: path, object: object)
        return KeyedDecodingContainer(KeyedContainer<Key>(object: object, decoder: self, record: record))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let array) = value else { throw mismatch("an array") }
        return UnkeyedContainer(array: array, decoder: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func child(_ value: JSONValue, _ key: any CodingKey) -> ValueDecoder {
        ValueDecoder(value, path: CodingPathNode(parent: path, key: key), tracker: tracker)
    }

    func mismatch(_ expected: String) -> DecodingError {
        DecodingError.typeMismatch(JSONValue.self, .init(codingPath: codingPath, debugDescription: "expected \(expected), found \(value.typeName)"))
    }

    /// The value as `T`: Varlink's scalar types checked here, ``JSONValue`` as it is,
    /// anything else through its own `init(from:)`.
    func unbox<T: Decodable>(_ type: T.Type) throws -> T {
        // The types of nearly every field first, by identity (a cast per case below otherwise);
        // the switch has the other scalars.
        let id = ObjectIdentifier(T.self)
        if id == ObjectIdentifier(JSONValue.self) { return value as! T }
        if id == ObjectIdentifier(String.self) {
            guard case .string(let string) = value else { throw mismatch("a string") }
            return string as! T
        }
        if id == ObjectIdentifier(Int64.self) { return try integer(Int64.self) as! T }
        switch type {
        case is Bool.Type:
            guard case .bool(let bool) = value else { throw mismatch("a bool") }
            return bool as! T
        case is Double.Type: return try number() as! T
        case is Float.Type: return Float(try number()) as! T
        case is Int.Type: return try integer(Int.self) as! T
        case is Int8.Type: return try integer(Int8.self) as! T
        case is Int16.Type: return try integer(Int16.self) as! T
        case is Int32.Type: return try integer(Int32.self) as! T
        case is UInt.Type: return try integer(UInt.self) as! T
        case is UInt8.Type: return try integer(UInt8.self) as! T
        case is UInt16.Type: return try integer(UInt16.self) as! T
        case is UInt32.Type: return try integer(UInt32.self) as! T
        case is UInt64.Type: return try integer(UInt64.self) as! T
        default: return try T(from: self)
        }
    }

    private func number() throws -> Double {
        switch value {
        case .double(let double): return double
        case .int(let int): return Double(int)
        default: throw mismatch("a number")
        }
    }

    private func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        guard case .int(let int) = value else { throw mismatch("an integer") }
        guard let result = I(exactly: int) else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "\(int) is out of range"))
        }
        return result
    }
}

extension ValueDecoder: SingleValueDecodingContainer {
    func decodeNil() -> Bool { value == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try unbox(type) }
    func decode(_ type: String.Type) throws -> String { try unbox(type) }
    func decode(_ type: Double.Type) throws -> Double { try unbox(type) }
    func decode(_ type: Float.Type) throws -> Float { try unbox(type) }
    func decode(_ type: Int.Type) throws -> Int { try unbox(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try unbox(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try unbox(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try unbox(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try unbox(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try unbox(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try unbox(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try unbox(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try unbox(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try unbox(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unbox(type) }
}

// MARK: - Containers

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: [String: JSONValue]
    let decoder: ValueDecoder
    let record: Int

    var codingPath: [any CodingKey] { decoder.codingPath }

    var allKeys: [Key] {
        decoder.tracker.acceptAnyKey(record)
        return object.keys.sorted().compactMap { Key(stringValue: $0) }
    }

    func contains(_ key: Key) -> Bool {
        decoder.tracker.access(record, key.stringValue)
        return object[key.stringValue] != nil
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        decoder.tracker.access(record, key.stringValue)
        return (object[key.stringValue] ?? .null) == .null
    }

    /// The value of a required key: present and not null.
    private func required<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
        decoder.tracker.access(record, key.stringValue)
        guard let value = object[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "missing"))
        }
        guard value != .null else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath + [key], debugDescription: "null for a required value"))
        }
        return try decoder.child(value, key).unbox(type)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try required(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try required(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try required(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try required(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try required(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try required(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try required(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try required(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try required(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try required(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try required(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try required(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try required(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try required(type, key) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try required(type, key) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        decoder.tracker.access(record, key.stringValue)
        guard let value = object[key.stringValue], value != .null else { return nil }
        return try decoder.child(value, key).unbox(type)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder.child(try required(JSONValue.self, key), key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder.child(try required(JSONValue.self, key), key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { decoder }
    func superDecoder(forKey key: Key) throws -> any Decoder { decoder.child(object[key.stringValue] ?? .null, key) }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let array: [JSONValue]
    let decoder: ValueDecoder
    var currentIndex = 0

    init(array: [JSONValue], decoder: ValueDecoder) {
        self.array = array
        self.decoder = decoder
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, array[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    private mutating func next() throws -> ValueDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(JSONValue.self, .init(codingPath: codingPath, debugDescription: "the array ends early"))
        }
        defer { currentIndex += 1 }
        return decoder.child(array[currentIndex], AnyKey(intValue: currentIndex))
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try element(type) }
    mutating func decode(_ type: String.Type) throws -> String { try element(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try element(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try element(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try element(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try element(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try element(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try element(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try element(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try element(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try element(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try element(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try element(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try element(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try element(type) }

    private mutating func element<T: Decodable>(_ type: T.Type) throws -> T {
        let element = try next()
        guard element.value != .null || T.self == JSONValue.self else {
            throw DecodingError.valueNotFound(type, .init(codingPath: element.codingPath, debugDescription: "null in an array"))
        }
        return try element.unbox(type)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next().unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { try next() }
}
