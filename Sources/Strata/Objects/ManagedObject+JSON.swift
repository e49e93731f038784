import Foundation

/// How dates and binary data appear in an object's JSON form.
public enum ObjectJSONStyle: Sendable {
    /// For people and scripts: dates as ISO 8601 text, data as base64, plus `_entity` and `_pk`.
    case display
    /// For `Codable` types: dates as seconds since 1970, data as base64, no system keys.
    case codable
}

/// A member of an entity's JSON object (``EntityInfo/jsonMembers``): an attribute or
/// composite leaf (its slot), or a composite (the object of its members). The one place that
/// turns keypaths into nested JSON objects, for ``ManagedObject/jsonObject(style:)`` and for
/// hosts that build their own JSON (``ManagedObject/displayParts``).
package enum JSONMember {
    case slot(name: String, slot: Int)
    case object(name: String, members: [JSONMember])

    /// The members for slots with these split keypaths (`["colorScheme", "primary"]`), in slot
    /// order: plain attributes at the top, composite leaves nested under their composite.
    static func tree(_ paths: [[String]]) -> [JSONMember] {
        tree(paths.enumerated().map { (slot: $0.offset, path: $0.element[...]) })
    }

    private static func tree(_ entries: [(slot: Int, path: ArraySlice<String>)]) -> [JSONMember] {
        var members: [JSONMember] = []
        var nested: [String: [(slot: Int, path: ArraySlice<String>)]] = [:]
        var order: [String] = []
        for entry in entries {
            guard let first = entry.path.first else { continue }
            if entry.path.count == 1 {
                members.append(.slot(name: first, slot: entry.slot))
            } else {
                if nested[first] == nil { order.append(first) }
                nested[first, default: []].append((entry.slot, entry.path.dropFirst()))
            }
        }
        for name in order { members.append(.object(name: name, members: tree(nested[name]!))) }
        return members
    }
}

extension ManagedObject {
    /// The object as a JSON-compatible dictionary: attributes by name, composites as nested
    /// objects, to-one relationships as the target's primary key (or null).
    public func jsonObject(style: ObjectJSONStyle = .display) -> [String: Any] {
        var result = jsonObject(info.jsonMembers, style: style)
        if style == .display {
            result["_entity"] = entity.name
            result["_pk"] = objectID.primaryKey
            for (name, target) in toOne {
                switch target {
                case .stored(let pk): result[name] = pk.map { $0 as Any } ?? NSNull()
                case .object(let o): result[name] = o.map { $0.objectID.primaryKey as Any } ?? NSNull()
                }
            }
        }
        return result
    }

    private func jsonObject(_ members: [JSONMember], style: ObjectJSONStyle) -> [String: Any] {
        var result: [String: Any] = [:]
        result.reserveCapacity(members.count)
        for member in members {
            switch member {
            case .slot(let name, let slot): result[name] = Self.json(values[slot], style: style)
            case .object(let name, let nested): result[name] = jsonObject(nested, style: style)
            }
        }
        return result
    }

    static func json(_ value: Value, style: ObjectJSONStyle) -> Any {
        switch value {
        case .null: return NSNull()
        case .string(let s): return s
        case .int(let i): return i
        case .double(let d): return d
        case .decimal(let d): return style == .codable ? NSDecimalNumber(decimal: d) : "\(d)" as Any
        case .bool(let b): return b
        case .date(let d): return style == .codable ? d.timeIntervalSince1970 as Any : Value.isoString(d)
        case .data(let d): return d.base64EncodedString()
        case .uuid(let u): return u.uuidString
        case .uri(let u): return u.absoluteString
        }
    }

    /// Sets attributes and composites from a JSON-compatible dictionary (the inverse of
    /// ``jsonObject(style:)``): nested objects set composite leaves, dates may be ISO 8601
    /// text or seconds since 1970, data is base64. Keys starting with `_` and relationship
    /// names are ignored.
    ///
    /// - Throws: ``ObjectContextError`` naming the keypath of an unknown key or a bad value.
    public func setValues(fromJSON dictionary: [String: Any]) throws(ObjectContextError) {
        try setValues(fromJSON: dictionary, prefix: "")
    }

    private func setValues(fromJSON dictionary: [String: Any], prefix: String) throws(ObjectContextError) {
        for key in dictionary.keys.sorted() where !key.hasPrefix("_") {
            let raw = dictionary[key]!
            let keyPath = prefix.isEmpty ? key : "\(prefix).\(key)"
            if prefix.isEmpty, context?.model.relationship(key, of: entity.name) != nil { continue }
            if let nested = raw as? [String: Any] {
                try setValues(fromJSON: nested, prefix: keyPath)
                continue
            }
            guard let column = layout.attributeColumns[keyPath] else {
                if entityComposite(keyPath) != nil, raw is NSNull {
                    for leaf in layout.attributeColumns.keys where leaf.hasPrefix(keyPath + ".") { try setValue(Value.null, forKeyPath: leaf) }
                    continue
                }
                throw ObjectContextError(.unknownProperty, "entity '\(entity.name)' has no attribute '\(keyPath)'\(Self.suggestion(keyPath, in: Array(layout.attributeColumns.keys)))", entity: entity.name, property: keyPath, objectID: objectID)
            }
            guard let value = Self.value(fromJSON: raw, type: column.attribute.type) else {
                throw ObjectContextError(.typeMismatch, "\(raw) is not a valid \(column.attribute.type.rawValue)", entity: entity.name, property: keyPath, objectID: objectID)
            }
            try setValue(value, forKeyPath: keyPath)
        }
    }

    /// Converts a JSON scalar to a value of `type`, or nil if it does not fit.
    public static func value(fromJSON raw: Any, type: AttributeType) -> Value? {
        let value: Value
        switch raw {
        case is NSNull: return .null
        case let s as String:
            if type == .data { return Data(base64Encoded: s).map(Value.data) }
            value = .string(s)
        case let n as NSNumber:
            let isBool = String(cString: n.objCType) == "c"
            if let b = raw as? Bool, isBool || type == .bool { value = .bool(b) }
            else if let d = raw as? Decimal, type == .decimal { value = .decimal(d) }
            else if let i = raw as? Int64, Double(i) == n.doubleValue { value = .int(i) }
            else { value = .double(n.doubleValue) }
        case let b as Bool: value = .bool(b)
        case let i as Int: value = .int(Int64(i))
        case let i as Int64: value = .int(i)
        case let d as Double: value = .double(d)
        default: return nil
        }
        return value.coerced(to: type)
    }
}
