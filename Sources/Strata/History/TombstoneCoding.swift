import Foundation

/// Tombstone values as stored in `_strata_object_changes.tombstone`: a JSON object from name
/// id to `[kind, value]`, so a value reads back as the same ``Value`` whatever the model of the
/// reader says (the attribute may have been renamed, retyped or dropped since).
enum TombstoneCoding {
    static func encode(_ values: [Int64: Value]) -> String? {
        guard !values.isEmpty else { return nil }
        var object: [String: Any] = [:]
        for (id, value) in values { object[String(id)] = encode(value) }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    static func encode(_ value: Value) -> [Any] {
        switch value {
        case .null: return ["null", NSNull()]
        case .string(let s): return ["string", s]
        case .int(let i): return ["int", i]
        case .double(let d): return d.isFinite ? ["double", d] : ["double", "\(d)"]
        case .decimal(let d): return ["decimal", "\(d)"]
        case .bool(let b): return ["bool", b]
        case .date(let d): return ["date", d.timeIntervalSince1970]
        case .data(let d): return ["data", d.base64EncodedString()]
        case .uuid(let u): return ["uuid", u.uuidString]
        case .uri(let u): return ["uri", u.absoluteString]
        }
    }

    /// The values by name id; entries that do not decode are left out.
    static func decode(_ text: String) -> [Int64: Value] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return [:] }
        var result: [Int64: Value] = [:]
        for (key, raw) in object {
            guard let id = Int64(key), let pair = raw as? [Any], pair.count == 2, let kind = pair[0] as? String,
                  let value = decode(kind: kind, pair[1]) else { continue }
            result[id] = value
        }
        return result
    }

    static func decode(kind: String, _ raw: Any) -> Value? {
        switch kind {
        case "null": return .null
        case "string": return (raw as? String).map(Value.string)
        case "int": return (raw as? NSNumber).map { .int($0.int64Value) }
        case "double":
            if let n = raw as? NSNumber { return .double(n.doubleValue) }
            return (raw as? String).flatMap(Double.init).map(Value.double)
        case "decimal": return (raw as? String).flatMap { Decimal(string: $0) }.map(Value.decimal)
        case "bool": return (raw as? NSNumber).map { .bool($0.boolValue) }
        case "date": return (raw as? NSNumber).map { .date(Date(timeIntervalSince1970: $0.doubleValue)) }
        case "data": return (raw as? String).flatMap { Data(base64Encoded: $0) }.map(Value.data)
        case "uuid": return (raw as? String).flatMap(UUID.init(uuidString:)).map(Value.uuid)
        case "uri": return (raw as? String).flatMap(URL.init(string:)).map(Value.uri)
        default: return nil
        }
    }
}
