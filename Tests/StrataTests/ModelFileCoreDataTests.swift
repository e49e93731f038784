import Foundation
import Testing
@testable import Strata

@Suite("Core Data import")
struct CoreDataImportTests {
    static let versions = ["Aircraft 1", "Aircraft 2", "Aircraft 3"]

    @Test("Each .xcdatamodel version imports to the checksum of the equivalent YAML", arguments: versions)
    func aircraftVersionMatchesYAML(version: String) throws {
        let imported = try ModelFile.load(contentsOf: ModelFileFixtures.fixture("Aircraft.xcdatamodeld/\(version).xcdatamodel"))
        let yaml = try ModelFile.load(contentsOf: ModelFileFixtures.configModels.appending(path: "Aircraft/\(version).yaml"))
        #expect(imported.version == version)
        #expect(imported.checksum == yaml.checksum)
        #expect(imported.entityHashes == yaml.entityHashes)
    }

    @Test("An .xcdatamodeld bundle loads its current version")
    func bundleLoadsCurrentVersion() throws {
        let model = try ModelFile.load(contentsOf: ModelFileFixtures.fixture("Aircraft.xcdatamodeld"))
        #expect(model.version == "Aircraft 3")
        let aircraft = try #require(model.entity(named: "Aircraft"))
        #expect(aircraft.composite(named: "colorScheme")?.leaves.map(\.path) == [["primary"], ["secondary"], ["tertiary"]])
        #expect(aircraft.relationship(named: "flightParameters")?.deleteRule == .cascade)
        #expect(aircraft.relationship(named: "flightParameters")?.isToMany == true)
        #expect(aircraft.attribute(named: "tailNumber")?.isOptional == false)
        #expect(aircraft.indexes == [Index("byPrimaryColor", keyPaths: ["colorScheme.primary"])])
        let flightData = try #require(model.entity(named: "FlightData"))
        // Xcode writes maxCount="1" on to-one relationships; Strata keeps counts for to-many only.
        #expect(flightData.relationship(named: "aircraft") == Relationship("aircraft", destination: "Aircraft", inverse: "flightParameters"))
    }

    @Test("A model using every supported feature imports to the same model as its YAML twin")
    func libraryMatchesYAML() throws {
        let imported = try ModelFile.load(contentsOf: ModelFileFixtures.fixture("Library.xcdatamodel"))
        let yaml = try ModelFile.load(contentsOf: ModelFileFixtures.fixture("Library.yaml"))
        #expect(imported.checksum == yaml.checksum)
        #expect(imported == yaml)
        let item = try #require(imported.entity(named: "Item"))
        #expect(item.attribute(named: "scratch")?.isTransient == true, "transient attributes stay in the model")
        #expect(StorageLayout(model: imported).table(forEntity: "Item")?.column(named: "scratch") == nil, "but have no column")
        #expect(imported.versionIdentifier == "2")
        #expect(item.attribute(named: "published")?.defaultValue == .date(Date(timeIntervalSinceReferenceDate: 707_781_600)))
        #expect(item.attribute(named: "price")?.defaultValue == .decimal(Decimal(string: "9.99")!))
        #expect(item.attribute(named: "available")?.defaultValue == .bool(true))
        #expect(item.attribute(named: "title")?.renamingIdentifier == "name")
        #expect(item.userInfo == ["table": "items"])
        #expect(imported.entity(named: "Book")?.relationship(named: "chapters")?.maxCount == 50)
    }

    @Test("Bundle versions are ordered naturally", arguments: [
        (["Model 10", "Model 2", "Model"], ["Model", "Model 2", "Model 10"]),
        (["V3", "V1", "V12", "V2"], ["V1", "V2", "V3", "V12"]),
        (["App 2", "App 3", "App 4", "App"], ["App", "App 2", "App 3", "App 4"]),
    ])
    func naturalOrder(names: [String], sorted: [String]) {
        #expect(names.sorted(by: CoreDataModelBundle.naturalOrder) == sorted)
    }

    // MARK: - Errors

    static func contents(_ entityBody: String, extra: String = "") -> Data {
        Data("""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Aircraft" representedClassName="Aircraft" syncable="YES">
                    <attribute name="tailNumber" attributeType="String"/>
                    \(entityBody)
                </entity>
                \(extra)
            </model>
            """.utf8)
    }

