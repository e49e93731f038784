import Foundation
import GRDB
import Testing
@testable import Strata

/// Bad input to the Core Data importer: each is a distinct error, nothing is written (no
/// store, no temporary file next to the destination), and the Core Data store, its -wal,
/// -shm and directory stay exactly as they were.
@Suite("Core Data store import: bad input")
struct CoreDataImportBadInputTests {
    /// Runs the import expecting `code`; checks that nothing was written and nothing changed.
    @discardableResult
    static func refused(_ fixture: CoreDataFixture, _ code: CoreDataImportError.Code, options: CoreDataStoreImporter.Options = .init(),
                        bundle: URL? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws -> CoreDataImportError? {
        let before = try fixture.fingerprint()
        let outBefore = fixture.outputListing()
        let error = #expect(throws: CoreDataImportError.self, sourceLocation: sourceLocation) {
            try CoreDataStoreImporter(bundle: bundle ?? fixture.bundle, options: options).importStore(at: fixture.store, to: fixture.out)
        }
        #expect(error?.code == code, "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(try fixture.fingerprint() == before, "the Core Data store and its directory must not change", sourceLocation: sourceLocation)
        #expect(fixture.outputListing() == outBefore, "nothing may be written next to the destination", sourceLocation: sourceLocation)
        return error
    }

    static func library() throws -> CoreDataFixture {
        let fixture = CoreDataFixture()
        try fixture.writeLibraryBundle()
        try fixture.writeLibraryStore()
        try FileManager.default.createDirectory(at: fixture.out.deletingLastPathComponent(), withIntermediateDirectories: true)
        return fixture
    }

    @Test("a file that is not SQLite")
    func notSQLite() throws {
        let fixture = try Self.library()
        try Data("this is not a database, just text that is long enough to be a header".utf8).write(to: fixture.store)
        let error = try Self.refused(fixture, .notSQLite)
        #expect(error?.offset == 0)
        #expect(error?.description.contains("not an SQLite database") == true)
    }

    @Test("an SQLite database that is not a Core Data store")
    func notCoreData() throws {
        let fixture = try Self.library()
        try FileManager.default.removeItem(at: fixture.store)
        let queue = try DatabaseQueue(path: fixture.store.path)
        try queue.write { try $0.execute(sql: "CREATE TABLE things (id INTEGER PRIMARY KEY, name TEXT)") }
        try queue.close()
        let error = try Self.refused(fixture, .notACoreDataStore)
        #expect(error?.description.contains("no Z_PRIMARYKEY or Z_METADATA table (it has tables THINGS)") == true, "\(String(describing: error))")
    }

