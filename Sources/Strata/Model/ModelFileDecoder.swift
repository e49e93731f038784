import Foundation

/// Turns a model file's syntax tree into an ``ObjectModel``, with errors that name the file,
/// version, entity, property, line and offending key.
///
/// Every mapping is checked against the keys its place allows: an unknown key is an error,
/// with a suggestion when it looks like a typo of a known one.
///
/// Defaults of the wrong type do not stop decoding: they are collected in ``problems`` (and the
/// attribute gets no default), so that a validating caller can report them together with the
/// model's other problems.
final class ModelFileDecoder {
    let file: String?
    private(set) var version: String?
    /// Problems found that did not stop decoding (defaults of the wrong type), in file order.
    private(set) var problems: [ModelError] = []

    init(file: String?) { self.file = file }

    // MARK: - Keys

    static let modelKeys = ["version", "nextVersion", "versionIdentifier", "userInfo", "entities"]
    static let entityKeys = [
        "name", "parent", "abstract", "renamingIdentifier", "userInfo", "attributes", "composites",
        "relationships", "indexes", "uniquenessConstraints",
    ]
    static let attributeKeys = ["name", "type", "optional", "default", "renamingIdentifier", "userInfo", "transient", "preserveAfterDeletion"]
    static let compositeKeys = ["name", "type", "elements", "optional", "renamingIdentifier", "userInfo"]
    static let relationshipKeys = [
        "name", "destination", "inverse", "toMany", "ordered", "optional", "deleteRule", "minCount",
        "maxCount", "renamingIdentifier", "userInfo",
    ]
    /// Keys that only a relationship has: their presence inside a composite means a relationship
    /// was placed there.
    static let relationshipOnlyKeys: Set<String> = ["destination", "inverse", "toMany", "ordered", "deleteRule", "minCount", "maxCount"]
    static let indexKeys = ["name", "elements"]
    static let indexElementKeys = ["keyPath", "ascending"]

    // MARK: - Model

    func decodeModel(_ root: ModelFileNode) throws(ModelError) -> ObjectModel {
        let top = try mapping(root, what: "the model file", at: Location(path: "top level"))
        try top.checkKeys(Self.modelKeys, in: "the model file")
        let versionName = try string(top.required("version", in: "the model file"), at: top.location(for: "version"))
        version = versionName
        let location = Location(path: "top level")
        let next = try top["nextVersion"].map { node throws(ModelError) in try string(node, at: location.appending("nextVersion")) }
        let userInfo = try top["userInfo"].map { node throws(ModelError) in try self.userInfo(node, at: location.appending("userInfo")) } ?? [:]
        let versionIdentifier = try top["versionIdentifier"].map { node throws(ModelError) in try string(node, at: location.appending("versionIdentifier")) }
        let entityNodes = try list(top.required("entities", in: "the model file"), at: location.appending("entities"))
        var entities: [Entity] = []
        for (i, node) in entityNodes.enumerated() {
            entities.append(try decodeEntity(node, at: Location(path: "entities[\(i)]")))
        }
        return ObjectModel(version: versionName, entities: entities, nextVersion: next, userInfo: userInfo, versionIdentifier: versionIdentifier)
    }

    /// The start of a named mapping (an entity, an attribute, a relationship, …): its `name`, its
    /// fields, and the location inside it, whose `place` (entity or property) is the name, or
    /// `propertyPath.name` inside a composite; the fields report errors there.
    private func named(_ node: ModelFileNode, _ what: String, at location: Location, place: WritableKeyPath<Location, String?>,
                       propertyPath: String? = nil) throws(ModelError) -> (name: String, fields: Fields, location: Location) {
        let fields = try mapping(node, what: what, at: location)
        let name = try string(fields.required("name", in: what), at: location.appending("name"))
        var inside = location
        inside[keyPath: place] = propertyPath.map { "\($0).\(name)" } ?? name
        return (name, fields.relocated(inside), inside)
    }

