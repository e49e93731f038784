import Foundation

/// Turns an ``ObjectModel`` into a model file's syntax tree.
///
/// Keys whose value is the format's default (`optional: true`, `toMany: false`, empty lists…)
/// are left out, entities and properties keep their declaration order, and defaults are
/// written in the form the decoder reads back to the same value.
enum ModelFileEncoder {
    static func encode(_ model: ObjectModel) throws(ModelError) -> ModelFileNode {
        var pairs: [(key: String, value: ModelFileNode)] = [("version", .string(model.version))]
        if let next = model.nextVersion { pairs.append(("nextVersion", .string(next))) }
        if let identifier = model.versionIdentifier { pairs.append(("versionIdentifier", .string(identifier))) }
        if !model.userInfo.isEmpty { pairs.append(("userInfo", userInfo(model.userInfo))) }
        var entities: [ModelFileNode] = []
        for entity in model.entities { entities.append(try encode(entity, version: model.version)) }
        pairs.append(("entities", .array(entities)))
        return .object(pairs)
    }

    private static func encode(_ entity: Entity, version: String) throws(ModelError) -> ModelFileNode {
        var pairs: [(key: String, value: ModelFileNode)] = [("name", .string(entity.name))]
        if let parent = entity.parent { pairs.append(("parent", .string(parent))) }
        if entity.isAbstract { pairs.append(("abstract", .bool(true))) }
        common(&pairs, renamingIdentifier: entity.renamingIdentifier, userInfo: entity.userInfo)
        if !entity.attributes.isEmpty {
            var items: [ModelFileNode] = []
            for a in entity.attributes { items.append(try encode(a, version: version, entity: entity.name, path: a.name)) }
            pairs.append(("attributes", .array(items)))
        }
        if !entity.composites.isEmpty {
            var items: [ModelFileNode] = []
            for c in entity.composites { items.append(try encode(c, version: version, entity: entity.name, path: c.name)) }
            pairs.append(("composites", .array(items)))
        }
        if !entity.relationships.isEmpty {
            pairs.append(("relationships", .array(entity.relationships.map(encode))))
        }
        if !entity.indexes.isEmpty {
            pairs.append(("indexes", .array(entity.indexes.map(encode))))
        }
        if !entity.uniquenessConstraints.isEmpty {
            pairs.append(("uniquenessConstraints", .array(entity.uniquenessConstraints.map { .array($0.keyPaths.map(ModelFileNode.string)) })))
        }
        return .object(pairs)
    }

    private static func encode(_ a: Attribute, version: String, entity: String, path: String) throws(ModelError) -> ModelFileNode {
        var pairs: [(key: String, value: ModelFileNode)] = [("name", .string(a.name)), ("type", .string(a.type.rawValue))]
        if !a.isOptional { pairs.append(("optional", .bool(false))) }
        if let value = a.defaultValue, !value.isNull {
            guard let node = defaultNode(value, type: a.type) else {
                throw ModelError(.invalidDefault, "default value \(value) (\(value.kindName)) cannot be written as a \(a.type.rawValue): \(ModelFileDecoder.defaultHint(for: a.type))", version: version, entity: entity, property: path)
            }
            pairs.append(("default", node))
        }
        if a.isTransient { pairs.append(("transient", .bool(true))) }
        if a.preservesValueInHistoryOnDeletion { pairs.append(("preserveAfterDeletion", .bool(true))) }
        common(&pairs, renamingIdentifier: a.renamingIdentifier, userInfo: a.userInfo)
        return .object(pairs)
    }

    private static func encode(_ c: CompositeAttribute, version: String, entity: String, path: String) throws(ModelError) -> ModelFileNode {
        var pairs: [(key: String, value: ModelFileNode)] = [("name", .string(c.name))]
        if !c.isOptional { pairs.append(("optional", .bool(false))) }
        common(&pairs, renamingIdentifier: c.renamingIdentifier, userInfo: c.userInfo)
        var elements: [ModelFileNode] = []
        for element in c.elements {
            switch element {
            case .attribute(let a): elements.append(try encode(a, version: version, entity: entity, path: "\(path).\(a.name)"))
            case .composite(let inner): elements.append(try encode(inner, version: version, entity: entity, path: "\(path).\(inner.name)"))
            }
        }
        pairs.append(("elements", .array(elements)))
        return .object(pairs)
    }

    private static func encode(_ r: Relationship) -> ModelFileNode {
        var pairs: [(key: String, value: ModelFileNode)] = [("name", .string(r.name)), ("destination", .string(r.destination))]
        if let inverse = r.inverse { pairs.append(("inverse", .string(inverse))) }
        if r.isToMany { pairs.append(("toMany", .bool(true))) }
        if r.isOrdered { pairs.append(("ordered", .bool(true))) }
        if !r.isOptional { pairs.append(("optional", .bool(false))) }
        if r.deleteRule != .nullify { pairs.append(("deleteRule", .string(r.deleteRule.rawValue))) }
        if r.minCount != 0 { pairs.append(("minCount", .int(r.minCount))) }
        if r.maxCount != 0 { pairs.append(("maxCount", .int(r.maxCount))) }
        common(&pairs, renamingIdentifier: r.renamingIdentifier, userInfo: r.userInfo)
        return .object(pairs)
    }

    private static func encode(_ index: Index) -> ModelFileNode {
        let elements: [ModelFileNode]
        if index.elements.allSatisfy(\.ascending) {
            elements = index.elements.map { .string($0.keyPath) }
        } else {
            elements = index.elements.map { .object([("keyPath", .string($0.keyPath)), ("ascending", .bool($0.ascending))]) }
        }
        return .object([("name", .string(index.name)), ("elements", .array(elements))])
    }

    private static func common(_ pairs: inout [(key: String, value: ModelFileNode)], renamingIdentifier: String?, userInfo info: [String: String]) {
        if let id = renamingIdentifier { pairs.append(("renamingIdentifier", .string(id))) }
        if !info.isEmpty { pairs.append(("userInfo", userInfo(info))) }
    }

    private static func userInfo(_ info: [String: String]) -> ModelFileNode {
        .object(info.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })
    }

    /// The file form of a default, or nil when the value is not of the attribute's type.
    static func defaultNode(_ value: Value, type: AttributeType) -> ModelFileNode? {
        guard let v = value.coerced(to: type) else { return nil }
        switch v {
        case .null: return nil
        case .string(let s): return .string(s)
        case .int(let i): return ModelFileNode(.number(String(i)))
        case .double(let d):
            guard d.isFinite else { return nil }
            return ModelFileNode(.number("\(d)"))
        case .decimal(let d): return .string("\(d)")
        case .bool(let b): return .bool(b)
        case .date(let date):
            let text = Value.isoString(date)
            if Value.parseISODate(text) == date {
                // Whole seconds read better without ".000".
                return .string(text.replacingOccurrences(of: ".000Z", with: "Z"))
            }
            return ModelFileNode(.number("\(date.timeIntervalSince1970)"))
        case .data(let data): return .string(data.base64EncodedString())
        case .uuid(let u): return .string(u.uuidString)
        case .uri(let u): return .string(u.absoluteString)
        }
    }
}
