import Foundation
import Testing
@testable import Strata

/// Real Xcode bundles: default version names, `.xccurrentversion`, Transformable and
/// transient attributes, version identifiers, and one broken version among good ones.
@Suite("Core Data model bundles")
struct CoreDataBundleTests {
    @Test("Xcode's default names order naturally; .xccurrentversion names the current version")
    func naturalOrder() throws {
        let fixture = CoreDataFixture()
        let directory = try ModelDirectory(url: try CoreDataFixture.appBundle(count: 11, current: 10, in: fixture))
        #expect(directory.versions.map(\.version) == ["App"] + (2...11).map { "App \($0)" })
        #expect(directory.current.version == "App 10")
        #expect(directory.versions.map(\.versionIdentifier) == (1...11).map { "build \($0)" })
    }

    @Test("a store at the first version migrates hop by hop, not in one jump")
    func progressivePath() throws {
        let fixture = CoreDataFixture()
        let directory = try ModelDirectory(url: try CoreDataFixture.appBundle(count: 4, current: 4, in: fixture))
        let path = try ProgressiveMigrationGraph(directory: directory).path(fromChecksum: directory.versions[0].checksum, to: "App 4")
        #expect(path.versions.map(\.version) == ["App", "App 2", "App 3", "App 4"])
    }

    @Test("a Transformable attribute no longer makes the bundle unusable")
    func transformable() throws {
        let fixture = CoreDataFixture()
        let directory = try ModelDirectory(url: try CoreDataFixture.appBundle(count: 2, current: 2, in: fixture))
        let payload = try #require(directory.current.entity(named: "Note")?.attribute(named: "payload"))
        #expect(payload.type == .data)
        #expect(payload.userInfo == ["coreData.attributeType": "Transformable", "coreData.valueTransformerName": "NSSecureUnarchiveFromData"])
    }

    @Test("a broken version is reported for that version; the others are read")
    func brokenVersion() throws {
        let fixture = CoreDataFixture()
        let url = try CoreDataFixture.appBundle(count: 4, current: 4, broken: [2], in: fixture)
        let bundle = try CoreDataModelBundle(url: url)
        #expect(bundle.versions.map(\.name) == ["App", "App 2", "App 3", "App 4"])
        #expect(bundle.readableModels.map(\.version) == ["App", "App 3", "App 4"])
        #expect(bundle.unreadableVersions.map(\.name) == ["App 2"])
        #expect(bundle.version(named: "App 2")?.error?.description.contains("App 2.xcdatamodel/contents") == true)
        let directory = try ModelDirectory(url: url)
        #expect(directory.versions.map(\.version) == ["App", "App 3", "App 4"])
        #expect(directory.unreadableVersions.map { "\($0.name)@\($0.position)" } == ["App 2@1"])
        #expect(directory.unreadableVersions(between: "App", and: "App 4").map(\.name) == ["App 2"])
        #expect(directory.unreadableVersions(between: "App 3", and: "App 4").isEmpty)
    }

    @Test("a broken current version is an error naming it and the other broken versions")
    func brokenCurrent() throws {
        let fixture = CoreDataFixture()
        let url = try CoreDataFixture.appBundle(count: 3, current: 3, broken: [1, 3], in: fixture)
        let error = #expect(throws: ModelError.self) { try ModelDirectory(url: url) }
        #expect(error?.description.contains("the current version 'App 3' cannot be read (1 other version(s) cannot be read either: App)") == true, "\(String(describing: error))")
        let loaded = #expect(throws: ModelError.self) { try ModelFile.load(contentsOf: url) }
        #expect(loaded?.version == "App 3")
    }

    @Test("model files keep transient, preserveAfterDeletion and the version identifier")
    func modelFileRoundTrip() throws {
        let model = ObjectModel(version: "V", entities: [Entity("Note", attributes: [
            Attribute("body", .string, preservesValueInHistoryOnDeletion: true), Attribute("draft", .string, isTransient: true),
        ])], versionIdentifier: "build 7")
        for format in ModelFileFormat.allCases {
            let decoded = try ModelFile.decode(try ModelFile.encode(model, format: format), format: format)
            #expect(decoded == model)
        }
        let stored = ObjectModel(version: "V", entities: [Entity("Note", attributes: [Attribute("body", .string)])])
        #expect(model.checksum == stored.checksum, "transient attributes, identifiers and history flags are not part of the checksum")
    }

    @Test("an index on a transient attribute is refused")
    func transientIndex() {
        let model = ObjectModel(version: "V", entities: [Entity("Note", attributes: [Attribute("draft", .string, isTransient: true)],
                                                                indexes: [Index("byDraft", keyPaths: ["draft"])])])
        #expect(model.validationErrors().map(\.reason) == ["index 'byDraft' names transient attribute 'draft', which is not stored; index a stored attribute or make it non-transient"])
    }
}
