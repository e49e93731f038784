import Foundation

extension ManagedObject {
    /// What an object's ``jsonObject(style:)`` in the ``ObjectJSONStyle/display`` style is made
    /// of, for a host that builds its own JSON values from it (the daemon's replies): no
    /// `[String: Any]` in between, and no dynamic casts to read one back.
    package struct DisplayParts {
        /// `_entity`.
        package let entityName: String
        /// `_pk`.
        package let primaryKey: Int64
        /// The members of the JSON object other than `_entity`, `_pk` and relationships
        /// (attributes, and composites as nested objects), naming their slots in ``values``.
        package let members: [JSONMember]
        /// Each slot's value (``Value/displayText`` for the ones that are text in JSON).
        package let values: [Value]
        /// To-one relationships: the target's primary key, nil for none (`null`).
        package let toOne: [(name: String, primaryKey: Int64?)]
    }

    /// The parts of the display JSON (see ``DisplayParts``).
    package var displayParts: DisplayParts {
        DisplayParts(entityName: entity.name, primaryKey: objectID.primaryKey, members: info.jsonMembers, values: values,
                     toOne: toOne.map { name, target in
                         switch target {
                         case .stored(let pk): (name, pk)
                         case .object(let o): (name, o?.objectID.primaryKey)
                         }
                     })
    }
}

extension Value {
    /// The value as the display JSON writes it when that is text: strings, decimals as
    /// written, dates as ISO 8601, data as base64, UUIDs and URIs; nil for null, numbers and
    /// booleans (``ManagedObject/jsonObject(style:)``).
    package var displayText: String? {
        switch self {
        case .string(let s): s
        case .decimal(let d): "\(d)"
        case .date(let d): Value.isoString(d)
        case .data(let d): d.base64EncodedString()
        case .uuid(let u): u.uuidString
        case .uri(let u): u.absoluteString
        case .null, .int, .double, .bool: nil
        }
    }
}