    // MARK: - Entity

    private func decodeEntity(_ node: ModelFileNode, at location: Location) throws(ModelError) -> Entity {
        let (name, f, loc) = try named(node, "an entity", at: location, place: \.entity)
        try f.checkKeys(Self.entityKeys, in: "entity '\(name)'")

        var entity = Entity(name)
        entity.parent = try f["parent"].map { n throws(ModelError) in try string(n, at: loc.appending("parent")) }
        entity.isAbstract = try f["abstract"].map { n throws(ModelError) in try bool(n, at: loc.appending("abstract")) } ?? false
        entity.renamingIdentifier = try f["renamingIdentifier"].map { n throws(ModelError) in try string(n, at: loc.appending("renamingIdentifier")) }
        entity.userInfo = try f["userInfo"].map { n throws(ModelError) in try userInfo(n, at: loc.appending("userInfo")) } ?? [:]

        for (i, n) in try optionalList(f["attributes"], at: loc.appending("attributes")).enumerated() {
            entity.attributes.append(try decodeAttribute(n, at: loc.appending("attributes[\(i)]")))
        }
        for (i, n) in try optionalList(f["composites"], at: loc.appending("composites")).enumerated() {
            entity.composites.append(try decodeComposite(n, at: loc.appending("composites[\(i)]")))
        }
        for (i, n) in try optionalList(f["relationships"], at: loc.appending("relationships")).enumerated() {
            entity.relationships.append(try decodeRelationship(n, at: loc.appending("relationships[\(i)]")))
        }
        for (i, n) in try optionalList(f["indexes"], at: loc.appending("indexes")).enumerated() {
            entity.indexes.append(try decodeIndex(n, at: loc.appending("indexes[\(i)]")))
        }
        for (i, n) in try optionalList(f["uniquenessConstraints"], at: loc.appending("uniquenessConstraints")).enumerated() {
            entity.uniquenessConstraints.append(try decodeConstraint(n, at: loc.appending("uniquenessConstraints[\(i)]")))
        }
        return entity
    }

    // MARK: - Attributes and composites

    private func decodeAttribute(_ node: ModelFileNode, at location: Location, propertyPath: String? = nil) throws(ModelError) -> Attribute {
        let (name, f, loc) = try named(node, "an attribute", at: location, place: \.property, propertyPath: propertyPath)
        if f["elements"] != nil {
            throw loc.error(.invalidFile, "an attribute has no 'elements': declare composite attributes under the entity's 'composites' key", line: f.line)
        }
        if let key = f.keys.first(where: Self.relationshipOnlyKeys.contains) {
            throw loc.error(.invalidFile, "'\(key)' belongs to a relationship: declare relationships under the entity's 'relationships' key", line: f.line)
        }
        try f.checkKeys(Self.attributeKeys, in: "attribute '\(name)'")
        let typeNode = try f.required("type", in: "attribute '\(name)'")
        let typeName = try string(typeNode, at: loc.appending("type"))
        let type = try Self.attributeType(named: typeName, at: loc, line: typeNode.line)
        var attribute = Attribute(name, type)
        attribute.isOptional = try f["optional"].map { n throws(ModelError) in try bool(n, at: loc.appending("optional")) } ?? true
        if let d = f["default"] { attribute.defaultValue = defaultValue(d, type: type, at: loc.appending("default")) }
        attribute.renamingIdentifier = try f["renamingIdentifier"].map { n throws(ModelError) in try string(n, at: loc.appending("renamingIdentifier")) }
        attribute.userInfo = try f["userInfo"].map { n throws(ModelError) in try userInfo(n, at: loc.appending("userInfo")) } ?? [:]
        attribute.isTransient = try f["transient"].map { n throws(ModelError) in try bool(n, at: loc.appending("transient")) } ?? false
        attribute.preservesValueInHistoryOnDeletion = try f["preserveAfterDeletion"].map { n throws(ModelError) in try bool(n, at: loc.appending("preserveAfterDeletion")) } ?? false
        return attribute
    }