    @Test("a store that does not exist")
    func missingStore() throws {
        let fixture = try Self.library()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: fixture.store.path + suffix) }
        try Self.refused(fixture, .storeNotFound)
    }

    @Test("a store whose version is not in the bundle lists each version's differences")
    func unknownVersion() throws {
        let fixture = try Self.library()
        try FileManager.default.removeItem(at: fixture.bundle.appending(path: "Library 2.xcdatamodel"))
        let error = try Self.refused(fixture, .unknownVersion)
        #expect(error?.candidates.map(\.version) == ["Library", "Library 3"])
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("'Library': table ZITEM has column ZISSUE, which this version does not explain"), "\(text)")
        #expect(text.contains("'Library 3': table ZAUTHOR has no column ZRANK (attribute Author.rank)"), "\(text)")
    }

    @Test("a bundle that cannot be read", arguments: ["no versions", "broken current version file", "every version broken"])
    func unreadableBundle(_ how: String) throws {
        let fixture = try Self.library()
        switch how {
        case "no versions":
            for name in ["Library", "Library 2", "Library 3"] { try FileManager.default.removeItem(at: fixture.bundle.appending(path: "\(name).xcdatamodel")) }
        case "broken current version file":
            try Data("not a plist".utf8).write(to: fixture.bundle.appending(path: ".xccurrentversion"))
        default:
            for name in ["Library", "Library 2", "Library 3"] {
                try Data("<model><entity".utf8).write(to: fixture.bundle.appending(path: "\(name).xcdatamodel/contents"))
            }
        }
        try Self.refused(fixture, .unreadableModel)
    }

    @Test("a destination that already exists is left alone")
    func destinationExists() throws {
        let fixture = try Self.library()
        try Data("precious".utf8).write(to: fixture.out)
        let error = try Self.refused(fixture, .destinationExists)
        #expect(error?.description.contains(fixture.out.path) == true)
        #expect(try Data(contentsOf: fixture.out) == Data("precious".utf8))
    }

    @Test("a corrupt Z_METADATA")
    func corruptMetadata() throws {
        let fixture = try Self.library()
        try CoreDataFixture.writeStore(at: fixture.store, metadata: Data("bplist00 garbage that is not a property list".utf8))
        let error = try Self.refused(fixture, .invalidCoreDataMetadata)
        #expect(error?.description.contains("Z_METADATA.Z_PLIST") == true)
        #expect(error?.description.contains("bplist00") == true)
    }

    @Test("an empty Z_METADATA")
    func emptyMetadata() throws {
        let fixture = try Self.library()
        try CoreDataFixture.writeStore(at: fixture.store, metadata: nil)
        let error = try Self.refused(fixture, .invalidCoreDataMetadata)
        #expect(error?.description.contains("Z_METADATA is empty") == true)
    }

    @Test("a missing externally stored file names the object and attribute; no store appears")
    func missingExternalData() throws {
        let fixture = try Self.library()
        try FileManager.default.removeItem(at: fixture.supportDirectory.appending(path: CoreDataFixture.externalName))
        let error = try Self.refused(fixture, .missingExternalData)
        #expect(error?.entity == "Item")
        #expect(error?.objectPrimaryKey == 2)
        #expect(error?.property == "cover")
        #expect(error?.description.contains("_EXTERNAL_DATA/\(CoreDataFixture.externalName)") == true)
    }

    @Test("a value that cannot be read as its type names the object and property")
    func invalidValue() throws {
        let fixture = try Self.library()
        var rows = CoreDataFixture.rows()
        rows.append(("UPDATE ZAUTHOR SET ZBORN = 'yesterday' WHERE Z_PK = 2", []))
        try CoreDataFixture.writeStore(at: fixture.store, rows: rows)
        let error = try Self.refused(fixture, .invalidValue)
        #expect(error?.entity == "Author")
        #expect(error?.objectPrimaryKey == 2)
        #expect(error?.property == "born")
        #expect(error?.description.contains("text \"yesterday\"") == true)
    }

    @Test("a row whose Z_ENT names no entity")
    func unknownEntityNumber() throws {
        let fixture = try Self.library()
        var rows = CoreDataFixture.rows()
        rows.append(("UPDATE ZITEM SET Z_ENT = 9 WHERE Z_PK = 4", []))
        try CoreDataFixture.writeStore(at: fixture.store, rows: rows)
        let error = try Self.refused(fixture, .invalidValue)
        #expect(error?.objectPrimaryKey == 4)
        #expect(error?.description.contains("Z_ENT (9)") == true)
    }

    // MARK: - Which version

    @Test("versions with the same layout: the store's version identifier decides, else --from, else an error")
    func ambiguousVersions() throws {
        let fixture = CoreDataFixture()
        // 'Library 2b' stores data exactly like 'Library 2' (only a default differs).
        try fixture.writeLibraryBundle(extra: [("Library 2b", CoreDataFixture.contents(version: 2, identifier: "v2b").replacingOccurrences(of: #"name="pages" optional="YES" attributeType="Integer 16" defaultValueString="0""#, with: #"name="pages" optional="YES" attributeType="Integer 16" defaultValueString="1""#))])
        try fixture.writeLibraryStore()
        #expect(try CoreDataStoreImporter(bundle: fixture.bundle).identifyVersion(ofStoreAt: fixture.store).method == .versionIdentifier)
        #expect(try CoreDataStoreImporter(bundle: fixture.bundle).identifyVersion(ofStoreAt: fixture.store).version.version == "Library 2")

        try CoreDataFixture.writeStore(at: fixture.store, metadata: CoreDataFixture.metadataPlist(identifiers: []))
        let error = #expect(throws: CoreDataImportError.self) { try CoreDataStoreImporter(bundle: fixture.bundle).identifyVersion(ofStoreAt: fixture.store) }
        #expect(error?.code == .ambiguousVersion)
        #expect(error?.candidates.map(\.version) == ["Library 2", "Library 2b"])
        #expect(error?.description.contains("--from") == true)
        let given = try CoreDataStoreImporter(bundle: fixture.bundle, options: .init(fromVersion: "Library 2b")).identifyVersion(ofStoreAt: fixture.store)
        #expect(given.version.version == "Library 2b")
        #expect(given.method == .given)
    }

    @Test("--from naming a version whose layout the store does not have")
    func fromMismatch() throws {
        let fixture = try Self.library()
        let error = try Self.refused(fixture, .layoutMismatch, options: .init(fromVersion: "Library"))
        #expect(error?.description.contains("table ZTAG has column ZFEATURED") == true)
    }

    @Test("a broken version does not keep the others from matching")
    func brokenOtherVersion() throws {
        let fixture = try Self.library()
        try Data("<model><entity".utf8).write(to: fixture.bundle.appending(path: "Library.xcdatamodel/contents"))
        let match = try CoreDataStoreImporter(bundle: fixture.bundle).identifyVersion(ofStoreAt: fixture.store)
        #expect(match.version.version == "Library 2")
        #expect(match.candidates.first?.unreadable?.contains("invalid XML") == true)
        let report = try CoreDataStoreImporter(bundle: fixture.bundle).importStore(at: fixture.store, to: fixture.out)
        #expect(report.warnings.count == 1)
        #expect(report.warnings.first?.hasPrefix("version 'Library' of the model bundle cannot be read and was not needed: ") == true, "\(report.warnings)")
        #expect(report.warnings.first?.contains("line 1, column") == true, "the XML error names line and column: \(report.warnings)")
        #expect(report.warnings.first?.hasSuffix("; fix it before a migration passes it") == true)
    }
}
