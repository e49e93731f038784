import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Imports Core Data model files: an `.xcdatamodeld` bundle (a directory of `.xcdatamodel`
/// versions whose `.xccurrentversion` property list names the current one) or a single
/// `.xcdatamodel` directory, whose `contents` file is XML.
///
/// Mapping (Core Data → Strata):
/// - `entity`: `name`, `parentEntity`, `isAbstract`, `elementID` (renaming identifier),
///   `userInfo`; `representedClassName`, `codeGenerationType` and `syncable` are ignored.
/// - `attribute`: `attributeType` (`String`, `Integer 16/32/64`, `Double`, `Float`, `Decimal`,
///   `Boolean`, `Date`, `Binary`, `UUID`, `URI`), `optional`, `defaultValueString`,
///   `defaultDateTimeInterval`, `elementID`. `Transformable`, `Object ID` and `Undefined`
///   are refused (``ModelError/Code/unsupportedFeature``); transient attributes are skipped
///   (they are not stored).
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
    // MARK: - Bundles

    /// The versions of an `.xcdatamodeld` bundle, in natural order of their names
    /// (`Model`, `Model 2`, …, `Model 10`), and the name of the current one.
    static func versionURLs(ofBundle url: URL) throws(ModelError) -> (versions: [URL], current: URL) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: url.path)
        } catch {
            throw ModelError(.unreadableFile, "cannot list the model bundle: \(error.localizedDescription)", file: url.path)
        }
        let versions = names.filter { $0.lowercased().hasSuffix(".xcdatamodel") }
            .sorted(by: naturalOrder)
            .map { url.appending(path: $0, directoryHint: .isDirectory) }
        guard !versions.isEmpty else {
            throw ModelError(.invalidFile, "the bundle holds no .xcdatamodel version", file: url.path)
        }
        let currentFile = url.appending(path: ".xccurrentversion")
        guard FileManager.default.fileExists(atPath: currentFile.path) else {
            if versions.count == 1 { return (versions, versions[0]) }
            throw ModelError(.unreadableFile, "no .xccurrentversion file names the current version among \(versions.count) versions; choose one in Xcode (Model Version) or add the file", file: url.path)
        }
        let plistData = try ModelFile.readFile(currentFile)
        let plist = try? PropertyListSerialization.propertyList(from: plistData, options: [], format: nil)
        guard let dict = plist as? [String: Any], let currentName = dict["_XCCurrentVersionName"] as? String else {
            throw ModelError(.invalidFile, "expected a property list with the key _XCCurrentVersionName", file: currentFile.path)
        }
        guard let current = versions.first(where: { $0.lastPathComponent == currentName }) else {
            throw ModelError(.unknownVersion, "the current version '\(currentName)' is not in the bundle (it has \(versions.map(\.lastPathComponent).joined(separator: ", ")))", file: currentFile.path)
        }
        return (versions, current)
    }

    /// Imports the current version of an `.xcdatamodeld` bundle.
    static func importCurrentVersion(ofBundle url: URL) throws(ModelError) -> ObjectModel {
        try importVersion(at: versionURLs(ofBundle: url).current)
    }

    /// Imports one `.xcdatamodel` directory (its `contents` file), validated. The version
    /// name is the directory name without its extension (`Aircraft 2.xcdatamodel` →
    /// `Aircraft 2`).
    static func importVersion(at url: URL) throws(ModelError) -> ObjectModel {
        let contents = url.appending(path: "contents")
        let data = try ModelFile.readFile(contents)
        let version = url.deletingPathExtension().lastPathComponent
        let model = try importContents(data, version: version, file: contents.path)
        do {
            return try model.validated()
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
        return ObjectModel(version: version, entities: entities)
    }

    /// `Model 2` before `Model 10`.
    static func naturalOrder(_ a: String, _ b: String) -> Bool {
        func chunks(_ s: String) -> [(String, Int?)] {
            var result: [(String, Int?)] = []
            var current = ""
            var isDigit = false
            for c in s {
                if !current.isEmpty && c.isNumber != isDigit {
                    result.append((current, isDigit ? Int(current) : nil))
                    current = ""
                }
                isDigit = c.isNumber
                current.append(c)
            }
            if !current.isEmpty { result.append((current, isDigit ? Int(current) : nil)) }
            return result
        }
        let ca = chunks(a), cb = chunks(b)
        for (x, y) in zip(ca, cb) where x.0 != y.0 {
            if let nx = x.1, let ny = y.1, nx != ny { return nx < ny }
            return x.0 < y.0
        }
        return ca.count < cb.count
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
            if Self.flag(element.attributes["transient"], default: false) { return nil }
            if element.attributes["derived"] == "YES" {
                throw error(.unsupportedFeature, "derived attributes are not supported; compute the value in the application or store it as a plain attribute", entity: entity, property: property, line: element.line)
            }
            guard let typeName = element.attributes["attributeType"] else {
                throw error(.invalidFile, "the attribute has no attributeType", entity: entity, property: property, line: element.line)
            }
            guard let type = AttributeType(modelName: typeName) else {
                if ["Transformable", "Object ID", "Undefined"].contains(typeName) {
                    throw error(.unsupportedFeature, "attribute type '\(typeName)' is unsupported by Strata; change the attribute to Binary Data (encoded by the application) or a supported type", entity: entity, property: property, line: element.line)
                }
                throw error(.invalidFile, "unknown attributeType '\(typeName)'", entity: entity, property: property, line: element.line)
            }
            var attribute = Attribute(name, type)
            attribute.isOptional = Self.flag(element.attributes["optional"], default: false)
            attribute.renamingIdentifier = element.attributes["elementID"]
            attribute.defaultValue = try defaultValue(element, type: type, entity: entity, property: property)
            if let info = element.children.first(where: { $0.name == "userInfo" }) { attribute.userInfo = Self.userInfo(info) }
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

// MARK: - XML tree

/// A parsed XML element: name, attributes, child elements and the line it starts on.
struct XMLElementTree {
    var name: String
    var attributes: [String: String]
    var children: [XMLElementTree] = []
    var line: Int?

    /// The deepest element nesting accepted: a Core Data model nests a few levels; a deeper
    /// document would make the tree's (recursive) destruction exhaust the stack.
    static let maxDepth = 200

    /// Parses a whole document with Foundation's `XMLParser` (no external entities).
    static func parse(_ data: Data, file: String?) throws(ModelError) -> XMLElementTree {
        // Foundation's XMLParser traps on some invalid UTF-8 in tags (found by fuzzing);
        // Core Data writes UTF-8, so anything else is refused first, with its offset.
        if let offset = invalidUTF8Offset(data) {
            throw ModelError(.invalidFile, "the file is not valid UTF-8 (at byte offset \(offset)); Core Data model contents are UTF-8 XML", file: file)
        }
        // Foundation's XMLParser crashes on a processing instruction without data (`<?x?>`,
        // found by fuzzing); a Core Data model has none besides the XML declaration.
        if let offset = processingInstructionOffset(data) {
            throw ModelError(.invalidFile, "processing instructions (<?…?>) are not part of a Core Data model (at byte offset \(offset)); remove it", file: file)
        }
        let parser = XMLParser(data: data)
        let builder = Builder()
        parser.delegate = builder
        parser.shouldResolveExternalEntities = false
        let parsed = parser.parse()
        if builder.tooDeep {
            throw ModelError(.invalidFile, "line \(parser.lineNumber): elements are nested more than \(maxDepth) levels deep; this is not a Core Data model", file: file)
        }
        guard parsed, let root = builder.root else {
            let line = parser.lineNumber
            let reason = parser.parserError.map { "\($0.localizedDescription)" } ?? "not a well-formed XML document"
            throw ModelError(.invalidFile, "line \(line): invalid XML: \(reason)", file: file)
        }
        return root
    }

    /// The offset of the first `<?` that is not the XML declaration at the start, or nil.
    static func processingInstructionOffset(_ data: Data) -> Int? {
        let bytes = [UInt8](data)
        var start = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        if bytes[start...].starts(with: Array("<?xml".utf8)), let end = firstIndex(of: Array("?>".utf8), in: bytes, from: start) {
            start = end + 2
        }
        return firstIndex(of: Array("<?".utf8), in: bytes, from: start)
    }

    private static func firstIndex(of needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
        for i in start...(bytes.count - needle.count) where bytes[i] == needle[0] && Array(bytes[i..<i + needle.count]) == needle {
            return i
        }
        return nil
    }

    /// The offset of the first byte that is not part of valid UTF-8, or nil.
    static func invalidUTF8Offset(_ data: Data) -> Int? {
        var iterator = data.makeIterator()
        var decoder = UTF8()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }

    /// Collects elements; used only on the parsing thread, for the duration of one parse.
    private final class Builder: NSObject, XMLParserDelegate {
        var stack: [XMLElementTree] = []
        var root: XMLElementTree?
        var tooDeep = false

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            guard stack.count < XMLElementTree.maxDepth else {
                tooDeep = true
                stack.removeAll()
                parser.abortParsing()
                return
            }
            stack.append(XMLElementTree(name: elementName, attributes: attributes, line: parser.lineNumber))
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            guard let element = stack.popLast() else { return }
            if stack.isEmpty { root = element } else { stack[stack.count - 1].children.append(element) }
        }
    }
}