    private func decodeComposite(_ node: ModelFileNode, at location: Location, propertyPath: String? = nil) throws(ModelError) -> CompositeAttribute {
        let (name, f, loc) = try named(node, "a composite attribute", at: location, place: \.property, propertyPath: propertyPath)
        let path = loc.property ?? name
        if f["relationships"] != nil {
            throw loc.error(.relationshipInComposite, "composite '\(path)' declares relationships; a composite holds only attributes and composites: move the relationship to the entity's 'relationships'", line: f.line)
        }
        try f.checkKeys(Self.compositeKeys, in: "composite '\(path)'")
        if let typeNode = f["type"] {
            let t = try string(typeNode, at: loc.appending("type"))
            guard t.lowercased() == "composite" else {
                throw loc.error(.invalidFile, "a composite's 'type' can only be 'composite' (found '\(t)'); remove 'elements' to declare a plain attribute", line: typeNode.line)
            }
        }
        var composite = CompositeAttribute(name, elements: [])
        composite.isOptional = try f["optional"].map { n throws(ModelError) in try bool(n, at: loc.appending("optional")) } ?? true
        composite.renamingIdentifier = try f["renamingIdentifier"].map { n throws(ModelError) in try string(n, at: loc.appending("renamingIdentifier")) }
        composite.userInfo = try f["userInfo"].map { n throws(ModelError) in try userInfo(n, at: loc.appending("userInfo")) } ?? [:]
        let elements = try list(f.required("elements", in: "composite '\(path)'"), at: loc.appending("elements"))
        for (i, element) in elements.enumerated() {
            let elementLoc = loc.appending("elements[\(i)]")
            let ef = try mapping(element, what: "a composite element", at: elementLoc)
            if let key = ef.keys.first(where: Self.relationshipOnlyKeys.contains) {
                let elementName = ef["name"].flatMap { try? string($0, at: elementLoc) } ?? "#\(i)"
                var relLoc = elementLoc
                relLoc.property = "\(path).\(elementName)"
                throw relLoc.error(.relationshipInComposite, "'\(key)' makes this element a relationship, and composites cannot contain relationships: move it to the entity's 'relationships'", line: ef.line)
            }
            if ef["elements"] != nil {
                composite.elements.append(.composite(try decodeComposite(element, at: elementLoc, propertyPath: path)))
            } else {
                composite.elements.append(.attribute(try decodeAttribute(element, at: elementLoc, propertyPath: path)))
            }
        }
        return composite
    }

    static func attributeType(named name: String, at location: Location, line: Int?) throws(ModelError) -> AttributeType {
        if let type = AttributeType(modelName: name) { return type }
        let lowered = name.lowercased()
        if ["transformable", "objectid", "object id", "undefined"].contains(lowered) {
            throw location.error(.unsupportedFeature, "attribute type '\(name)' is not supported by Strata; store the value as 'data' (encoded by the application) or as a supported type", line: line)
        }
        if lowered == "composite" {
            throw location.error(.invalidFile, "composite attributes are declared under the entity's 'composites' key, with 'elements'", line: line)
        }
        let known = AttributeType.allCases.map(\.rawValue).joined(separator: ", ")
        throw location.error(.invalidFile, "unknown attribute type '\(name)'; use one of \(known) (Core Data spellings such as 'Integer 16' or 'Boolean' also work)", line: line)
    }

    // MARK: - Relationships, indexes, constraints

