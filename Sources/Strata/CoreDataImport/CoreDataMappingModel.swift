import Foundation

/// A Core Data mapping model, read from the `xcmapping.xml` of an `.xcmappingmodel` as
/// Xcode keeps it: a Core Data XML document of Xcode's editing objects — one
/// `XDDEVMAPPINGMODEL` (naming the source and destination models by path), an
/// `XDDEVENTITYMAPPING` per entity mapping (source and destination entity, mapping type,
/// custom policy class) and an `XDDEVATTRIBUTEMAPPING` / `XDDEVRELATIONSHIPMAPPING` per
/// property (its value expression as text, `valueexpressionstring`).
///
/// ```swift
/// let mapping = try CoreDataMappingModel(url: URL(filePath: "Cars2ToCars3.xcmappingmodel"))
/// mapping.sourceVersion        // "Cars 2"
/// mapping.entityMappings[0]    // CarToCar: Car -> Car, 2 attribute mappings
/// ```
public struct CoreDataMappingModel: Sendable {
    /// One entity mapping.
    public struct EntityMapping: Sendable, Hashable {
        /// Its name (`CarToCar`; Xcode's default is source + `To` + destination).
        public var name: String
        /// The source entity (nil for an added entity).
        public var sourceEntity: String?
        /// The destination entity (nil for a removed entity).
        public var destinationEntity: String?
        /// The mapping type as written (`Copy`, `Add`, `Remove`, `Transform`, `Custom`…), if any.
        public var mappingType: String?
        /// A custom `NSEntityMigrationPolicy` subclass, if one is named.
        public var policyClass: String?
        /// Attribute mappings, by destination attribute.
        public var attributeMappings: [PropertyMapping]
        /// Relationship mappings, by destination relationship.
        public var relationshipMappings: [PropertyMapping]
    }

    /// One property mapping: a destination property and its value expression.
    public struct PropertyMapping: Sendable, Hashable {
        /// The destination property.
        public var name: String
        /// The value expression as text (nil when Xcode left it empty).
        public var expression: String?
        /// The expression is stored only archived (`valueexpressiondata`), not as text.
        public var archivedOnly: Bool
    }

    /// The `.xcmappingmodel` (or its `xcmapping.xml`).
    public var url: URL
    /// The source model's version name (from its recorded path: `Cars.xcdatamodeld/Cars 2.xcdatamodel` → `Cars 2`).
    public var sourceVersion: String?
    /// The destination model's version name.
    public var destinationVersion: String?
    /// The entity mappings, in Xcode's order (`mappingnumber`).
    public var entityMappings: [EntityMapping]

    /// The largest `xcmapping.xml` read (a real one is a few hundred KiB: it embeds both models).
    public static let maxFileSize = 16 << 20

