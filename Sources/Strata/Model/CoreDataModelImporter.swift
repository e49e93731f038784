import Foundation

/// Imports Core Data model files: an `.xcdatamodeld` bundle (a directory of `.xcdatamodel`
/// versions whose `.xccurrentversion` property list names the current one) or a single
/// `.xcdatamodel` directory, whose `contents` file is XML.
///
/// Mapping (Core Data → Strata):
/// - `model`: `userDefinedModelVersionIdentifier` → ``ObjectModel/versionIdentifier``.
/// - `entity`: `name`, `parentEntity`, `isAbstract`, `elementID` (renaming identifier),
///   `userInfo`; `representedClassName`, `codeGenerationType` and `syncable` are ignored.
/// - `attribute`: `attributeType` (`String`, `Integer 16/32/64`, `Double`, `Float`, `Decimal`,
///   `Boolean`, `Date`, `Binary`, `UUID`, `URI`), `optional`, `defaultValueString`,
///   `defaultDateTimeInterval`, `elementID`, `transient` (kept in the model, not stored),
///   `preserveAfterDeletion`. `Transformable` becomes `data` (the archived bytes, opaque to
///   Strata) with the transformer kept in the attribute's user info (see
///   ``transformableKey``, ``valueTransformerNameKey``, ``customClassNameKey``);
///   `allowsExternalBinaryDataStorage` is kept there too (``externalStorageKey``).
///   `Object ID` and a stored `Undefined` are refused (``ModelError/Code/unsupportedFeature``);
///   a transient `Undefined` attribute becomes transient `data`.
/// - `attribute attributeType="Composite" composite="Name"` refers to a model-level
///   `<composite name="Name">` (Xcode 15; `<compositeAttribute>` is accepted too) whose
///   attributes become the composite's elements, recursively.
/// - `relationship`: `destinationEntity`, `inverseName`, `toMany`, `ordered`, `optional`,
///   `deletionRule`, `minCount` / `maxCount` (kept for to-many relationships only; Xcode
///   writes `maxCount="1"` on every to-one), `elementID`.
/// - `fetchIndex` / `fetchIndexElement` with `property` and `order`; `type="Binary"` only
///   (R-tree and expression elements are refused).
/// - `uniquenessConstraints` / `uniquenessConstraint` / `constraint value=`.
/// - Fetch requests, fetched properties, configurations and layout elements are ignored.
enum CoreDataModelImporter {
    /// User-info keys the importer adds to attributes (namespaced so that they cannot collide
    /// with the model author's keys).
    static let transformableKey = "coreData.attributeType"
    static let valueTransformerNameKey = "coreData.valueTransformerName"
    static let customClassNameKey = "coreData.customClassName"
    static let externalStorageKey = "coreData.allowsExternalBinaryDataStorage"

    // MARK: - Versions

    /// Imports one `.xcdatamodel` directory (its `contents` file), validated. The version
    /// name is the directory name without its extension (`Aircraft 2.xcdatamodel` →
    /// `Aircraft 2`).
    static func importVersion(at url: URL) throws(ModelError) -> ObjectModel {
        let contents = url.appending(path: "contents")
        let data = try ModelFile.readFile(contents)
        let version = url.deletingPathExtension().lastPathComponent
        do {
            return try importContents(data, version: version, file: contents.path).validated()
        } catch {
            throw error.inFile(contents.path, version: version)
        }
    }