    private func decodeRelationship(_ node: ModelFileNode, at location: Location) throws(ModelError) -> Relationship {
        let (name, f, loc) = try named(node, "a relationship", at: location, place: \.property)
        try f.checkKeys(Self.relationshipKeys, in: "relationship '\(name)'")
        let destination = try string(f.required("destination", in: "relationship '\(name)'"), at: loc.appending("destination"))
        var r = Relationship(name, destination: destination)
        r.inverse = try f["inverse"].map { n throws(ModelError) in try string(n, at: loc.appending("inverse")) }
        r.isToMany = try f["toMany"].map { n throws(ModelError) in try bool(n, at: loc.appending("toMany")) } ?? false
        r.isOrdered = try f["ordered"].map { n throws(ModelError) in try bool(n, at: loc.appending("ordered")) } ?? false
        r.isOptional = try f["optional"].map { n throws(ModelError) in try bool(n, at: loc.appending("optional")) } ?? true
        if let ruleNode = f["deleteRule"] {
            let ruleName = try string(ruleNode, at: loc.appending("deleteRule"))
            guard let rule = DeleteRule(modelName: ruleName) else {
                throw loc.error(.invalidFile, "unknown delete rule '\(ruleName)'; use one of \(DeleteRule.allCases.map(\.rawValue).joined(separator: ", "))", line: ruleNode.line)
            }
            r.deleteRule = rule
        }
        r.minCount = try f["minCount"].map { n throws(ModelError) in try int(n, at: loc.appending("minCount")) } ?? 0
        r.maxCount = try f["maxCount"].map { n throws(ModelError) in try int(n, at: loc.appending("maxCount")) } ?? 0
        r.renamingIdentifier = try f["renamingIdentifier"].map { n throws(ModelError) in try string(n, at: loc.appending("renamingIdentifier")) }
        r.userInfo = try f["userInfo"].map { n throws(ModelError) in try userInfo(n, at: loc.appending("userInfo")) } ?? [:]
        return r
    }

    private func decodeIndex(_ node: ModelFileNode, at location: Location) throws(ModelError) -> Index {
        let (name, f, loc) = try named(node, "an index", at: location, place: \.property)
        try f.checkKeys(Self.indexKeys, in: "index '\(name)'")
        var elements: [Index.Element] = []
        for (i, e) in try list(f.required("elements", in: "index '\(name)'"), at: loc.appending("elements")).enumerated() {
            let eLoc = loc.appending("elements[\(i)]")
            if case .object = e.content {
                let ef = try mapping(e, what: "an index element", at: eLoc)
                try ef.checkKeys(Self.indexElementKeys, in: "an element of index '\(name)'")
                let keyPath = try string(ef.required("keyPath", in: "an element of index '\(name)'"), at: eLoc.appending("keyPath"))
                let ascending = try ef["ascending"].map { n throws(ModelError) in try bool(n, at: eLoc.appending("ascending")) } ?? true
                elements.append(Index.Element(keyPath, ascending: ascending))
            } else {
                elements.append(Index.Element(try string(e, at: eLoc)))
            }
        }
        return Index(name, elements: elements)
    }

    private func decodeConstraint(_ node: ModelFileNode, at location: Location) throws(ModelError) -> UniquenessConstraint {
        if case .array(let items) = node.content {
            var keyPaths: [String] = []
            for (i, item) in items.enumerated() { keyPaths.append(try string(item, at: location.appending("[\(i)]"))) }
            return UniquenessConstraint(keyPaths)
        }
        return UniquenessConstraint([try string(node, at: location)])
    }

    // MARK: - Scalars

    func string(_ node: ModelFileNode, at location: Location) throws(ModelError) -> String {
        switch node.content {
        case .string(let s): return s
        case .plain(let s) where !node.isNull: return s
        default: throw location.error(.invalidFile, "expected a string, found \(node.kindDescription)", line: node.line)
        }
    }

    func bool(_ node: ModelFileNode, at location: Location) throws(ModelError) -> Bool {
        switch node.content {
        case .bool(let b): return b
        case .plain(let s):
            switch s.lowercased() {
            case "true", "yes": return true
            case "false", "no": return false
            default: break
            }
        default: break
        }
        throw location.error(.invalidFile, "expected true or false, found \(node.kindDescription)", line: node.line)
    }

