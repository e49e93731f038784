import Foundation
import GRDB
import Testing
@testable import Strata

/// Importing Core Data SQLite stores (built by `CoreDataFixture` as Core Data writes them):
/// every value type, inheritance, to-one links with entity numbers, ordered one-to-many,
/// ordered many-to-many, external binary data, WAL-only rows, the version match.
@Suite("Core Data store import: mapping")
struct CoreDataStoreImportTests {
    /// Imports the Library 2 fixture store and opens the result read-only.
    static func imported(_ fixture: CoreDataFixture, walOnly: [(String, StatementArguments)] = []) throws -> (CoreDataImportReport, PersistentStore) {
        try fixture.writeLibraryBundle()
        try fixture.writeLibraryStore(walOnly: walOnly)
        let report = try CoreDataStoreImporter(bundle: fixture.bundle).importStore(at: fixture.store, to: fixture.out)
        let metadata = try PersistentStore.metadata(at: fixture.out)
        let store = try PersistentStore.open(at: fixture.out, model: metadata.model, options: StoreOptions(createIfMissing: false, readOnly: true))
        return (report, store)
    }

    @Test("the store's version is found by its layout; the report counts objects per entity")
    func report() throws {
        let fixture = CoreDataFixture()
        let (report, store) = try Self.imported(fixture)
        defer { try? store.close() }
        #expect(report.importedVersion == "Library 2")
        #expect(report.method == .layout)
        #expect(report.finalVersion == "Library 2")
        #expect(report.objects == ["Author": 2, "Book": 3, "Magazine": 1, "Tag": 2])
        #expect(report.links == ["Item.tags": 3])
        #expect(report.coreDataStoreUUID == CoreDataFixture.storeUUID)
        #expect(report.coreDataVersionIdentifiers == ["v2"])
        #expect(report.warnings.isEmpty, "\(report.warnings)")
        #expect(store.model.version == "Library 2")
        #expect(store.model.checksum == (try CoreDataModelBundle(url: fixture.bundle)).version(named: "Library 2")?.model?.checksum)
    }

    @Test("the Core Data store UUID and version identifiers are recorded in the history")
    func history() throws {
        let fixture = CoreDataFixture()
        let (_, store) = try Self.imported(fixture)
        defer { try? store.close() }
        let history = try store.currentMetadata().history
        #expect(history.map(\.kind) == ["created", "coredata-import"])
        let entry = try #require(history.last)
        #expect(entry.toVersion == "Library 2")
        #expect(entry.detail.contains("NSStoreUUID \(CoreDataFixture.storeUUID)"))
        #expect(entry.detail.contains("NSStoreModelVersionIdentifiers v2"))
        #expect(entry.detail.contains("8 object(s), 3 link(s)"))
    }

    @Test("every attribute type converts: dates from 2001, booleans, UUID blobs, decimals, URIs, binary and Transformable data")
    func values() throws {
        let fixture = CoreDataFixture()
        let (_, store) = try Self.imported(fixture)
        defer { try? store.close() }
        let context = ObjectContext(store: store)
        let dune = try #require(try context.fetch("Book", where: "title == %@", "Dune").first)
        #expect(dune["pages"] == .int(412))
        #expect(dune["words"] == .int(188000))
        #expect(dune["isbn"] == .int(9780441013593))
        #expect(dune["rating"] == .double(4.5))
        #expect(dune["weight"] == .double(0.625))
        #expect(dune["price"] == .decimal(Decimal(string: "9.99")!))
        #expect(dune["available"] == .bool(true))
        #expect(dune["published"] == .date(Date(timeIntervalSinceReferenceDate: 700_000_000.5)))
        #expect(dune["cover"] == .data(Data("inline cover".utf8)), "the 0x01 inline marker is removed")
        #expect(dune["itemID"] == .uuid(CoreDataFixture.itemID))
        #expect(dune["link"] == .uri(URL(string: "https://example.com/dune")!))
        #expect(dune["extras"] == .data(CoreDataFixture.extras), "Transformable values are kept as their archived bytes")
        #expect(dune["edition"] == .int(2))
        let emma = try #require(try context.fetch("Book", where: "title == %@", "Emma").first)
        #expect(emma["available"] == .bool(false))
        #expect(emma["cover"] == .data(CoreDataFixture.externalBytes), "externally stored data is read from _EXTERNAL_DATA")
        let ann = try #require(try context.fetch("Author", where: "name == 'Ann'").first)
        #expect(ann["born"] == .date(Date(timeIntervalSinceReferenceDate: 86400)))
        #expect(ann[composite: "address"] == ["street": .string("Main 1"), "city": .string("Paris")])
        let raw = try DatabaseQueue(path: fixture.out.path)
        // Strata stores dates as seconds since 1970.
        #expect(try raw.read { try Double.fetchOne($0, sql: #"SELECT "born" FROM "Author" WHERE "_pk" = 1"#) } == 978_307_200 + 86400)
    }

