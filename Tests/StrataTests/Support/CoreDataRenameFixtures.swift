import Foundation
import GRDB
@testable import Strata

/// A Core Data app that renamed an entity: `Cars` (v1) has `ExpensiveSportCar`; `Cars 2`
/// renames it `LuxuryCar` (renaming identifier `ExpensiveSportCar`); `Cars 3` adds an
/// optional `LuxuryCar.color`. A store written by `Cars 2` after Core Data migrated it still
/// lists `ExpensiveSportCar` in `Z_PRIMARYKEY.Z_NAME` (entity 1; `Owner` is 2), while its
/// metadata names the model's entities (`LuxuryCar`, `Owner`) and identifier `2`.
enum CoreDataRenameFixture {
    /// The `contents` XML of Cars version 1, 2 or 3.
    static func contents(version: Int) -> String {
        let car = version == 1 ? #"<entity name="ExpensiveSportCar" representedClassName="ExpensiveSportCar" syncable="YES">"#
            : #"<entity name="LuxuryCar" representedClassName="LuxuryCar" elementID="ExpensiveSportCar" syncable="YES">"#
        let carName = version == 1 ? "ExpensiveSportCar" : "LuxuryCar"
        return """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="\(version)">
                \(car)
                    <attribute name="model" optional="YES" attributeType="String"/>
                    <attribute name="price" optional="YES" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
                    \(version >= 3 ? #"<attribute name="color" optional="YES" attributeType="String"/>"# : "")
                    <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Owner" inverseName="cars" inverseEntity="\(carName)"/>
                </entity>
                <entity name="Owner" representedClassName="Owner" syncable="YES">
                    <attribute name="name" optional="YES" attributeType="String"/>
                    <relationship name="cars" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="\(carName)" inverseName="owner" inverseEntity="\(carName)"/>
                </entity>
            </model>
            """
    }

    /// Writes `Cars.xcdatamodeld` (versions 1–3, current 3) into `fixture` and returns it.
    static func writeBundle(in fixture: CoreDataFixture, versions: [Int] = [1, 2, 3]) throws -> URL {
        let bundle = fixture.directory.file("Cars.xcdatamodeld")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        for n in versions {
            let directory = bundle.appending(path: "\(name(n)).xcdatamodel")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(contents(version: n).utf8).write(to: directory.appending(path: "contents"))
        }
        try PropertyListSerialization.data(fromPropertyList: ["_XCCurrentVersionName": "\(name(versions.last!)).xcdatamodel"], format: .xml, options: 0)
            .write(to: bundle.appending(path: ".xccurrentversion"))
        return bundle
    }

    static func name(_ version: Int) -> String { version == 1 ? "Cars" : "Cars \(version)" }

    /// The store `Cars 2` leaves: table `tableName` for the cars (Core Data names it after the
    /// new entity), `Z_PRIMARYKEY` listing `ExpensiveSportCar`, metadata with `identifiers`
    /// and hashes of `hashedEntities`; `extraColumn` adds a column no version explains.
    static func writeStore(at url: URL, tableName: String = "ZLUXURYCAR", identifiers: [String] = ["2"],
                           hashedEntities: [String] = ["LuxuryCar", "Owner"], extraColumn: String? = nil) throws {
        let hashes = Dictionary(uniqueKeysWithValues: hashedEntities.map { ($0, Data($0.utf8)) })
        let plist: [String: Any] = [
            "NSStoreType": "SQLite", "NSStoreUUID": CoreDataFixture.storeUUID, "NSStoreModelVersionIdentifiers": identifiers,
            "NSStoreModelVersionHashes": hashes, "NSStoreModelVersionHashesVersion": 3,
        ]
        let metadata = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        try CoreDataFixture.writeStore(
            at: url,
            schema: [
                "CREATE TABLE \(tableName) ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZPRICE INTEGER, ZOWNER INTEGER, ZMODEL VARCHAR\(extraColumn.map { ", \($0) VARCHAR" } ?? "") )",
                "CREATE TABLE ZOWNER ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )",
                "CREATE INDEX \(tableName)_ZOWNER_INDEX ON \(tableName) (ZOWNER)",
            ],
            rows: [
                ("INSERT INTO ZOWNER VALUES (1, 2, 1, 'Ann'), (2, 2, 1, 'Bob')", []),
                ("INSERT INTO \(tableName) (Z_PK, Z_ENT, Z_OPT, ZPRICE, ZOWNER, ZMODEL) VALUES (1, 1, 1, 250000, 1, 'Carrera'), (2, 1, 2, 310000, 1, 'Huracan'), (3, 1, 1, 199000, 2, 'Vantage')", []),
            ],
            primaryKeys: [(1, "ExpensiveSportCar", 0, 3), (2, "Owner", 0, 2)], metadata: metadata)
    }
}
