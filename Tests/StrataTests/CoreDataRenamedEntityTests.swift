import Foundation
import GRDB
import Testing
@testable import Strata

/// Stores of apps that renamed an entity by renaming identifier: Core Data keeps the old
/// name in `Z_PRIMARYKEY.Z_NAME`; the import maps it through the bundle's renaming
/// identifiers and the store's own metadata, and its advice fits the cause when it cannot.
@Suite("Core Data store import: renamed entities and the store's metadata")
struct CoreDataRenamedEntityTests {
    static func cars(tableName: String = "ZLUXURYCAR", identifiers: [String] = ["2"], hashedEntities: [String] = ["LuxuryCar", "Owner"],
                     extraColumn: String? = nil) throws -> (CoreDataFixture, URL) {
        let fixture = CoreDataFixture()
        let bundle = try CoreDataRenameFixture.writeBundle(in: fixture)
        try CoreDataRenameFixture.writeStore(at: fixture.store, tableName: tableName, identifiers: identifiers,
                                             hashedEntities: hashedEntities, extraColumn: extraColumn)
        try FileManager.default.createDirectory(at: fixture.out.deletingLastPathComponent(), withIntermediateDirectories: true)
        return (fixture, bundle)
    }

    static func rows(_ url: URL) throws -> [String] {
        let queue = try DatabaseQueue(path: url.path)
        defer { try? queue.close() }
        return try queue.read { db in
            try Row.fetchAll(db, sql: #"SELECT c."_pk" AS pk, c."model" AS model, c."price" AS price, o."name" AS owner FROM "LuxuryCar" c LEFT JOIN "Owner" o ON o."_pk" = c."owner_id" ORDER BY c."_pk""#)
                .map { "\($0["pk"] as Int64) \($0["model"] as String) \($0["price"] as Int64) \($0["owner"] as String? ?? "-")" }
        }
    }

    @Test("a store listing the old entity name imports at the renaming version, objects and links intact")
    func staleName() throws {
        let (fixture, bundle) = try Self.cars()
        let before = try fixture.fingerprint()
        let report = try CoreDataStoreImporter(bundle: bundle).importStore(at: fixture.store, to: fixture.out)
        #expect(report.importedVersion == "Cars 2")
        #expect(report.method == .layout)
        #expect(report.staleEntityNames == ["LuxuryCar": "ExpensiveSportCar"])
        #expect(report.objects == ["LuxuryCar": 3, "Owner": 2])
        #expect(try Self.rows(fixture.out) == ["1 Carrera 250000 Ann", "2 Huracan 310000 Ann", "3 Vantage 199000 Bob"])
        let history = try PersistentStore.metadata(at: fixture.out).history
        #expect(history.last?.detail.contains("Z_PRIMARYKEY keeps old entity names (renamed by renaming identifier): 'ExpensiveSportCar' for 'LuxuryCar'") == true,
                "\(history.last?.detail ?? "")")
        #expect(try fixture.fingerprint() == before)
    }

    @Test("--from names the version; --to migrates on through the bundle")
    func staleNameFromAndTo() throws {
        let (fixture, bundle) = try Self.cars()
        let report = try CoreDataStoreImporter(bundle: bundle, options: .init(fromVersion: "Cars 2", toVersion: "Cars 3"))
            .importStore(at: fixture.store, to: fixture.out)
        #expect(report.method == .given)
        #expect(report.finalVersion == "Cars 3")
        #expect(try Self.rows(fixture.out).count == 3)
        #expect(try DatabaseQueue(path: fixture.out.path).strings(#"SELECT coalesce("color", 'none') FROM "LuxuryCar" ORDER BY "_pk""#) == ["none", "none", "none"])
    }

    @Test("the old table name too: versions 1 and 2 share the layout, the store's identifier chooses 2")
    func staleTableByIdentifier() throws {
        let (fixture, bundle) = try Self.cars(tableName: "ZEXPENSIVESPORTCAR")
        let report = try CoreDataStoreImporter(bundle: bundle).importStore(at: fixture.store, to: fixture.out)
        #expect(report.importedVersion == "Cars 2")
        #expect(report.method == .versionIdentifier)
        #expect(try Self.rows(fixture.out).count == 3)
    }

    @Test("without identifiers, the entities of the store's version hashes choose")
    func staleTableByHashes() throws {
        let (fixture, bundle) = try Self.cars(tableName: "ZEXPENSIVESPORTCAR", identifiers: [])
        let report = try CoreDataStoreImporter(bundle: bundle).importStore(at: fixture.store, to: fixture.out)
        #expect(report.importedVersion == "Cars 2")
        #expect(report.method == .entityHashes)
    }

