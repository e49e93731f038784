import Crypto
import Foundation
import GRDB
@testable import Strata

/// Core Data stores and model bundles built inside the test suite, the way Core Data writes
/// them: `Z<ENTITY>` tables with `Z_PK`/`Z_ENT`/`Z_OPT`, `Z_PRIMARYKEY`, `Z_METADATA` holding a
/// binary property list (written with Foundation's `PropertyListSerialization`),
/// `Z_MODELCACHE`, foreign keys with entity-number columns, `Z_FOK_` order keys, `Z_<n><NAME>`
/// join tables, external binary data in `.<store>_SUPPORT/_EXTERNAL_DATA`. The SQL is written
/// out by hand (not derived from the importer) so that the tests check the importer against
/// Core Data's layout, not against itself.
///
/// The Library model (entity numbers as Core Data assigns them: alphabetical, depth first):
/// 1 `Author` (composite `address`; ordered to-many `books`), 2 `Item` (abstract; every
/// attribute type, a Transformable, a transient, external-storage `cover`; ordered
/// many-to-many `tags`), 3 `Book : Item` (`author`, `edition` Integer 16 → `ZEDITION`), 4
/// `Magazine : Item` (`edition`, a to-one to `Tag`: Core Data gives it `ZEDITION1`; `issue`),
/// 5 `Tag` (`featured`, a to-one to `Item`, which has sub-entities → `Z2_FEATURED`).
final class CoreDataFixture {
    let directory = TemporaryDirectory("coredata")
    var bundle: URL { directory.file("Library.xcdatamodeld") }
    var store: URL { directory.file("Library.sqlite") }
    var out: URL { directory.file("out/library.sqlite") }
    var supportDirectory: URL { directory.file(".Library_SUPPORT/_EXTERNAL_DATA") }

    static let storeUUID = "5C3A1E0B-8E4F-4C1D-9A55-2F1E7D6C0B11"
    static let externalName = "0B2F6E1C-7A44-4E0B-8C3D-5D9E1F2A3B4C"
    static let externalBytes = Data("external cover bytes".utf8)
    static let itemID = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    static let extras = try! PropertyListSerialization.data(fromPropertyList: ["a", "b"], format: .binary, options: 0)

    // MARK: - Bundles

