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
        // Room for `_entity`, `_pk` and the to-one keys from the start: a dictionary reserved for
        // the attributes alone grew (and rehashed every key) when they were added.
        guard var members = Self.replyMembers(parts.members, values: parts.values, extra: 2 + parts.toOne.count) else { return .null }
        members["_entity"] = .string(parts.entityName)
        members["_pk"] = .int(parts.primaryKey)
        for (name, primaryKey) in parts.toOne { members[name] = primaryKey.map { .int($0) } ?? .null }
        return .object(members)
    }

    /// The attributes and composites (nested); nil when a value has no JSON form.
    private static func replyMembers(_ members: [JSONMember], values: [Value], extra: Int = 0) -> [String: JSONValue]? {
        var result: [String: JSONValue] = [:]
        result.reserveCapacity(members.count + extra)
        for member in members {
            switch member {
            case .slot(let name, let slot):
                guard let json = replyValue(values[slot]) else { return nil }
                result[name] = json
            case .object(let name, let nested):
                guard let object = replyMembers(nested, values: values) else { return nil }
                result[name] = .object(object)
            }
        }
        return result
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
