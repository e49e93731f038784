import Foundation

/// A key path of a predicate or sort, resolved against the models' metadata: its segments as
/// the model names them (`colorScheme.primary`, `owner.name`, `crew.@count`) and what it ends at.
struct PredicatePath {
    /// The segments (property names; `@count` for a to-many's count).
    var segments: [String]
    /// What the path ends at.
    var target: Target

    enum Target {
        /// A model: the predicate's input, or a to-one relationship's target.
        case model(ModelSchemaMetadata)
        /// A to-many relationship whose elements are of this model.
        case toMany(ModelSchemaMetadata)
        /// A composite attribute.
        case composite(CompositeMetadata)
        /// An attribute or composite leaf.
        case attribute(AttributeType)
        /// A to-many relationship's count.
        case count
    }

    /// The key path as the string-keyed API writes it.
    var keyPath: String { segments.joined(separator: ".") }

    var isAttribute: Bool { if case .attribute = target { true } else if case .count = target { true } else { false } }
    var isString: Bool { if case .attribute(.string) = target { true } else { false } }
    var isBoolean: Bool { if case .attribute(.bool) = target { true } else { false } }

    /// The path one step further, through the property `keyPath` names.
    func appending(_ keyPath: AnyKeyPath, model: String) throws -> PredicatePath {
        switch target {
        case .model(let metadata):
            guard let property = metadata.property(for: keyPath) else {
                throw PredicateTranslationError(.unsupportedKeyPath, "\(keyPath) is not a persisted property of '\(metadata.entityName)' (a computed or @Transient property has no column); use one of \(metadata.properties.map(\.name).joined(separator: ", "))", model: model)
            }
            return PredicatePath(segments: segments + [property.name], target: Self.target(of: property))
        case .composite(let composite):
            guard let element = composite.element(for: keyPath) else {
                throw PredicateTranslationError(.unsupportedKeyPath, "\(keyPath) is not an element of composite '\(keyPath)' (\(composite.typeName))", model: model)
            }
            switch element.kind {
            case .attribute(let type, _): return PredicatePath(segments: segments + [element.name], target: .attribute(type))
            case .composite(let nested, _): return PredicatePath(segments: segments + [element.name], target: .composite(nested()))
            }
        case .toMany(let metadata):
            throw PredicateTranslationError(.unsupportedKeyPath, "'\(self.keyPath)' is a to-many relationship of \(metadata.entityName) models: \(keyPath) of it has no SQL translation; use count, isEmpty, contains(_:) or contains(where:)", model: model)
        case .attribute(let type):
            throw PredicateTranslationError(.unsupportedKeyPath, "\(keyPath) of the \(type.rawValue) attribute '\(self.keyPath)' has no SQL translation (compare the attribute itself)", model: model)
        case .count:
            throw PredicateTranslationError(.unsupportedKeyPath, "'\(self.keyPath)' is a number", model: model)
        }
    }

    static func target(of property: PropertyMetadata) -> Target {
        switch property.kind {
        case .attribute(let type, _, _): return .attribute(type)
        case .composite(let metadata, _, _): return .composite(metadata)
        case .relationship(let r): return r.toMany ? .toMany(r.destination.schemaMetadata) : .model(r.destination.schemaMetadata)
        }
    }