    /// Writes `Library.xcdatamodeld` with the given versions (name → `contents` XML).
    func writeBundle(_ versions: [(String, String)], current: String) throws {
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        for (name, contents) in versions {
            let directory = bundle.appending(path: "\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(contents.utf8).write(to: directory.appending(path: "contents"))
        }
        let plist = try PropertyListSerialization.data(fromPropertyList: ["_XCCurrentVersionName": "\(current).xcdatamodel"], format: .xml, options: 0)
        try plist.write(to: bundle.appending(path: ".xccurrentversion"))
    }

    /// The usual bundle: `Library` (v1), `Library 2` (the store's), `Library 3` (adds a
    /// non-optional `Author.rank` without a default). Current: `Library 3`.
    func writeLibraryBundle(extra: [(String, String)] = []) throws {
        try writeBundle([("Library", Self.contents(version: 1)), ("Library 2", Self.contents(version: 2)),
                         ("Library 3", Self.contents(version: 3))] + extra, current: "Library 3")
    }

    /// The `contents` XML of Library version 1, 2 or 3.
    static func contents(version: Int, identifier: String? = nil, itemExtra: String = "") -> String {
        let v2 = version >= 2
        return """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23A344" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="\(identifier ?? "v\(version)")">
                <entity name="Author" representedClassName="Author" syncable="YES" codeGenerationType="class">
                    <attribute name="name" attributeType="String"/>
                    <attribute name="born" optional="YES" attributeType="Date" usesScalarValueType="NO"/>
                    <attribute name="address" optional="YES" attributeType="Composite" composite="Address"/>
                    \(version >= 3 ? #"<attribute name="rank" attributeType="Integer 16" usesScalarValueType="YES"/>"# : "")
                    <relationship name="books" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="author" inverseEntity="Book"/>
                </entity>
                <entity name="Item" representedClassName="Item" isAbstract="YES" syncable="YES" codeGenerationType="class">
                    <attribute name="title" attributeType="String"/>
                    <attribute name="pages" optional="YES" attributeType="Integer 16" defaultValueString="0" usesScalarValueType="YES"/>
                    <attribute name="words" optional="YES" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                    <attribute name="isbn" optional="YES" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
                    <attribute name="rating" optional="YES" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>
                    <attribute name="weight" optional="YES" attributeType="Float" defaultValueString="0.0" usesScalarValueType="YES"/>
                    <attribute name="price" optional="YES" attributeType="Decimal" defaultValueString="0.0"/>
                    <attribute name="available" optional="YES" attributeType="Boolean" usesScalarValueType="YES"/>
                    <attribute name="published" optional="YES" attributeType="Date" usesScalarValueType="NO"/>
                    <attribute name="cover" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                    <attribute name="itemID" optional="YES" attributeType="UUID" usesScalarValueType="NO"/>
                    <attribute name="link" optional="YES" attributeType="URI"/>
                    <attribute name="scratch" optional="YES" transient="YES" attributeType="String"/>
                    \(v2 ? #"<attribute name="extras" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData" customClassName="[String]" preserveAfterDeletion="YES"/>"# : "")
                    \(itemExtra)
                    <relationship name="tags" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="items" inverseEntity="Tag"/>
                </entity>
                <entity name="Book" representedClassName="Book" parentEntity="Item" syncable="YES" codeGenerationType="class">
                    <attribute name="edition" optional="YES" attributeType="Integer 16" defaultValueString="1" usesScalarValueType="YES"/>
                    <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author" inverseName="books" inverseEntity="Author"/>
                </entity>
                <entity name="Magazine" representedClassName="Magazine" parentEntity="Item" syncable="YES" codeGenerationType="class">
                    <relationship name="edition" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Tag"/>
                    \(v2 ? #"<attribute name="issue" optional="YES" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>"# : "")
                </entity>
                <entity name="Tag" representedClassName="Tag" syncable="YES" codeGenerationType="class">
                    <attribute name="label" optional="YES" attributeType="String"/>
                    <relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item" inverseName="tags" inverseEntity="Item"/>
                    \(v2 ? #"<relationship name="featured" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Item"/>"# : "")
                </entity>
                <composite name="Address">
                    <attribute name="street" optional="YES" attributeType="String"/>
                    <attribute name="city" optional="YES" attributeType="String"/>
                </composite>
            </model>
            """
    }

    /// An `App.xcdatamodeld` with Xcode's default version names `App`, `App 2`, …, `App N`:
    /// each version adds an optional attribute to `Note` (and has a Transformable one);
    /// versions in `broken` hold malformed XML.
    static func appBundle(count: Int, current: Int, broken: Set<Int> = [], in fixture: CoreDataFixture) throws -> URL {
        var versions: [(String, String)] = []
        for n in 1...count {
            let name = n == 1 ? "App" : "App \(n)"
            let attributes = (1...n).map { #"<attribute name="field\#($0)" optional="YES" attributeType="String"/>"# }.joined()
            let contents = broken.contains(n) ? "<model><entity name=\"Note\">" : """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="build \(n)">
                    <entity name="Note" representedClassName="Note" syncable="YES">\(attributes)
                        <attribute name="payload" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData"/>
                    </entity>
                </model>
                """
            versions.append((name, contents))
        }
        let bundle = fixture.directory.file("App.xcdatamodeld")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        for (name, contents) in versions {
            let directory = bundle.appending(path: "\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(contents.utf8).write(to: directory.appending(path: "contents"))
        }
        let currentName = current == 1 ? "App" : "App \(current)"
        try PropertyListSerialization.data(fromPropertyList: ["_XCCurrentVersionName": "\(currentName).xcdatamodel"], format: .xml, options: 0)
            .write(to: bundle.appending(path: ".xccurrentversion"))
        return bundle
    }

    // MARK: - Stores

    /// The tables Core Data writes for `Library 2` (`Library` lacks `ZISSUE`, `ZEXTRAS`,
    /// `ZFEATURED`, `Z2_FEATURED`).
    static func schema(version: Int = 2) -> [String] {
        let v2 = version >= 2
        return [
            "CREATE TABLE ZAUTHOR ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZBORN TIMESTAMP, ZNAME VARCHAR, ZADDRESS_CITY VARCHAR, ZADDRESS_STREET VARCHAR )",
            "CREATE TABLE ZITEM ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAVAILABLE INTEGER, ZPAGES INTEGER, ZWORDS INTEGER, ZISBN INTEGER, ZEDITION INTEGER, \(v2 ? "ZISSUE INTEGER, " : "")ZAUTHOR INTEGER, Z_FOK_AUTHOR INTEGER, ZPUBLISHED TIMESTAMP, ZRATING FLOAT, ZWEIGHT FLOAT, ZPRICE DECIMAL, ZTITLE VARCHAR, ZEDITION1 INTEGER, ZLINK VARCHAR, ZCOVER BLOB, ZITEMID BLOB\(v2 ? ", ZEXTRAS BLOB" : "") )",
            "CREATE TABLE ZTAG ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, \(v2 ? "ZFEATURED INTEGER, Z2_FEATURED INTEGER, " : "")ZLABEL VARCHAR )",
            "CREATE TABLE Z_2TAGS ( Z_2ITEMS INTEGER, Z_5TAGS INTEGER, Z_FOK_5TAGS INTEGER, PRIMARY KEY (Z_2ITEMS, Z_5TAGS) )",
            "CREATE INDEX ZITEM_ZAUTHOR_INDEX ON ZITEM (ZAUTHOR)",
            "CREATE INDEX Z_2TAGS_Z_5TAGS_INDEX ON Z_2TAGS (Z_5TAGS, Z_2ITEMS)",
        ]
    }

    static let primaryKeys: [(Int, String, Int, Int)] = [(1, "Author", 0, 3), (2, "Item", 0, 4), (3, "Book", 2, 0), (4, "Magazine", 2, 0), (5, "Tag", 0, 2)]

    /// The rows of the `Library 2` store (values as Core Data stores them).
    static func rows(externalName: String = CoreDataFixture.externalName) -> [(String, StatementArguments)] {
        var uuid = [UInt8](repeating: 0, count: 16)
        withUnsafeBytes(of: itemID.uuid) { uuid = Array($0) }
        let inlineCover = Data([0x01]) + Data("inline cover".utf8)
        let externalCover = Data([0x02]) + Data(externalName.utf8) + Data([0])
        return [
            ("INSERT INTO ZAUTHOR VALUES (1, 1, 3, 86400.0, 'Ann', 'Paris', 'Main 1')", []),
            ("INSERT INTO ZAUTHOR VALUES (2, 1, 1, NULL, 'Bob', NULL, NULL)", []),
            ("""
             INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZAVAILABLE, ZPAGES, ZWORDS, ZISBN, ZEDITION, ZAUTHOR, Z_FOK_AUTHOR, ZPUBLISHED, ZRATING, ZWEIGHT, ZPRICE, ZTITLE, ZLINK, ZCOVER, ZITEMID, ZEXTRAS)
             VALUES (1, 3, 2, 1, 412, 188000, 9780441013593, 2, 1, 2048, 700000000.5, 4.5, 0.625, '9.99', 'Dune', 'https://example.com/dune', ?, ?, ?)
             """, [inlineCover, Data(uuid), extras]),
            ("INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZAVAILABLE, ZTITLE, ZAUTHOR, Z_FOK_AUTHOR, ZCOVER) VALUES (2, 3, 1, 0, 'Emma', 1, 1024, ?)", [externalCover]),
            ("INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZEDITION1, ZISSUE) VALUES (3, 4, 1, 'Wired', 2, 5)", []),
            ("INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZAUTHOR, Z_FOK_AUTHOR) VALUES (4, 3, 1, 'Solo', 2, 1)", []),
            ("INSERT INTO ZTAG VALUES (1, 5, 1, 1, 3, 'classic')", []),
            ("INSERT INTO ZTAG VALUES (2, 5, 1, NULL, NULL, 'new')", []),
            ("INSERT INTO Z_2TAGS VALUES (1, 2, 2048), (1, 1, 1024), (3, 2, 1)", []),
        ]
    }

    /// The metadata property list Core Data writes in `Z_METADATA.Z_PLIST`.
    static func metadataPlist(identifiers: [String] = ["v2"], uuid: String = storeUUID) -> Data {
        let hashes = Dictionary(uniqueKeysWithValues: ["Author", "Item", "Book", "Magazine", "Tag"].map { ($0, Data(SHA256.hash(data: Data($0.utf8)))) })
        let plist: [String: Any] = [
            "NSStoreType": "SQLite", "NSStoreUUID": uuid, "NSStoreModelVersionIdentifiers": identifiers,
            "NSStoreModelVersionHashes": hashes, "NSStoreModelVersionHashesVersion": 3, "NSPersistenceFrameworkVersion": 1414,
            "_NSAutoVacuumLevel": "2",
        ]
        return try! PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
    }

    /// Writes a Core Data store at `url`: `schema`, Core Data's own tables and `rows`, in WAL
    /// mode, checkpointed. `metadata` nil leaves `Z_METADATA` empty.
    @discardableResult
    static func writeStore(at url: URL, schema: [String] = schema(), rows: [(String, StatementArguments)] = rows(),
                           primaryKeys: [(Int, String, Int, Int)] = primaryKeys, metadata: Data? = metadataPlist(),
                           walOnly: [(String, StatementArguments)] = []) throws -> URL {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let building = url.deletingLastPathComponent().appending(path: ".building-\(UUID().uuidString.prefix(6)).sqlite")
        let queue = try DatabaseQueue(path: building.path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
        }
        try queue.write { db in
            for sql in schema { try db.execute(sql: sql) }
            try db.execute(sql: "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
            try db.execute(sql: "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
            try db.execute(sql: "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
            for (n, name, parent, max) in primaryKeys {
                try db.execute(sql: "INSERT INTO Z_PRIMARYKEY VALUES (?, ?, ?, ?)", arguments: [n, name, parent, max])
            }
            if let metadata { try db.execute(sql: "INSERT INTO Z_METADATA VALUES (1, ?, ?)", arguments: [storeUUID, metadata]) }
            try db.execute(sql: "INSERT INTO Z_MODELCACHE VALUES (?)", arguments: [Data((0..<64).map { UInt8($0) })])
            for (sql, arguments) in rows { try db.execute(sql: sql, arguments: arguments) }
        }
        try queue.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        // Rows committed after the checkpoint live only in the -wal; copy the files while the
        // connection is open (closing it would checkpoint them into the main file).
        try queue.write { db in for (sql, arguments) in walOnly { try db.execute(sql: sql, arguments: arguments) } }
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: building.path + suffix) {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
            try FileManager.default.copyItem(atPath: building.path + suffix, toPath: url.path + suffix)
        }
        try queue.close()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: building.path + suffix) }
        return url
    }

    /// Writes the `Library 2` store with its external data file.
    func writeLibraryStore(walOnly: [(String, StatementArguments)] = [], externalFile: Bool = true) throws {
        try Self.writeStore(at: store, walOnly: walOnly)
        if externalFile {
            try FileManager.default.createDirectory(at: supportDirectory, withIntermediateDirectories: true)
            try Self.externalBytes.write(to: supportDirectory.appending(path: Self.externalName))
        }
    }

    // MARK: - Checking that nothing changed

    /// The bytes (hashed) of the store, its -wal and -shm, and the directory's listing
    /// (hidden files and the support directory included).
    func fingerprint() throws -> [String: String] {
        var result: [String: String] = [:]
        for suffix in ["", "-wal", "-shm"] {
            let path = store.path + suffix
            result["file" + suffix] = FileManager.default.fileExists(atPath: path)
                ? Data(SHA256.hash(data: try Data(contentsOf: URL(filePath: path)))).base64EncodedString() : "absent"
        }
        let listing = (FileManager.default.enumerator(atPath: directory.url.path)?.allObjects as? [String] ?? [])
            .filter { !$0.hasPrefix("out") }.sorted()
        result["listing"] = listing.joined(separator: "\n")
        return result
    }

    /// Files under the destination's directory.
    func outputListing() -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: out.deletingLastPathComponent().path))?.sorted() ?? []
    }
}
