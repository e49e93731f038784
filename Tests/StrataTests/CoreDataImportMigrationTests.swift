import Foundation
import GRDB
import Testing
@testable import Strata

/// `toVersion`: the imported store migrates through the bundle's versions like
/// `stratactl migrate` — lightweight hops, custom SQL stages, refusals when stored objects
/// would be invalid — and appears only when everything succeeded.
@Suite("Core Data store import: migration to a later version")
struct CoreDataImportMigrationTests {
    @Test("a lightweight hop after the import")
    func lightweight() throws {
        let fixture = CoreDataFixture()
        try fixture.writeBundle([
            ("Library", CoreDataFixture.contents(version: 1)), ("Library 2", CoreDataFixture.contents(version: 2)),
            ("Library 3", CoreDataFixture.contents(version: 2, identifier: "v3", itemExtra: #"<attribute name="isbn10" optional="YES" attributeType="String"/>"#)),
        ], current: "Library 3")
        try fixture.writeLibraryStore()
        let report = try CoreDataStoreImporter(bundle: fixture.bundle, options: .init(toVersion: "Library 3")).importStore(at: fixture.store, to: fixture.out)
        #expect(report.importedVersion == "Library 2")
        #expect(report.finalVersion == "Library 3")
        #expect(report.migration?.hops.map { "\($0.fromVersion)->\($0.toVersion)" } == ["Library 2->Library 3"])
        let metadata = try PersistentStore.metadata(at: fixture.out)
        #expect(metadata.modelVersion == "Library 3")
        #expect(metadata.history.map(\.kind) == ["created", "coredata-import", "staged"])
        #expect(metadata.deferred.isEmpty, "cleanup runs unless deferred")
        #expect(try DatabaseQueue(path: fixture.out.path).strings(#"SELECT "title" FROM "Item" WHERE "isbn10" IS NULL ORDER BY "_pk""#) == ["Dune", "Emma", "Wired", "Solo"])
    }

    @Test("a hop that would leave objects invalid is refused, naming entity, property and count; nothing appears")
    func refusedHop() throws {
        let fixture = CoreDataFixture()
        try fixture.writeLibraryBundle()
        try fixture.writeLibraryStore()
        try FileManager.default.createDirectory(at: fixture.out.deletingLastPathComponent(), withIntermediateDirectories: true)
        let error = #expect(throws: CoreDataImportError.self) {
            try CoreDataStoreImporter(bundle: fixture.bundle, options: .init(toVersion: "Library 3")).importStore(at: fixture.store, to: fixture.out)
        }
        #expect(error?.code == .migrationFailed)
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("2 existing 'Author' objects would have no value for non-optional 'rank'"), "\(text)")
        #expect(text.contains("custom stage"), "\(text)")
        #expect(fixture.outputListing().isEmpty)
    }

    @Test("a custom SQL stage fills what the next version requires")
    func customStage() throws {
        let fixture = CoreDataFixture()
        try fixture.writeLibraryBundle()
        try fixture.writeLibraryStore()
        let stages = fixture.directory.file("stages.yaml")
        try """
            stages:
              - label: rank authors
                from: Library 2
                to: Library 3
                didMigrate: |
                  UPDATE "Author" SET "rank" = 10 * "_pk";
            """.write(to: stages, atomically: true, encoding: .utf8)
        let report = try CoreDataStoreImporter(bundle: fixture.bundle, options: .init(toVersion: "Library 3", stageFile: stages))
            .importStore(at: fixture.store, to: fixture.out)
        #expect(report.finalVersion == "Library 3")
        #expect(report.migration?.hops.first?.stageLabel == "rank authors")
        #expect(try DatabaseQueue(path: fixture.out.path).strings(#"SELECT "rank" FROM "Author" ORDER BY "_pk""#) == ["10", "20"])
    }

    @Test("a stage that leaves objects invalid is rolled back and nothing appears")
    func invalidStage() throws {
        let fixture = CoreDataFixture()
        try fixture.writeLibraryBundle()
        try fixture.writeLibraryStore()
        let stages = fixture.directory.file("stages.yaml")
        try """
            stages:
              - {label: rank some authors, from: Library 2, to: Library 3, didMigrate: "UPDATE \\"Author\\" SET \\"rank\\" = 1 WHERE \\"_pk\\" = 1;"}
            """.write(to: stages, atomically: true, encoding: .utf8)
        let error = #expect(throws: CoreDataImportError.self) {
            try CoreDataStoreImporter(bundle: fixture.bundle, options: .init(toVersion: "Library 3", stageFile: stages)).importStore(at: fixture.store, to: fixture.out)
        }
        #expect(error?.code == .migrationFailed)
        #expect(error?.description.contains("1 'Author' object has no value for non-optional 'rank'") == true, "\(String(describing: error))")
        #expect(fixture.outputListing().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: fixture.out.deletingLastPathComponent().path), "the directory the import created is removed")
    }

    @Test("a migration passing a version that cannot be read is refused before anything is written")
    func brokenVersionOnPath() throws {
        let fixture = CoreDataFixture()
        try fixture.writeBundle([
            ("Library 2", CoreDataFixture.contents(version: 2)), ("Library 3", "<model><entity"),
            ("Library 4", CoreDataFixture.contents(version: 2, identifier: "v4")),
        ], current: "Library 4")
        try fixture.writeLibraryStore()
        let error = #expect(throws: CoreDataImportError.self) {
            try CoreDataStoreImporter(bundle: fixture.bundle, options: .init(toVersion: "Library 4")).importStore(at: fixture.store, to: fixture.out)
        }
        #expect(error?.code == .unreadableModel)
        #expect(error?.version == "Library 3")
        #expect(!FileManager.default.fileExists(atPath: fixture.out.path))
    }
}