    /// Maps a `contents` XML document to a model (not validated).
    static func importContents(_ data: Data, version: String, file: String?) throws(ModelError) -> ObjectModel {
        let root = try XMLElementTree.parse(data, file: file)
        guard root.name == "model" else {
            throw ModelError(.invalidFile, "expected a Core Data <model> document, found <\(root.name)>", file: file, version: version)
        }
        var mapper = Mapper(file: file, version: version)
        for definition in root.children where definition.name == "composite" || definition.name == "compositeAttribute" {
            guard let name = definition.attributes["name"] else {
                throw mapper.error(.invalidFile, "a <\(definition.name)> has no name", line: definition.line)
            }
            mapper.compositeDefinitions[name] = definition
        }
        var entities: [Entity] = []
        for element in root.children where element.name == "entity" {
            entities.append(try mapper.entity(element))
        }
        let identifier = root.attributes["userDefinedModelVersionIdentifier"].flatMap { $0.isEmpty ? nil : $0 }
        return ObjectModel(version: version, entities: entities, versionIdentifier: identifier)
    }

    // MARK: - Mapping

    private struct Mapper {
        let file: String?
        let version: String
        var compositeDefinitions: [String: XMLElementTree] = [:]

        func error(_ code: ModelError.Code, _ reason: String, entity: String? = nil, property: String? = nil, line: Int?) -> ModelError {
            ModelError(code, (line.map { "line \($0): " } ?? "") + reason, file: file, version: version, entity: entity, property: property)
        }

        func entity(_ element: XMLElementTree) throws(ModelError) -> Entity {
            guard let name = element.attributes["name"] else {
                throw error(.invalidFile, "an <entity> has no name", line: element.line)
            }
            var entity = Entity(name)
            entity.parent = element.attributes["parentEntity"]
            entity.isAbstract = Self.flag(element.attributes["isAbstract"], default: false)
            entity.renamingIdentifier = element.attributes["elementID"]
            for child in element.children {
                switch child.name {
                case "attribute":
                    if child.attributes["attributeType"] == "Composite" {
                        var seen: Set<String> = []
                        if let c = try composite(child, entity: name, path: nil, seen: &seen) { entity.composites.append(c) }
                    } else if let a = try attribute(child, entity: name, path: nil) {
                        entity.attributes.append(a)
                    }
                case "relationship":
                    entity.relationships.append(try relationship(child, entity: name))
                case "fetchIndex":
                    entity.indexes.append(try index(child, entity: name))
                case "uniquenessConstraints":
                    for constraint in child.children where constraint.name == "uniquenessConstraint" {
                        let keyPaths = constraint.children.filter { $0.name == "constraint" }.compactMap { $0.attributes["value"] }
                        entity.uniquenessConstraints.append(UniquenessConstraint(keyPaths))
                    }
                case "userInfo":
                    entity.userInfo = Self.userInfo(child)
                default:
                    continue  // fetchedProperty, compoundIndexes (pre-iOS 11), layout, …
                }
            }
            return entity
        }