    /// Reads the mapping model at `url` (the `.xcmappingmodel` directory or its `xcmapping.xml`).
    ///
    /// - Throws: ``CoreDataMappingError`` `unreadable`, naming the file, line and column.
    public init(url: URL) throws(CoreDataMappingError) {
        self.url = url
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
        let xml = isDirectory.boolValue ? url.appending(path: "xcmapping.xml") : url
        guard exists, FileManager.default.fileExists(atPath: xml.path) else {
            throw CoreDataMappingError(.unreadable, "\(xml.path) does not exist; pass an .xcmappingmodel (a directory holding xcmapping.xml)", file: url.path)
        }
        let data: Data
        do {
            data = try InputFile.read(xml.path, limit: Self.maxFileSize, limitName: "CoreDataMappingModel.maxFileSize")
        } catch {
            throw CoreDataMappingError(.unreadable, "cannot read \(xml.path): \(error.reason)", file: url.path)
        }
        let root: XMLElementTree
        do {
            root = try XMLElementTree.parse(data, file: xml.path)
        } catch {
            throw CoreDataMappingError(.unreadable, "\(error.reason)", file: xml.path)
        }
        let objects = Self.objects(root)
        guard let model = objects.values.first(where: { $0.type == "XDDEVMAPPINGMODEL" }) else {
            throw CoreDataMappingError(.unreadable, "no XDDEVMAPPINGMODEL object: this is not the xcmapping.xml of a Core Data mapping model", file: xml.path)
        }
        sourceVersion = model.attributes["sourcemodelpath"].flatMap(Self.versionName)
        destinationVersion = model.attributes["destinationmodelpath"].flatMap(Self.versionName)
        var mappings: [(Int, EntityMapping)] = []
        let ids = model.references["entitymappings"] ?? objects.values.filter { $0.type == "XDDEVENTITYMAPPING" }.map(\.id)
        for id in ids {
            guard let object = objects[id], object.type == "XDDEVENTITYMAPPING" else { continue }
            let source = object.attributes["sourcename"].flatMap { $0.isEmpty ? nil : $0 }
            let destination = object.attributes["destinationname"].flatMap { $0.isEmpty ? nil : $0 }
            let name = object.attributes["name"].flatMap { $0.isEmpty ? nil : $0 }
                ?? ((source != nil && destination != nil) ? "\(source!)To\(destination!)" : (destination ?? source ?? id))
            func properties(_ key: String, _ type: String) -> [PropertyMapping] {
                (object.references[key] ?? []).compactMap { objects[$0] }.filter { $0.type == type }.compactMap { property in
                    guard let name = property.attributes["name"] else { return nil }
                    let text = property.attributes["valueexpressionstring"].flatMap { $0.isEmpty ? nil : $0 }
                    return PropertyMapping(name: name, expression: text, archivedOnly: text == nil && property.attributes["valueexpressiondata"] != nil)
                }.sorted { $0.name < $1.name }
            }
            let policy = object.attributes["migrationpolicyclassname"].flatMap { $0.isEmpty ? nil : $0 }
            mappings.append((Int(object.attributes["mappingnumber"] ?? "") ?? Int.max, EntityMapping(
                name: name, sourceEntity: source, destinationEntity: destination, mappingType: object.attributes["mappingtypename"],
                policyClass: policy, attributeMappings: properties("attributemappings", "XDDEVATTRIBUTEMAPPING"),
                relationshipMappings: properties("relationshipmappings", "XDDEVRELATIONSHIPMAPPING"))))
        }
        entityMappings = mappings.sorted { ($0.0, $0.1.name) < ($1.0, $1.1.name) }.map(\.1)
    }

    /// `Cars.xcdatamodeld/Cars 2.xcdatamodel` → `Cars 2`.
    static func versionName(_ path: String) -> String? {
        let last = path.split(separator: "/").last.map(String.init) ?? path
        guard last.lowercased().hasSuffix(".xcdatamodel") else { return last.isEmpty ? nil : last }
        return String(last.dropLast(".xcdatamodel".count))
    }

    /// The `.xcmappingmodel`s beside the model bundle at `bundle` (where Xcode keeps them),
    /// except those in `except` (compared by absolute, standardized path).
    public static func mappingModels(besideBundleAt bundle: URL, except: [URL] = []) -> [URL] {
        let directory = URL(fileURLWithPath: bundle.path).standardizedFileURL.deletingLastPathComponent()
        let excluded = Set(except.map { URL(fileURLWithPath: $0.path).standardizedFileURL.path })
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.lowercased().hasSuffix(".xcmappingmodel") }.sorted().map { directory.appending(path: $0) }
            .filter { !excluded.contains($0.standardizedFileURL.path) }
    }

    // MARK: - Xcode's XML store

    struct StoredObject {
        var id: String
        var type: String
        var attributes: [String: String] = [:]
        var references: [String: [String]] = [:]
    }

    /// Every `<object>` of the document, by id.
    static func objects(_ root: XMLElementTree) -> [String: StoredObject] {
        var result: [String: StoredObject] = [:]
        for element in root.children where element.name == "object" {
            guard let id = element.attributes["id"], let type = element.attributes["type"] else { continue }
            var object = StoredObject(id: id, type: type.uppercased())
            for child in element.children {
                guard let name = child.attributes["name"]?.lowercased() else { continue }
                if child.name == "attribute" { object.attributes[name] = child.text }
                if child.name == "relationship", let refs = child.attributes["idrefs"] {
                    object.references[name] = refs.split(separator: " ").map(String.init)
                }
            }
            result[id] = object
        }
        return result
    }
}
