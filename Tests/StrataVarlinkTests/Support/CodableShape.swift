import Foundation
import StrataVarlink

/// The shape of a `Decodable` Swift type as Varlink IDL types, found by decoding it with a
/// decoder that records what the type asks for: each key with its type, `decodeIfPresent` as
/// `?`, arrays, `[String: T]` maps (they enumerate `allKeys`), ``JSONValue`` as `object`, a
/// ``VarlinkStringEnum`` as the Varlink enum `(a, b, c)` of its raw values, and each structure under its Swift type name.
struct CodableShape {
    /// Structures by Swift type name.
    private(set) var types: [String: VarlinkIDL.TypeExpression] = [:]

    /// The fields of the structure `T` (a method's parameters or reply, an error).
    mutating func fields<T: Decodable>(of type: T.Type) throws -> [VarlinkIDL.Field] {
        let recorder = Recorder()
        _ = try T(from: ProbeDecoder(node: recorder.root, recorder: recorder))
        types.merge(recorder.types) { $1 }
        guard case .structure(let fields) = recorder.root.shape else {
            throw ShapeError("\(T.self) does not decode as a structure but as \(recorder.root.shape)")
        }
        return fields
    }
}

struct ShapeError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

// MARK: - Recording

private final class Node {
    enum Kind {
        case unknown
        case scalar(VarlinkIDL.TypeExpression)
        case keyed([VarlinkIDL.Field], isMap: Bool)
        case unkeyed(VarlinkIDL.TypeExpression?)
    }

    var kind = Kind.unknown

    var shape: VarlinkIDL.TypeExpression {
        switch kind {
        case .unknown: .structure([])
        case .scalar(let type): type
        case .keyed(let fields, let isMap): isMap ? .map(fields.first?.type ?? .object) : .structure(fields)
        case .unkeyed(let element): .array(element ?? .object)
        }
    }

    func add(_ name: String, _ type: VarlinkIDL.TypeExpression) {
        guard case .keyed(var fields, let isMap) = kind else { return }
        fields.removeAll { $0.name == name }
        fields.append(VarlinkIDL.Field(name: name, type: type))
        kind = .keyed(fields, isMap: isMap)
    }
}

private final class Recorder {
    let root = Node()
    var types: [String: VarlinkIDL.TypeExpression] = [:]

    /// Decodes `T` from a fresh node; its shape (a structure as `.named`, registered in
    /// ``types``) and the value built from placeholders.
    func probe<T: Decodable>(_ type: T.Type) throws -> (VarlinkIDL.TypeExpression, T) {
        if let scalar = Self.scalar(type) { return scalar }
        let node = Node()
        let value = try T(from: ProbeDecoder(node: node, recorder: self))
        let shape = node.shape
        if case .structure = shape {
            let name = String(describing: T.self)
            types[name] = shape
            return (.named(name), value)
        }
        return (shape, value)
    }

    static func scalar<T>(_ type: T.Type) -> (VarlinkIDL.TypeExpression, T)? {
        switch type {
        case is JSONValue.Type: return (.object, JSONValue.null as! T)
        case is String.Type: return (.string, "" as! T)
        case is Bool.Type: return (.bool, false as! T)
        case is Double.Type: return (.float, 0.0 as! T)
        case is Float.Type: return (.float, Float(0) as! T)
        case is Int.Type: return (.int, 0 as! T)
        case is Int8.Type: return (.int, Int8(0) as! T)
        case is Int16.Type: return (.int, Int16(0) as! T)
        case is Int32.Type: return (.int, Int32(0) as! T)
        case is Int64.Type: return (.int, Int64(0) as! T)
        case is UInt.Type: return (.int, UInt(0) as! T)
        case is UInt8.Type: return (.int, UInt8(0) as! T)
        case is UInt16.Type: return (.int, UInt16(0) as! T)
        case is UInt32.Type: return (.int, UInt32(0) as! T)
        case is UInt64.Type: return (.int, UInt64(0) as! T)
        default:
            guard let enumeration = type as? any VarlinkStringEnum.Type else { return nil }
            return (.enumeration(rawValues(enumeration)), firstCase(enumeration) as! T)
        }
    }