    func int(_ node: ModelFileNode, at location: Location) throws(ModelError) -> Int {
        switch node.content {
        case .number(let s), .plain(let s):
            if let i = Int(s) { return i }
        default: break
        }
        throw location.error(.invalidFile, "expected an integer, found \(node.kindDescription)", line: node.line)
    }

    private func userInfo(_ node: ModelFileNode, at location: Location) throws(ModelError) -> [String: String] {
        guard case .object(let pairs) = node.content else {
            if node.isNull { return [:] }
            throw location.error(.invalidFile, "'userInfo' must be a mapping of names to strings, found \(node.kindDescription)", line: node.line)
        }
        var result: [String: String] = [:]
        for (key, value) in pairs {
            switch value.content {
            case .string(let s), .plain(let s), .number(let s): result[key] = s
            case .bool(let b): result[key] = b ? "true" : "false"
            default:
                throw location.appending(key).error(.invalidFile, "user info values must be strings, found \(value.kindDescription)", line: value.line)
            }
        }
        return result
    }

    /// Converts a default given in a file to a value of `type`.
    ///
    /// Numbers and booleans are written as such; dates as ISO 8601 strings (or seconds since
    /// 1970); UUIDs, URIs and decimals as strings (decimals also as numbers); data as base64.
    func defaultValue(_ node: ModelFileNode, type: AttributeType, at location: Location) -> Value? {
        if node.isNull { return nil }
        let value: Value?
        switch (node.content, type) {
        case (.string(let s), .string), (.plain(let s), .string): value = .string(s)
        case (.number(let s), _) where type.isInteger, (.plain(let s), _) where type.isInteger:
            value = Int64(s).flatMap { Value.int($0).coerced(to: type) }
        case (.number(let s), .double), (.plain(let s), .double), (.number(let s), .float), (.plain(let s), .float):
            value = Double(s).flatMap { $0.isFinite ? Value.double($0) : nil }
        case (.number(let s), .decimal), (.plain(let s), .decimal), (.string(let s), .decimal):
            value = Value.string(s).coerced(to: .decimal)
        case (.bool(let b), .bool): value = .bool(b)
        case (.plain(let s), .bool): value = ["true": true, "yes": true, "false": false, "no": false][s.lowercased()].map(Value.bool)
        case (.string(let s), .date), (.plain(let s), .date):
            value = Value.parseISODate(s).map(Value.date) ?? (node.content.isPlain ? Double(s).map { .date(Date(timeIntervalSince1970: $0)) } : nil)
        case (.number(let s), .date): value = Double(s).map { .date(Date(timeIntervalSince1970: $0)) }
        case (.string(let s), .data), (.plain(let s), .data): value = Data(base64Encoded: s).map(Value.data)
        case (.string(let s), .uuid), (.plain(let s), .uuid): value = Value.string(s).coerced(to: .uuid)
        case (.string(let s), .uri), (.plain(let s), .uri): value = Value.string(s).coerced(to: .uri)
        default: value = nil
        }
        guard let value else {
            problems.append(location.error(.invalidDefault, "default \(node.kindDescription) is not a valid \(type.rawValue): \(Self.defaultHint(for: type))", line: node.line))
            return nil
        }
        return value
    }

    static func defaultHint(for type: AttributeType) -> String {
        switch type {
        case .string: return "give a string"
        case .int16, .int32, .int64: return "give an integer in the range of \(type.rawValue)"
        case .double, .float: return "give a number"
        case .decimal: return "give a number or a decimal string such as \"12.50\""
        case .bool: return "give true or false"
        case .date: return "give an ISO 8601 date such as \"2023-06-05T10:00:00Z\""
        case .data: return "give base64 text"
        case .uuid: return "give a UUID string such as \"E621E1F8-C36C-495A-93FC-0C247A3E6E5F\""
        case .uri: return "give an absolute URI string such as \"https://example.com\""
        }
    }

