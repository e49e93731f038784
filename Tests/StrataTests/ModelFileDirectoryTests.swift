import Foundation
import Testing
@testable import Strata

@Suite("Model directories")
struct ModelDirectoryTests {
    @Test("The Aircraft directory loads its versions in order, current last")
    func aircraft() throws {
        let directory = try ModelDirectory(url: ModelFileFixtures.configModels.appending(path: "Aircraft"))
        #expect(directory.versions.map(\.version) == ["Aircraft 1", "Aircraft 2", "Aircraft 3"])
        #expect(directory.current.version == "Aircraft 3")
        #expect(directory.versions.map(\.nextVersion) == ["Aircraft 2", "Aircraft 3", nil])
        #expect(directory.version(named: "Aircraft 2")?.entity(named: "Aircraft")?.attribute(named: "flightData")?.type == .data)
        #expect(directory.version(named: "Aircraft 4") == nil)
        for model in directory.versions {
            #expect(directory.version(checksum: model.checksum) == model)
        }
        #expect(directory.version(checksum: "nope") == nil)
        #expect(directory.files["Aircraft 1"]?.lastPathComponent == "Aircraft 1.yaml")
    }

    @Test("The Post directory mixes JSON and YAML versions")
    func post() throws {
        let directory = try ModelDirectory(url: ModelFileFixtures.configModels.appending(path: "Post"))
        #expect(directory.versions.map(\.version) == ["Post 1", "Post 2", "Post 3", "Post 4"])
        #expect(directory.files.values.map(\.pathExtension).sorted() == ["json", "json", "yaml", "yaml"])
        let v2 = try #require(directory.version(named: "Post 2")?.entity(named: "Post"))
        #expect(v2.attribute(named: "hexColor")?.renamingIdentifier == "color")
        let v3 = try #require(directory.version(named: "Post 3"))
        #expect(v3.entity(named: "Post")?.attribute(named: "content") == nil)
        #expect(v3.relationship("sections", of: "Post")?.isOrdered == true)
        #expect(directory.current.entity(named: "Post")?.attribute(named: "softDelete")?.defaultValue == .bool(false))
    }

    @Test("An .xcdatamodeld bundle is a model directory")
    func coreDataBundle() throws {
        let directory = try ModelDirectory(url: ModelFileFixtures.fixture("Aircraft.xcdatamodeld"))
        let yaml = try ModelDirectory(url: ModelFileFixtures.configModels.appending(path: "Aircraft"))
        #expect(directory.versions.map(\.version) == ["Aircraft 1", "Aircraft 2", "Aircraft 3"])
        #expect(directory.current.version == "Aircraft 3")
        #expect(directory.versions.map(\.checksum) == yaml.versions.map(\.checksum))
    }

    // MARK: - Errors

    static let v1 = """
        version: V1
        nextVersion: V2
        entities: [{name: A, attributes: [{name: x, type: string}]}]
        """
    static let v2 = """
        version: V2
        entities: [{name: A, attributes: [{name: x, type: string}], relationships: []}]
        """

    @Test("Two versions may share a checksum; lookup by checksum answers the latest")
    func duplicateChecksums() throws {
        let dir = try TemporaryModelDirectory()
        try dir.write("v1.yaml", Self.v1)
        try dir.write("v2.yaml", Self.v2)
        try dir.write("versions.yaml", "versions: [v1.yaml, v2.yaml]\n")
        let directory = try ModelDirectory(url: dir.url)
        #expect(directory.versions[0].checksum == directory.versions[1].checksum)
        #expect(directory.version(checksum: directory.versions[0].checksum)?.version == "V2")
        #expect(directory.versions(checksum: directory.versions[0].checksum).map(\.version) == ["V1", "V2"])
        #expect(directory.current.version == "V2")
    }

    struct BrokenDirectory: CustomTestStringConvertible, Sendable {
        var name: String
        var files: [String: String]
        var code: ModelError.Code
        var message: String
        var testDescription: String { name }
    }

    static let broken: [BrokenDirectory] = [
        BrokenDirectory(name: "missing manifest", files: ["v1.yaml": v1], code: .unreadableFile, message: "has no manifest"),
        BrokenDirectory(name: "manifest names a missing file",
                        files: ["v1.yaml": v1, "versions.yaml": "versions:\n  - v1.yaml\n  - v2.yaml\n"],
                        code: .unreadableFile, message: "lists 'v2.yaml', which does not exist"),
        BrokenDirectory(name: "duplicate version names",
                        files: ["v1.yaml": v1, "copy.yaml": v1, "versions.yaml": "versions: [v1.yaml, copy.yaml]\n"],
                        code: .duplicateName, message: "version 'V1' is declared by both 'v1.yaml' and 'copy.yaml'"),
        BrokenDirectory(name: "file listed twice",
                        files: ["v1.yaml": v1, "versions.yaml": "versions: [v1.yaml, v1.yaml]\n"],
                        code: .duplicateName, message: "the file 'v1.yaml' is listed twice"),
        BrokenDirectory(name: "unknown current version",
                        files: ["v1.yaml": v1, "v2.yaml": v2, "versions.yaml": "current: V3\nversions: [v1.yaml, v2.yaml]\n"],
                        code: .unknownVersion, message: "the current version 'V3' is not listed"),
        BrokenDirectory(name: "nextVersion outside the directory",
                        files: ["v1.yaml": v1, "versions.yaml": "versions: [v1.yaml]\n"],
                        code: .unknownVersion, message: "nextVersion 'V2' is not a version of this directory"),
        BrokenDirectory(name: "manifest version disagrees with the file",
                        files: ["v1.yaml": v1, "v2.yaml": v2, "versions.yaml": "versions:\n  - {version: One, file: v1.yaml}\n  - v2.yaml\n"],
                        code: .invalidFile, message: "the manifest names 'v1.yaml' version 'One', but the file declares version 'V1'"),
        BrokenDirectory(name: "unknown manifest key",
                        files: ["v1.yaml": v1, "versions.yaml": "curent: V1\nversions: [v1.yaml]\n"],
                        code: .invalidFile, message: "unknown key 'curent' in the manifest; did you mean 'current'?"),
        BrokenDirectory(name: "empty version list",
                        files: ["versions.yaml": "versions: []\n"],
                        code: .emptyModel, message: "lists no versions"),
        BrokenDirectory(name: "invalid version file",
                        files: ["v1.yaml": "version: V1\nentities: [{name: A, atributes: []}]\n", "versions.yaml": "versions: [v1.yaml]\n"],
                        code: .invalidFile, message: "unknown key 'atributes'"),
    ]

    @Test("Broken directories are refused with a precise error", arguments: broken)
    func brokenDirectory(_ broken: BrokenDirectory) throws {
        let dir = try TemporaryModelDirectory()
        for (name, text) in broken.files { try dir.write(name, text) }
        let error = #expect(throws: ModelError.self) { try ModelDirectory(url: dir.url) }
        #expect(error?.code == broken.code)
        #expect(error?.description.contains(broken.message) == true, "\(error.map(String.init(describing:)) ?? "no error")")
        #expect(error?.file?.hasPrefix(dir.url.path) == true)
    }
}