    private static func firstCase<E: VarlinkStringEnum>(_ type: E.Type) -> E { E.allCases.first! }
    private static func rawValues<E: VarlinkStringEnum>(_ type: E.Type) -> [String] { E.allCases.map(\.rawValue) }
}

private struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        self.stringValue = "\(intValue)"
        self.intValue = intValue
    }
}

// MARK: - Decoder

private struct ProbeDecoder: Decoder {
    let node: Node
    let recorder: Recorder
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        if case .unknown = node.kind { node.kind = .keyed([], isMap: false) }
        return KeyedDecodingContainer(KeyedProbe<Key>(node: node, recorder: recorder))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        node.kind = .unkeyed(nil)
        return UnkeyedProbe(node: node, recorder: recorder)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleProbe(node: node, recorder: recorder) }
}

private struct SingleProbe: SingleValueDecodingContainer {
    let node: Node
    let recorder: Recorder
    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool { false }

    func decode(_ type: Bool.Type) throws -> Bool { try decodeValue(type) }
    func decode(_ type: String.Type) throws -> String { try decodeValue(type) }
    func decode(_ type: Double.Type) throws -> Double { try decodeValue(type) }
    func decode(_ type: Float.Type) throws -> Float { try decodeValue(type) }
    func decode(_ type: Int.Type) throws -> Int { try decodeValue(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decodeValue(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decodeValue(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decodeValue(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decodeValue(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try decodeValue(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeValue(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeValue(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeValue(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeValue(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeValue(type) }

    private func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        let (shape, value) = try recorder.probe(type)
        node.kind = .scalar(shape)
        return value
    }
}

private struct KeyedProbe<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let node: Node
    let recorder: Recorder
    var codingPath: [any CodingKey] { [] }

    /// A dictionary asks for its keys: one placeholder key, whose value gives the map's type.
    var allKeys: [Key] {
        if case .keyed(let fields, _) = node.kind { node.kind = .keyed(fields, isMap: true) }
        return Key(stringValue: "*").map { [$0] } ?? []
    }

    func contains(_ key: Key) -> Bool { true }
    func decodeNil(forKey key: Key) throws -> Bool { false }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decodeValue(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decodeValue(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decodeValue(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decodeValue(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decodeValue(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decodeValue(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decodeValue(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decodeValue(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decodeValue(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decodeValue(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decodeValue(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decodeValue(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decodeValue(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decodeValue(type, key) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decodeValue(type, key) }

    private func decodeValue<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
        let (shape, value) = try recorder.probe(type)
        node.add(key.stringValue, shape)
        return value
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optional(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optional(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optional(type, key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try optional(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optional(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optional(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optional(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optional(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optional(type, key) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try optional(type, key) }

    private func optional<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        let (shape, value) = try recorder.probe(type)
        node.add(key.stringValue, .optional(shape))
        return value
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw ShapeError("nested containers are not Varlink types")
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw ShapeError("nested containers are not Varlink types")
    }

    func superDecoder() throws -> any Decoder { throw ShapeError("super decoders are not Varlink types") }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw ShapeError("super decoders are not Varlink types") }
}

private struct UnkeyedProbe: UnkeyedDecodingContainer {
    let node: Node
    let recorder: Recorder
    var codingPath: [any CodingKey] { [] }
    var count: Int? { 1 }
    var currentIndex = 0
    var isAtEnd: Bool { currentIndex > 0 }

    init(node: Node, recorder: Recorder) {
        self.node = node
        self.recorder = recorder
    }

    mutating func decodeNil() throws -> Bool { false }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try decodeValue(type) }
    mutating func decode(_ type: String.Type) throws -> String { try decodeValue(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try decodeValue(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try decodeValue(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try decodeValue(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try decodeValue(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try decodeValue(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try decodeValue(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try decodeValue(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try decodeValue(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeValue(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeValue(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeValue(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeValue(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeValue(type) }

    private mutating func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        let (shape, value) = try recorder.probe(type)
        node.kind = .unkeyed(shape)
        currentIndex += 1
        return value
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        throw ShapeError("nested containers are not Varlink types")
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw ShapeError("nested containers are not Varlink types")
    }

    mutating func superDecoder() throws -> any Decoder { throw ShapeError("super decoders are not Varlink types") }
}