    @Test("Unsupported attribute types are refused, naming the attribute", arguments: ["Object ID", "Undefined"])
    func unsupportedType(type: String) {
        let data = Self.contents(#"<attribute name="payload" optional="YES" attributeType="\#(type)"/>"#)
        let error = #expect(throws: ModelError.self) {
            try CoreDataModelImporter.importContents(data, version: "V1", file: "V1.xcdatamodel/contents")
        }
        #expect(error?.code == .unsupportedFeature)
        #expect(error?.entity == "Aircraft")
        #expect(error?.property == "payload")
        #expect(error?.description.contains("V1.xcdatamodel/contents") == true)
        #expect(error?.description.contains("'\(type)' is unsupported") == true)
    }

    @Test("A relationship inside a composite definition is refused")
    func relationshipInComposite() {
        let data = Self.contents(
            #"<attribute name="colorScheme" optional="YES" attributeType="Composite" composite="ColorScheme"/>"#,
            extra: """
                <composite name="ColorScheme">
                    <attribute name="primary" optional="YES" attributeType="String"/>
                    <relationship name="owner" optional="YES" maxCount="1" destinationEntity="Aircraft"/>
                </composite>
                """)
        let error = #expect(throws: ModelError.self) {
            try CoreDataModelImporter.importContents(data, version: "V1", file: nil)
        }
        #expect(error?.code == .relationshipInComposite)
        #expect(error?.property == "colorScheme")
        #expect(error?.description.contains("'owner'") == true)
    }

    @Test("A composite naming a missing definition is refused")
    func missingCompositeDefinition() {
        let data = Self.contents(#"<attribute name="colorScheme" optional="YES" attributeType="Composite" composite="Missing"/>"#)
        let error = #expect(throws: ModelError.self) {
            try CoreDataModelImporter.importContents(data, version: "V1", file: nil)
        }
        #expect(error?.code == .invalidFile)
        #expect(error?.description.contains("'Missing'") == true)
    }

    @Test("R-tree index elements are refused")
    func rtreeIndex() {
        let data = Self.contents("""
            <fetchIndex name="byTail"><fetchIndexElement property="tailNumber" type="RTree" order="ascending"/></fetchIndex>
            """)
        let error = #expect(throws: ModelError.self) {
            try CoreDataModelImporter.importContents(data, version: "V1", file: nil)
        }
        #expect(error?.code == .unsupportedFeature)
        #expect(error?.property == "byTail")
    }

    @Test("Malformed XML is an invalid file with a line number")
    func malformedXML() {
        let error = #expect(throws: ModelError.self) {
            try CoreDataModelImporter.importContents(Data("<model>\n<entity name=\"A\">\n</model>".utf8), version: "V1", file: "x/contents")
        }
        #expect(error?.code == .invalidFile)
        #expect(error?.description.hasPrefix("x/contents: ") == true)
        #expect(error?.description.contains("invalid XML") == true)
    }

    @Test("A bundle whose current version is missing is refused")
    func unknownCurrentVersion() throws {
        let bundle = try TemporaryModelDirectory(name: "Broken.xcdatamodeld")
        try bundle.write("V1.xcdatamodel/contents", Self.contents(""))
        try bundle.write(".xccurrentversion", Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>V9.xcdatamodel</string></dict></plist>
            """.utf8))
        let error = #expect(throws: ModelError.self) { try ModelFile.load(contentsOf: bundle.url) }
        #expect(error?.code == .unknownVersion)
        #expect(error?.description.contains("'V9.xcdatamodel'") == true)
    }
}

/// A scratch directory under the system temporary directory, removed on deinit.
final class TemporaryModelDirectory {
    let url: URL

    init(name: String = "models") throws {
        url = FileManager.default.temporaryDirectory
            .appending(path: "strata-modelfile-tests-\(UUID().uuidString)", directoryHint: .isDirectory)
            .appending(path: name, directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func write(_ path: String, _ data: Data) throws {
        let file = url.appending(path: path)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: file)
    }

    func write(_ path: String, _ text: String) throws { try write(path, Data(text.utf8)) }

    deinit { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
}