    // MARK: - Structure helpers

    struct Location {
        var path: String
        var entity: String?
        var property: String?

        func appending(_ component: String) -> Location {
            var copy = self
            copy.path = component.hasPrefix("[") ? path + component : path + "." + component
            return copy
        }
    }

    struct Fields {
        let pairs: [(key: String, value: ModelFileNode)]
        let line: Int?
        var location: Location

        var keys: [String] { pairs.map(\.key) }

        /// The value of `key`, nil when absent or null.
        subscript(key: String) -> ModelFileNode? {
            guard let node = pairs.first(where: { $0.key == key })?.value, !node.isNull else { return nil }
            return node
        }

        func location(for key: String) -> Location { location.appending(key) }

        func relocated(_ location: Location) -> Fields {
            var copy = self
            copy.location = location
            return copy
        }

        func required(_ key: String, in what: String) throws(ModelError) -> ModelFileNode {
            guard let node = self[key] else {
                throw location.error(.invalidFile, "\(what) has no '\(key)'; add it", line: line)
            }
            return node
        }

        func checkKeys(_ allowed: [String], in what: String) throws(ModelError) {
            for (key, value) in pairs where !allowed.contains(key) {
                var reason = "unknown key '\(key)' in \(what)"
                if let suggestion = Self.closest(to: key, in: allowed) { reason += "; did you mean '\(suggestion)'?" }
                reason += " (allowed keys: \(allowed.joined(separator: ", ")))"
                throw location.error(.invalidFile, reason, line: value.line ?? line)
            }
        }

        /// The allowed key nearest to a misspelled one, if it is close enough to be a typo.
        static func closest(to key: String, in allowed: [String]) -> String? {
            let lowered = key.lowercased()
            let scored = allowed.map { ($0, editDistance(lowered, $0.lowercased())) }.min { $0.1 < $1.1 }
            guard let (best, distance) = scored, distance <= max(2, key.count / 3) else { return nil }
            return best
        }

        static func editDistance(_ a: String, _ b: String) -> Int {
            let a = Array(a), b = Array(b)
            var previous = Array(0...b.count)
            for i in 1...max(a.count, 1) where !a.isEmpty {
                var row = [i] + Array(repeating: 0, count: b.count)
                for j in 1...max(b.count, 1) where !b.isEmpty {
                    row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                }
                previous = row
            }
            return a.isEmpty ? b.count : previous[b.count]
        }
    }

    func mapping(_ node: ModelFileNode, what: String, at location: Location) throws(ModelError) -> Fields {
        guard case .object(let pairs) = node.content else {
            throw location.error(.invalidFile, "expected \(what) (a mapping of keys to values), found \(node.kindDescription)", line: node.line)
        }
        return Fields(pairs: pairs, line: node.line, location: location)
    }

    func list(_ node: ModelFileNode, at location: Location) throws(ModelError) -> [ModelFileNode] {
        guard case .array(let items) = node.content else {
            throw location.error(.invalidFile, "expected a list, found \(node.kindDescription)", line: node.line)
        }
        return items
    }

    private func optionalList(_ node: ModelFileNode?, at location: Location) throws(ModelError) -> [ModelFileNode] {
        guard let node else { return [] }
        return try list(node, at: location)
    }
}

extension ModelFileNode.Content {
    var isPlain: Bool { if case .plain = self { return true } else { return false } }
}

extension ModelFileDecoder.Location {
    /// An error at this location; `file` and `version` are attached by ``ModelFile/decode(_:format:file:)``.
    func error(_ code: ModelError.Code, _ reason: String, line: Int?) -> ModelError {
        let place = line.map { "\(path) (line \($0))" } ?? path
        return ModelError(code, "\(place): \(reason)", entity: entity, property: property)
    }
}
