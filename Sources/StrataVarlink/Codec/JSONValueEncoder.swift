import Foundation

/// Encodes `Encodable` values as a ``JSONValue``: the typed parameters of a call, or the typed
/// reply of a method. Integers become JSON integers, `Double` and `Float` JSON numbers,
/// ``JSONValue`` fields are copied as they are.
///
/// A `nil` optional is written as `null` (``NilEncoding/null``, what replies do: every field
/// of the interface definition is present) or left out (``NilEncoding/omit``, what calls do).
public struct JSONValueEncoder: Sendable {
    /// How a `nil` optional field is written.
    public enum NilEncoding: Sendable {
        case null
        case omit
    }

    /// How nil optionals are encoded.
    public var nilEncoding: NilEncoding

    /// Memberwise initializer.
    public init(nilEncoding: NilEncoding = .null) {
        self.nilEncoding = nilEncoding
    }

    /// - Throws: `EncodingError` only for a value that is not JSON (a non-finite number).
    public func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        let root = Slot()
        try ValueEncoder(slot: root, path: nil, nilEncoding: nilEncoding).box(value)
        return root.value
    }

    /// The value as the parameters of a call or reply: its encoding must be a JSON object.
    public func encodeObject<T: Encodable>(_ value: T) throws -> [String: JSONValue] {
        let encoded = try encode(value)
        guard case .object(let object) = encoded else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "encodes as a JSON \(encoded.typeName), not an object"))
        }
        return object
    }
}

// MARK: - Building the value

/// Where one value goes: a scalar, or an object or array whose members are filled in later
/// (containers hand out slots for their members).
private final class Slot {
    enum Content {
        case value(JSONValue)
        case object([(String, Slot)])
        case array([Slot])
    }

    var content = Content.value(.null)

    var value: JSONValue {
        switch content {
        case .value(let value): value
        case .object(let members): .object(Dictionary(members.map { ($0.0, $0.1.value) }, uniquingKeysWith: { $1 }))
        case .array(let items): .array(items.map(\.value))
        }
    }

    func makeObject() {
        if case .object = content { return }
        content = .object([])
    }

    func makeArray() {
        if case .array = content { return }
        content = .array([])
    }

    func member(_ key: String) -> Slot {
        let slot = Slot()
        if case .object(var members) = content {
            members.append((key, slot))
            content = .object(members)
        }
        return slot
    }

    func append() -> Slot {
        let slot = Slot()
        if case .array(var items) = content {
            items.append(slot)
            content = .array(items)
        }
        return slot
    }

    var count: Int {
        if case .array(let items) = content { return items.count }
        return 0
    }
}

private struct ValueEncoder: Encoder {
    let slot: Slot
    let path: CodingPathNode?
    let nilEncoding: JSONValueEncoder.NilEncoding
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var codingPath: [any CodingKey] { CodingPathNode.keys(path) }