    /// A key path of several components (`\Aircraft.colorScheme?.primary`, which the
    /// metadata's table does not hold as one), resolved from its description segment by
    /// segment against the metadata. Swift prints such a key path as
    /// `\Aircraft.<computed 0x… (Optional<ColorScheme>)>?.primary`: a model's properties are
    /// computed (their accessors go through the row storage), so each is recognised by the
    /// description of its own key path; composite elements are stored and print their names.
    static func resolve(_ keyPath: AnyKeyPath, in metadata: ModelSchemaMetadata) throws(PredicateTranslationError) -> PredicatePath {
        if let name = metadata.nameByKeyPath[keyPath], let property = metadata.properties.first(where: { $0.name == name }) {
            return PredicatePath(segments: [name], target: target(of: property))
        }
        let text = String(describing: keyPath)
        func refuse(_ reason: String) -> PredicateTranslationError {
            PredicateTranslationError(.unsupportedKeyPath, "\(text): \(reason)", model: metadata.entityName)
        }
        guard let first = metadata.properties.compactMap({ property -> (PropertyMetadata, String)? in
            let own = String(describing: property.keyPath)
            return text.hasPrefix(own) ? (property, own) : nil
        }).max(by: { $0.1.count < $1.1.count }) else {
            throw refuse("it does not start with a persisted property of '\(metadata.entityName)'")
        }
        var path = PredicatePath(segments: [first.0.name], target: target(of: first.0))
        var rest = text.dropFirst(first.1.count)
        while !rest.isEmpty {
            rest = rest.drop { $0 == "?" || $0 == "!" }
            guard rest.first == "." else { break }
            rest = rest.dropFirst()
            switch path.target {
            case .model(let m):
                guard let next = m.properties.compactMap({ property -> (PropertyMetadata, String)? in
                    let component = componentText(of: property.keyPath)
                    return rest.hasPrefix(component) ? (property, component) : nil
                }).max(by: { $0.1.count < $1.1.count }) else {
                    throw refuse("'\(rest)' is not a persisted property of '\(m.entityName)'")
                }
                path = PredicatePath(segments: path.segments + [next.0.name], target: target(of: next.0))
                rest = rest.dropFirst(next.1.count)
            case .composite(let c):
                let name = String(rest.prefix { $0 != "." && $0 != "?" && $0 != "!" })
                guard let element = c.elements.first(where: { $0.name == name }) else {
                    throw refuse("'\(name)' is not an element of \(c.typeName)")
                }
                switch element.kind {
                case .attribute(let type, _): path = PredicatePath(segments: path.segments + [name], target: .attribute(type))
                case .composite(let nested, _): path = PredicatePath(segments: path.segments + [name], target: .composite(nested()))
                }
                rest = rest.dropFirst(name.count)
            default:
                throw refuse("it goes past an attribute or a to-many relationship")
            }
        }
        return path
    }

    /// The last component of a key path's description: `<computed 0x… (String)>` for a
    /// model's property, the name for a stored one.
    static func componentText(of keyPath: AnyKeyPath) -> String {
        let text = String(describing: keyPath)
        if let start = text.range(of: "<computed "), let end = text.range(of: ")>", range: start.upperBound..<text.endIndex) {
            return String(text[start.lowerBound..<end.upperBound])
        }
        return String(text.split(separator: ".").last ?? "")
    }
}

/// Comparisons of two constants, done in Swift when a predicate folds (`?? fallback`).
enum PredicateFolding {
    static func evaluate(_ a: Value, _ op: PredicateOperator, _ b: Value) -> Bool? {
        switch op {
        case .equalTo: return a == b || (a.doubleValue != nil && a.doubleValue == b.doubleValue)
        case .notEqualTo: return !(a == b || (a.doubleValue != nil && a.doubleValue == b.doubleValue))
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            guard let order = compare(a, b) else { return nil }
            switch op {
            case .lessThan: return order < 0
            case .lessThanOrEqualTo: return order <= 0
            case .greaterThan: return order > 0
            default: return order >= 0
            }
        case .contains, .beginsWith, .endsWith:
            guard case .string(let s) = a, case .string(let t) = b else { return nil }
            return op == .contains ? (t.isEmpty || s.contains(t)) : op == .beginsWith ? s.hasPrefix(t) : s.hasSuffix(t)
        default:
            return nil
        }
    }

    private static func compare(_ a: Value, _ b: Value) -> Int? {
        switch (a, b) {
        case (.string(let x), .string(let y)): return x < y ? -1 : x == y ? 0 : 1
        case (.date(let x), .date(let y)): return x < y ? -1 : x == y ? 0 : 1
        default:
            guard let x = a.doubleValue, let y = b.doubleValue else { return nil }
            return x < y ? -1 : x == y ? 0 : 1
        }
    }
}
