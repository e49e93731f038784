import Foundation
import Strata
import StrataData
import Testing

/// A `@Model` class, its YAML twin and its `.xcdatamodeld` twin describe one storage layout:
/// the same version checksum (and the same entity hashes).
@Suite struct ChecksumEquivalenceTests {
    static let yamlDirectory = TestPaths.packageRoot.appending(path: "config/models/Aircraft")
    static let bundle = TestPaths.fixtures.appending(path: "Aircraft.xcdatamodeld")

    static var schemas: [(String, any VersionedSchema.Type)] { [
        ("Aircraft 1", AircraftSchemaV1.self), ("Aircraft 2", AircraftSchemaV2.self), ("Aircraft 3", AircraftSchemaV3.self),
    ] }

    @Test(arguments: [0, 1, 2])
    func swiftYAMLAndCoreDataAgree(_ index: Int) throws {
        let (version, schema) = Self.schemas[index]
        let swift = try schema.objectModel()
        let yaml = try #require(try ModelDirectory(url: Self.yamlDirectory).version(named: version))
        let coreData = try ModelDirectory(coreDataBundle: Self.bundle)
        let xcdatamodel = try #require(coreData.versions.first { $0.version == version })
        #expect(swift.checksum == yaml.checksum, "\(swift.canonicalEncoding) vs \(yaml.canonicalEncoding)")
        #expect(swift.checksum == xcdatamodel.checksum)
        #expect(swift.entityHashes == yaml.entityHashes)
    }

    @Test func aChangedPropertyChangesTheChecksum() throws {
        let v2 = try AircraftSchemaV2.objectModel()
        let v1 = try AircraftSchemaV1.objectModel()
        #expect(v1.checksum != v2.checksum)
    }
}