    @Test("primary keys, optimistic-locking versions and the entity of each row are kept")
    func keysAndInheritance() throws {
        let fixture = CoreDataFixture()
        let (_, store) = try Self.imported(fixture)
        defer { try? store.close() }
        let raw = try DatabaseQueue(path: fixture.out.path)
        #expect(try raw.read { db in try Row.fetchAll(db, sql: #"SELECT "_pk", "_entity", "_version" FROM "Item" ORDER BY 1"#).map { "\($0[0] as Int64)|\($0[1] as String)|\($0[2] as Int64)" } }
                == ["1|Book|2", "2|Book|1", "3|Magazine|1", "4|Book|1"])
        let context = ObjectContext(store: store)
        #expect(try context.fetch("Item", sortedBy: [FetchSortDescriptor("title")]).map { $0.entity.name } == ["Book", "Book", "Book", "Magazine"])
        #expect(try context.count("Magazine") == 1)
        #expect(try raw.read { db in try db.columns(in: "Item").map(\.name) }.contains("scratch") == false, "transient attributes are not stored")
    }

    @Test("relationships: ordered one-to-many by Z_FOK_, to-one with an entity column, ordered many-to-many, a to-one sharing a name with a sibling's attribute")
    func relationships() throws {
        let fixture = CoreDataFixture()
        let (_, store) = try Self.imported(fixture)
        defer { try? store.close() }
        let context = ObjectContext(store: store)
        let ann = try #require(try context.fetch("Author", where: "name == 'Ann'").first)
        #expect(try ann.objects(forRelationship: "books").map { $0["title"] } == ["Emma", "Dune"], "ordered by Z_FOK_AUTHOR")
        let bob = try #require(try context.fetch("Author", where: "name == 'Bob'").first)
        #expect(try bob.objects(forRelationship: "books").map { $0["title"] } == ["Solo"])
        let dune = try #require(try context.fetch("Book", where: "title == 'Dune'").first)
        #expect(try dune.object(forRelationship: "author")?["name"] == "Ann")
        #expect(try dune.objects(forRelationship: "tags").map { $0["label"] } == ["classic", "new"], "ordered by Z_FOK_5TAGS")
        let wired = try #require(try context.fetch("Magazine", where: "title == 'Wired'").first)
        #expect(try wired.object(forRelationship: "edition")?["label"] == "new", "ZEDITION1 belongs to Magazine.edition")
        #expect(wired["issue"] == .int(5))
        #expect(try wired.objects(forRelationship: "tags").map { $0["label"] } == ["new"])
        let classic = try #require(try context.fetch("Tag", where: "label == 'classic'").first)
        #expect(try classic.object(forRelationship: "featured")?["title"] == "Dune", "a to-one into a hierarchy (ZFEATURED + Z2_FEATURED)")
        let new = try #require(try context.fetch("Tag", where: "label == 'new'").first)
        #expect(Set(try new.objects(forRelationship: "items").map { $0["title"] }) == ["Dune", "Wired"])
        #expect(try context.count("Book", where: "author.name == 'Ann'") == 2)
    }

    @Test("rows that live only in the -wal are imported; the original files stay byte-identical")
    func walOnlyRows() throws {
        let fixture = CoreDataFixture()
        try fixture.writeLibraryBundle()
        try fixture.writeLibraryStore(walOnly: [("INSERT INTO ZAUTHOR VALUES (3, 1, 1, NULL, 'Cy', NULL, NULL)", [])])
        let walSize = try #require(try FileManager.default.attributesOfItem(atPath: fixture.store.path + "-wal")[.size] as? Int)
        #expect(walSize > 0, "the fixture must keep a row in the -wal")
        let before = try fixture.fingerprint()
        let report = try CoreDataStoreImporter(bundle: fixture.bundle).importStore(at: fixture.store, to: fixture.out)
        #expect(report.objects["Author"] == 3)
        #expect(try DatabaseQueue(path: fixture.out.path).strings(#"SELECT "name" FROM "Author" ORDER BY "_pk""#) == ["Ann", "Bob", "Cy"])
        #expect(try fixture.fingerprint() == before, "the store, its -wal and -shm and the directory are unchanged")
        #expect(fixture.outputListing() == ["library.sqlite"], "only the new store appears")
    }

    @Test("columns whose suffixes Core Data gave the other way round are assigned by their data")
    func swappedCollisionColumns() throws {
        let fixture = CoreDataFixture()
        try fixture.writeLibraryBundle()
        // Book.edition in ZEDITION1, Magazine.edition in ZEDITION: swap the fixture's values.
        var rows = CoreDataFixture.rows()
        rows.append(("UPDATE ZITEM SET ZEDITION1 = ZEDITION, ZEDITION = NULL WHERE Z_ENT = 3", []))
        rows.append(("UPDATE ZITEM SET ZEDITION = 2, ZEDITION1 = NULL WHERE Z_ENT = 4", []))
        try CoreDataFixture.writeStore(at: fixture.store, rows: rows)
        try FileManager.default.createDirectory(at: fixture.supportDirectory, withIntermediateDirectories: true)
        try CoreDataFixture.externalBytes.write(to: fixture.supportDirectory.appending(path: CoreDataFixture.externalName))
        try CoreDataStoreImporter(bundle: fixture.bundle).importStore(at: fixture.store, to: fixture.out)
        let raw = try DatabaseQueue(path: fixture.out.path)
        #expect(try raw.strings(#"SELECT "edition" FROM "Item" WHERE "_pk" = 1"#) == ["2"])
        #expect(try raw.strings(#"SELECT "edition_id" FROM "Item" WHERE "_pk" = 3"#) == ["2"])
    }

    @Test("the importer's model keeps Transformable, transient and preserveAfterDeletion")
    func importedModel() throws {
        let fixture = CoreDataFixture()
        let (_, store) = try Self.imported(fixture)
        defer { try? store.close() }
        let item = try #require(store.model.entity(named: "Item"))
        let extras = try #require(item.attribute(named: "extras"))
        #expect(extras.type == .data)
        #expect(extras.userInfo["coreData.attributeType"] == "Transformable")
        #expect(extras.userInfo["coreData.valueTransformerName"] == "NSSecureUnarchiveFromData")
        #expect(extras.userInfo["coreData.customClassName"] == "[String]")
        #expect(extras.preservesValueInHistoryOnDeletion)
        #expect(item.attribute(named: "scratch")?.isTransient == true)
        #expect(item.attribute(named: "cover")?.userInfo["coreData.allowsExternalBinaryDataStorage"] == "YES")
        #expect(store.model.versionIdentifier == "v2")
    }

    @Test("transient attributes live on objects in memory and are never saved")
    func transientValues() throws {
        let fixture = CoreDataFixture()
        try fixture.writeLibraryBundle()
        try fixture.writeLibraryStore()
        try CoreDataStoreImporter(bundle: fixture.bundle).importStore(at: fixture.store, to: fixture.out)
        let store = try PersistentStore.open(at: fixture.out, model: try PersistentStore.metadata(at: fixture.out).model)
        defer { try? store.close() }
        let context = ObjectContext(store: store)
        let dune = try #require(try context.fetch("Book", where: "title == 'Dune'").first)
        #expect(dune["scratch"] == .null)
        dune["scratch"] = "note"
        #expect(dune["scratch"] == "note")
        dune["pages"] = 413
        try context.save()
        let other = ObjectContext(store: store)
        let again = try #require(try other.fetch("Book", where: "title == 'Dune'").first)
        #expect(again["pages"] == .int(413))
        #expect(again["scratch"] == .null)
    }
}