    init(slot: Slot, path: CodingPathNode?, nilEncoding: JSONValueEncoder.NilEncoding) {
        self.slot = slot
        self.path = path
        self.nilEncoding = nilEncoding
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        slot.makeObject()
        return KeyedEncodingContainer(KeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        slot.makeArray()
        return UnkeyedContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    func child(_ slot: Slot, _ key: any CodingKey) -> ValueEncoder {
        ValueEncoder(slot: slot, path: CodingPathNode(parent: path, key: key), nilEncoding: nilEncoding)
    }

    /// The types `box` writes directly (every other type encodes itself).
    private static let direct: [ObjectIdentifier] = [
        JSONValue.self, [JSONValue].self, [String: JSONValue].self, Bool.self, String.self, Double.self, Float.self,
        Int.self, Int8.self, Int16.self, Int32.self, Int64.self, UInt.self, UInt8.self, UInt16.self, UInt32.self, UInt64.self,
    ].map { ObjectIdentifier($0) }

    /// Writes `value` into the slot: scalars directly, anything else through `encode(to:)`.
    func box<T: Encodable>(_ value: T) throws {
        // A struct of the interface (a reply, an item of one) encodes itself: no cast per
        // case below to learn that it is none of them.
        guard Self.direct.contains(ObjectIdentifier(T.self)) else { return try value.encode(to: self) }
        switch value {
        case let json as JSONValue: slot.content = .value(json)
        // A reply's objects (`Fetch`): taken whole, not element by element.
        case let array as [JSONValue]: slot.content = .value(.array(array))
        case let object as [String: JSONValue]: slot.content = .value(.object(object))
        case let bool as Bool: slot.content = .value(.bool(bool))
        case let string as String: slot.content = .value(.string(string))
        case let double as Double: slot.content = .value(try number(double))
        case let float as Float: slot.content = .value(try number(Double(float)))
        case let int as Int: slot.content = .value(.int(Int64(int)))
        case let int as Int8: slot.content = .value(.int(Int64(int)))
        case let int as Int16: slot.content = .value(.int(Int64(int)))
        case let int as Int32: slot.content = .value(.int(Int64(int)))
        case let int as Int64: slot.content = .value(.int(int))
        case let int as UInt: slot.content = .value(.int(Int64(clamping: int)))
        case let int as UInt8: slot.content = .value(.int(Int64(int)))
        case let int as UInt16: slot.content = .value(.int(Int64(int)))
        case let int as UInt32: slot.content = .value(.int(Int64(int)))
        case let int as UInt64: slot.content = .value(.int(Int64(clamping: int)))
        default: try value.encode(to: self)
        }
    }

    private func number(_ double: Double) throws -> JSONValue {
        guard double.isFinite else {
            throw EncodingError.invalidValue(double, .init(codingPath: codingPath, debugDescription: "\(double) is not a JSON number"))
        }
        return .double(double)
    }
}

extension ValueEncoder: SingleValueEncodingContainer {
    func encodeNil() { slot.content = .value(.null) }
    func encode(_ value: Bool) throws { try box(value) }
    func encode(_ value: String) throws { try box(value) }
    func encode(_ value: Double) throws { try box(value) }
    func encode(_ value: Float) throws { try box(value) }
    func encode(_ value: Int) throws { try box(value) }
    func encode(_ value: Int8) throws { try box(value) }
    func encode(_ value: Int16) throws { try box(value) }
    func encode(_ value: Int32) throws { try box(value) }
    func encode(_ value: Int64) throws { try box(value) }
    func encode(_ value: UInt) throws { try box(value) }
    func encode(_ value: UInt8) throws { try box(value) }
    func encode(_ value: UInt16) throws { try box(value) }
    func encode(_ value: UInt32) throws { try box(value) }
    func encode(_ value: UInt64) throws { try box(value) }
    func encode<T: Encodable>(_ value: T) throws { try box(value) }
}

// MARK: - Containers

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func write<T: Encodable>(_ value: T, _ key: Key) throws {
        try encoder.child(encoder.slot.member(key.stringValue), key).box(value)
    }

    /// A `nil` optional: `null`, or nothing (``JSONValueEncoder/NilEncoding``).
    private func writeNil(_ key: Key) {
        guard encoder.nilEncoding == .null else { return }
        encoder.slot.member(key.stringValue).content = .value(.null)
    }

    private func writeIfPresent<T: Encodable>(_ value: T?, _ key: Key) throws {
        if let value { try write(value, key) } else { writeNil(key) }
    }

    func encodeNil(forKey key: Key) throws { encoder.slot.member(key.stringValue).content = .value(.null) }
    func encode(_ value: Bool, forKey key: Key) throws { try write(value, key) }
    func encode(_ value: String, forKey key: Key) throws { try write(value, key) }
    func encode(_ value: Double, forKey key: Key) throws { try write(value, key) }
    func encode(_ value: Float, forKey key: Key) throws { try write(value, key) }
    func encode(_ value: Int, forKey key: Key) throws { try write(value, key) }
    func encode(_ value: Int8, forKey key: Key) throws { try write(value, key) }
    func encode(_ value: Int16, forKey key: Key) throws { try write(value, key) }
    func encode(_ value: Int32, forKey key: Key) throws { try write(value, key) }
    func encode(_ value: Int64, forKey key: Key) throws { try write(value, key) }
    func encode(_ value: UInt, forKey key: Key) throws { try write(value, key) }
    func encode(_ value: UInt8, forKey key: Key) throws { try write(value, key) }
    func encode(_ value: UInt16, forKey key: Key) throws { try write(value, key) }
    func encode(_ value: UInt32, forKey key: Key) throws { try write(value, key) }
    func encode(_ value: UInt64, forKey key: Key) throws { try write(value, key) }
    func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try write(value, key) }

    func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try writeIfPresent(value, key) }
    func encodeIfPresent(_ value: String?, forKey key: Key) throws { try writeIfPresent(value, key) }
    func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try writeIfPresent(value, key) }
    func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try writeIfPresent(value, key) }
    func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try writeIfPresent(value, key) }
    func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try writeIfPresent(value, key) }
    func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try writeIfPresent(value, key) }
    func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try writeIfPresent(value, key) }
    func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try writeIfPresent(value, key) }
    func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try writeIfPresent(value, key) }
    func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try writeIfPresent(value, key) }
    func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try writeIfPresent(value, key) }
    func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try writeIfPresent(value, key) }
    func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try writeIfPresent(value, key) }
    func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { try writeIfPresent(value, key) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        encoder.child(encoder.slot.member(key.stringValue), key).container(keyedBy: keyType)
    }

    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.child(encoder.slot.member(key.stringValue), key).unkeyedContainer()
    }

    func superEncoder() -> any Encoder { encoder.child(encoder.slot.member("super"), AnyKey("super")) }
    func superEncoder(forKey key: Key) -> any Encoder { encoder.child(encoder.slot.member(key.stringValue), key) }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { encoder.slot.count }

    private func next() -> ValueEncoder {
        let index = encoder.slot.count
        return encoder.child(encoder.slot.append(), AnyKey(intValue: index))
    }

    mutating func encodeNil() throws { next().encodeNil() }
    mutating func encode(_ value: Bool) throws { try next().box(value) }
    mutating func encode(_ value: String) throws { try next().box(value) }
    mutating func encode(_ value: Double) throws { try next().box(value) }
    mutating func encode(_ value: Float) throws { try next().box(value) }
    mutating func encode(_ value: Int) throws { try next().box(value) }
    mutating func encode(_ value: Int8) throws { try next().box(value) }
    mutating func encode(_ value: Int16) throws { try next().box(value) }
    mutating func encode(_ value: Int32) throws { try next().box(value) }
    mutating func encode(_ value: Int64) throws { try next().box(value) }
    mutating func encode(_ value: UInt) throws { try next().box(value) }
    mutating func encode(_ value: UInt8) throws { try next().box(value) }
    mutating func encode(_ value: UInt16) throws { try next().box(value) }
    mutating func encode(_ value: UInt32) throws { try next().box(value) }
    mutating func encode(_ value: UInt64) throws { try next().box(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try next().box(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        next().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { next().unkeyedContainer() }
    mutating func superEncoder() -> any Encoder { next() }
}