        func attribute(_ element: XMLElementTree, entity: String, path: String?) throws(ModelError) -> Attribute? {
            guard let name = element.attributes["name"] else {
                throw error(.invalidFile, "an <attribute> has no name", entity: entity, line: element.line)
            }
            let property = path.map { "\($0).\(name)" } ?? name
            let isTransient = Self.flag(element.attributes["transient"], default: false)
            if element.attributes["derived"] == "YES" {
                throw error(.unsupportedFeature, "derived attributes are not supported; compute the value in the application or store it as a plain attribute", entity: entity, property: property, line: element.line)
            }
            guard let typeName = element.attributes["attributeType"] else {
                throw error(.invalidFile, "the attribute has no attributeType", entity: entity, property: property, line: element.line)
            }
            var coreDataInfo: [String: String] = [:]
            let type: AttributeType
            if let known = AttributeType(modelName: typeName) {
                type = known
            } else if typeName == "Transformable" || (typeName == "Undefined" && isTransient) {
                // The archived value: opaque bytes, kept as they are.
                type = .data
                coreDataInfo[CoreDataModelImporter.transformableKey] = typeName
                coreDataInfo[CoreDataModelImporter.valueTransformerNameKey] = element.attributes["valueTransformerName"]
                coreDataInfo[CoreDataModelImporter.customClassNameKey] = element.attributes["customClassName"]
            } else if ["Object ID", "Undefined"].contains(typeName) {
                throw error(.unsupportedFeature, "attribute type '\(typeName)' is unsupported by Strata; change the attribute to Binary Data (encoded by the application) or a supported type", entity: entity, property: property, line: element.line)
            } else {
                throw error(.invalidFile, "unknown attributeType '\(typeName)'", entity: entity, property: property, line: element.line)
            }
            if type == .data && Self.flag(element.attributes["allowsExternalBinaryDataStorage"], default: false) {
                coreDataInfo[CoreDataModelImporter.externalStorageKey] = "YES"
            }
            var attribute = Attribute(name, type)
            attribute.isOptional = Self.flag(element.attributes["optional"], default: false)
            attribute.isTransient = isTransient
            attribute.preservesValueInHistoryOnDeletion = Self.flag(element.attributes["preserveAfterDeletion"], default: false)
            attribute.renamingIdentifier = element.attributes["elementID"]
            attribute.defaultValue = coreDataInfo[CoreDataModelImporter.transformableKey] == nil
                ? try defaultValue(element, type: type, entity: entity, property: property) : nil
            if let info = element.children.first(where: { $0.name == "userInfo" }) { attribute.userInfo = Self.userInfo(info) }
            attribute.userInfo.merge(coreDataInfo) { _, imported in imported }
            return attribute
        }

        func defaultValue(_ element: XMLElementTree, type: AttributeType, entity: String, property: String) throws(ModelError) -> Value? {
            if type == .date, let interval = element.attributes["defaultDateTimeInterval"] {
                guard let seconds = Double(interval) else {
                    throw error(.invalidDefault, "defaultDateTimeInterval '\(interval)' is not a number of seconds since 2001-01-01", entity: entity, property: property, line: element.line)
                }
                return .date(Date(timeIntervalSinceReferenceDate: seconds))
            }
            guard let text = element.attributes["defaultValueString"] else { return nil }
            let value: Value?
            switch type {
            case .string: value = .string(text)
            case .int16, .int32, .int64: value = Int64(text).flatMap { Value.int($0).coerced(to: type) }
            case .double, .float: value = Double(text).map(Value.double)
            case .decimal: value = Value.string(text).coerced(to: .decimal)
            case .bool: value = ["YES": true, "NO": false, "true": true, "false": false, "1": true, "0": false][text].map(Value.bool)
            case .date: value = Value.string(text).coerced(to: .date)
            case .uuid: value = Value.string(text).coerced(to: .uuid)
            case .uri: value = Value.string(text).coerced(to: .uri)
            case .data: value = nil
            }
            guard let value else {
                throw error(.invalidDefault, "defaultValueString '\(text)' is not a valid \(type.rawValue)", entity: entity, property: property, line: element.line)
            }
            return value
        }

