import Strata
import StrataVarlink

extension ManagedObject {
    /// The object as a reply carries it (the display style: `_entity`, `_pk`, dates as
    /// ISO 8601 text, data as base64, to-one relationships as primary keys), built straight
    /// from its values: exactly `JSONValue(foundation: jsonObject(style: .display))`
    /// (`ObjectReplyTests` compares them), without the `[String: Any]` in between. `null` when
    /// a value has no JSON form (an infinite double), as before.
    var replyValue: JSONValue {
        let parts = displayParts
        var members: [String: JSONValue] = [:]
        members.reserveCapacity(parts.values.count + 2 + parts.toOne.count)
        members["_entity"] = .string(parts.entityName)
        members["_pk"] = .int(parts.primaryKey)
        var composites: [String: [String: JSONValue]] = [:]
        for (path, value) in zip(parts.keyPaths, parts.values) {
            guard let json = Self.replyValue(value) else { return .null }
            switch path.count {
            case 1: members[path[0]] = json
            case 2: composites[path[0], default: [:]][path[1]] = json
            default: Self.insert(json, at: path.dropFirst(), into: &composites[path[0], default: [:]])
            }
        }
        for (name, leaves) in composites { members[name] = .object(leaves) }
        for (name, primaryKey) in parts.toOne { members[name] = primaryKey.map { .int($0) } ?? .null }
        return .object(members)
    }

    /// Composite leaves deeper than one level (`a.b.c`), nested as the display JSON nests them.
    private static func insert(_ value: JSONValue, at path: ArraySlice<String>, into members: inout [String: JSONValue]) {
        guard let first = path.first else { return }
        if path.count == 1 {
            members[first] = value
            return
        }
        var nested: [String: JSONValue] = [:]
        if case .object(let existing)? = members[first] { nested = existing }
        insert(value, at: path.dropFirst(), into: &nested)
        members[first] = .object(nested)
    }

    private static func replyValue(_ value: Value) -> JSONValue? {
        switch value {
        case .null: .null
        case .int(let i): .int(i)
        case .double(let d): JSONValue.number(d)
        case .bool(let b): .bool(b)
        default: value.displayText.map { .string($0) }
        }
    }
}