    @Test("without either, --from is asked for, and the error says why")
    func staleTableAmbiguous() throws {
        let (fixture, bundle) = try Self.cars(tableName: "ZEXPENSIVESPORTCAR", identifiers: [], hashedEntities: [])
        let error = try CoreDataImportBadInputTests.refused(fixture, .ambiguousVersion, bundle: bundle)
        #expect(error?.description.contains("2 versions of the bundle have the store's layout ('Cars', 'Cars 2') and the store records no version identifier; name the store's version with --from") == true,
                "\(String(describing: error))")
    }

    @Test("metadata naming a version of the bundle whose layout differs: the advice is to restore that version, not to add one")
    func metadataPointsAtChangedVersion() throws {
        let (fixture, bundle) = try Self.cars(extraColumn: "ZMILEAGE")
        let error = try CoreDataImportBadInputTests.refused(fixture, .unknownVersion, bundle: bundle)
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("the store's metadata says it was written with version 'Cars 2' of Cars.xcdatamodeld (its NSStoreModelVersionIdentifiers (2) name it)"), "\(text)")
        #expect(text.contains("restore 'Cars 2' as it shipped"))
        #expect(!text.contains("add that version"))
        #expect(text.contains("'Cars 2': table ZLUXURYCAR has column ZMILEAGE, which this version does not explain"), "\(text)")
    }

    @Test("a version the bundle lacks: add it (the store's identifier names no version)")
    func versionMissing() throws {
        let fixture = CoreDataFixture()
        let bundle = try CoreDataRenameFixture.writeBundle(in: fixture, versions: [1, 3])
        try CoreDataRenameFixture.writeStore(at: fixture.store)
        let error = try CoreDataImportBadInputTests.refused(fixture, .unknownVersion, bundle: bundle)
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("add that version to the bundle. The store's version identifiers (2) name no version of the bundle."), "\(text)")
    }

    @Test("an unrelated bundle is told as such")
    func unrelatedBundle() throws {
        let (fixture, _) = try Self.cars()
        try fixture.writeLibraryBundle()
        let error = try CoreDataImportBadInputTests.refused(fixture, .unknownVersion)
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("the model bundle Library.xcdatamodeld is unrelated to the store: the store's entities (Z_PRIMARYKEY: ExpensiveSportCar, Owner) are in none of its versions (which have Author, Book, Item, Magazine, Tag); pass the model bundle of the app that wrote the store with --model"), "\(text)")
        #expect(!text.contains("add that version"))
    }

    @Test("stratactl import-coredata imports the renamed store and says which name was stale", .enabled(if: StratactlProcess.executable != nil))
    func command() throws {
        let (fixture, bundle) = try Self.cars()
        let result = try StratactlProcess.run(["import-coredata", "--model", bundle.path, "--store", fixture.store.path, "--out", fixture.out.path, "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Version: Cars 2 (the only version with the store's layout)\nEntity LuxuryCar is listed in Z_PRIMARYKEY under its old name ExpensiveSportCar (renamed by renaming identifier)\n"), "\(result.stdout)")
        let json = try StratactlProcess.run(["import-coredata", "--model", bundle.path, "--store", fixture.store.path, "--out", fixture.out.path + "2", "--quiet", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["staleEntityNames"] as? [String: String] == ["LuxuryCar": "ExpensiveSportCar"])
    }
}

/// A single `.xcdatamodel` given as the model is a bundle of one version.
@Suite("Core Data store import: a single .xcdatamodel as the model")
struct CoreDataSingleVersionTests {
    @Test("the store imports with the one version given")
    func singleVersion() throws {
        let fixture = CoreDataFixture()
        let bundle = try CoreDataRenameFixture.writeBundle(in: fixture)
        try CoreDataRenameFixture.writeStore(at: fixture.store)
        let version = bundle.appending(path: "Cars 2.xcdatamodel")
        let report = try CoreDataStoreImporter(bundle: version).importStore(at: fixture.store, to: fixture.out)
        #expect(report.importedVersion == "Cars 2")
        #expect(report.objects == ["LuxuryCar": 3, "Owner": 2])
        let missing = #expect(throws: CoreDataImportError.self) { try CoreDataStoreImporter(bundle: fixture.directory.file("None.xcdatamodel")) }
        #expect(missing?.code == .unreadableModel)
        #expect(missing?.description.contains("no such model version") == true, "\(String(describing: missing))")
    }
}