        func composite(_ element: XMLElementTree, entity: String, path: String?, seen: inout Set<String>) throws(ModelError) -> CompositeAttribute? {
            guard let name = element.attributes["name"] else {
                throw error(.invalidFile, "an <attribute> has no name", entity: entity, line: element.line)
            }
            let property = path.map { "\($0).\(name)" } ?? name
            if Self.flag(element.attributes["transient"], default: false) { return nil }
            let definitionName: String
            if let ref = element.attributes["composite"] {
                definitionName = ref
            } else if compositeDefinitions.count == 1, let only = compositeDefinitions.keys.first {
                definitionName = only
            } else {
                throw error(.invalidFile, "the composite attribute does not name its definition (composite=\"…\")", entity: entity, property: property, line: element.line)
            }
            guard let definition = compositeDefinitions[definitionName] else {
                throw error(.invalidFile, "composite definition '\(definitionName)' is not in the model; add a <composite name=\"\(definitionName)\"> element", entity: entity, property: property, line: element.line)
            }
            guard seen.insert(definitionName).inserted else {
                throw error(.invalidFile, "composite '\(definitionName)' contains itself", entity: entity, property: property, line: element.line)
            }
            defer { seen.remove(definitionName) }
            var composite = CompositeAttribute(name, elements: [])
            composite.isOptional = Self.flag(element.attributes["optional"], default: false)
            composite.renamingIdentifier = element.attributes["elementID"]
            if let info = element.children.first(where: { $0.name == "userInfo" }) { composite.userInfo = Self.userInfo(info) }
            for child in definition.children {
                switch child.name {
                case "attribute" where child.attributes["attributeType"] == "Composite":
                    if let inner = try self.composite(child, entity: entity, path: property, seen: &seen) { composite.elements.append(.composite(inner)) }
                case "attribute":
                    if let a = try attribute(child, entity: entity, path: property) { composite.elements.append(.attribute(a)) }
                case "relationship":
                    throw error(.relationshipInComposite, "composite '\(definitionName)' contains relationship '\(child.attributes["name"] ?? "?")'; composites hold only attributes: move it to the entity", entity: entity, property: property, line: child.line)
                default:
                    continue
                }
            }
            return composite
        }

        func relationship(_ element: XMLElementTree, entity: String) throws(ModelError) -> Relationship {
            guard let name = element.attributes["name"] else {
                throw error(.invalidFile, "a <relationship> has no name", entity: entity, line: element.line)
            }
            guard let destination = element.attributes["destinationEntity"] else {
                throw error(.invalidFile, "the relationship has no destinationEntity", entity: entity, property: name, line: element.line)
            }
            var r = Relationship(name, destination: destination)
            r.inverse = element.attributes["inverseName"]
            r.isToMany = Self.flag(element.attributes["toMany"], default: false)
            r.isOrdered = r.isToMany && Self.flag(element.attributes["ordered"], default: false)
            r.isOptional = Self.flag(element.attributes["optional"], default: false)
            r.renamingIdentifier = element.attributes["elementID"]
            if let rule = element.attributes["deletionRule"] {
                guard let deleteRule = DeleteRule(modelName: rule) else {
                    throw error(.invalidFile, "unknown deletionRule '\(rule)'", entity: entity, property: name, line: element.line)
                }
                r.deleteRule = deleteRule
            }
            if r.isToMany {
                r.minCount = element.attributes["minCount"].flatMap { Int($0) } ?? 0
                r.maxCount = element.attributes["maxCount"].flatMap { Int($0) } ?? 0
            }
            if let info = element.children.first(where: { $0.name == "userInfo" }) { r.userInfo = Self.userInfo(info) }
            return r
        }

        func index(_ element: XMLElementTree, entity: String) throws(ModelError) -> Index {
            let name = element.attributes["name"] ?? "index"
            var elements: [Index.Element] = []
            for child in element.children where child.name == "fetchIndexElement" {
                let type = child.attributes["type"] ?? "Binary"
                guard type.lowercased() == "binary" else {
                    throw error(.unsupportedFeature, "index element type '\(type)' is unsupported; Strata indexes are B-trees (type Binary)", entity: entity, property: name, line: child.line)
                }
                guard let property = child.attributes["property"] else {
                    throw error(.unsupportedFeature, "expression index elements are unsupported; index a property", entity: entity, property: name, line: child.line)
                }
                elements.append(Index.Element(property, ascending: (child.attributes["order"] ?? "ascending") != "descending"))
            }
            return Index(name, elements: elements)
        }

        static func flag(_ text: String?, default value: Bool) -> Bool {
            guard let text else { return value }
            return text == "YES" || text == "true"
        }

        static func userInfo(_ element: XMLElementTree) -> [String: String] {
            var result: [String: String] = [:]
            for entry in element.children where entry.name == "entry" {
                if let key = entry.attributes["key"] { result[key] = entry.attributes["value"] ?? "" }
            }
            return result
        }
    }
}
