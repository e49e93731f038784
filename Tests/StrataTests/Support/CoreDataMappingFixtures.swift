import Foundation
import GRDB
@testable import Strata

/// A Core Data app that shipped a mapping model: `Shop` (v1) has `Customer` (`first`,
/// `last`, `vip`, one-to-one `buddy` ↔ `Pet.owner`); `Shop 2` replaces them with
/// `displayName`, `shout`, and the one-to-one `companion` ↔ `Pet.keeper` — changes no
/// renaming identifier explains, so `ShopToShop2.xcmappingmodel` says how: keypath and
/// `FUNCTION` expressions and a relationship filled through another entity mapping. The
/// `xcmapping.xml` is written the way Xcode keeps it (a Core Data XML document of
/// `XDDEVMAPPINGMODEL`, `XDDEVENTITYMAPPING`, `XDDEVATTRIBUTEMAPPING` and
/// `XDDEVRELATIONSHIPMAPPING` objects).
enum CoreDataMappingFixture {
    static func contents(version: Int) -> String {
        let customer = version == 1
            ? """
              <attribute name="first" optional="YES" attributeType="String"/>
              <attribute name="last" optional="YES" attributeType="String"/>
              <relationship name="buddy" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Pet" inverseName="owner" inverseEntity="Pet"/>
              """
            : """
              <attribute name="displayName" optional="YES" attributeType="String"/>
              <attribute name="shout" optional="YES" attributeType="String"/>
              <relationship name="companion" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Pet" inverseName="keeper" inverseEntity="Pet"/>
              """
        let pet = version == 1
            ? #"<relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Customer" inverseName="buddy" inverseEntity="Customer"/>"#
            : #"<relationship name="keeper" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Customer" inverseName="companion" inverseEntity="Customer"/>"#
        return """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="\(version)">
                <entity name="Customer" representedClassName="Customer" syncable="YES">
                    \(customer)
                    <attribute name="vip" optional="YES" attributeType="Boolean" usesScalarValueType="YES"/>
                </entity>
                <entity name="Pet" representedClassName="Pet" syncable="YES">
                    <attribute name="name" optional="YES" attributeType="String"/>
                    \(pet)
                </entity>
            </model>
            """
    }

    /// Writes `Shop.xcdatamodeld` (`Shop`, `Shop 2`; current `Shop 2`).
    static func writeBundle(in fixture: CoreDataFixture) throws -> URL {
        let bundle = fixture.directory.file("models/Shop.xcdatamodeld")
        for (n, name) in [(1, "Shop"), (2, "Shop 2")] {
            let directory = bundle.appending(path: "\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(contents(version: n).utf8).write(to: directory.appending(path: "contents"))
        }
        try PropertyListSerialization.data(fromPropertyList: ["_XCCurrentVersionName": "Shop 2.xcdatamodel"], format: .xml, options: 0)
            .write(to: bundle.appending(path: ".xccurrentversion"))
        return bundle
    }

    /// The store `Shop` writes: Ann (VIP) owns Rex, Bob owns Tom, Cy owns none; Fido has no owner.
    static func writeStore(at url: URL) throws {
        try CoreDataFixture.writeStore(
            at: url,
            schema: [
                "CREATE TABLE ZCUSTOMER ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZVIP INTEGER, ZBUDDY INTEGER, ZFIRST VARCHAR, ZLAST VARCHAR )",
                "CREATE TABLE ZPET ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZOWNER INTEGER, ZNAME VARCHAR )",
            ],
            rows: [
                ("INSERT INTO ZCUSTOMER VALUES (1, 1, 1, 1, 2, 'Ann', 'Lee'), (2, 1, 1, 0, 1, 'Bob', 'Ray'), (3, 1, 1, 0, NULL, 'Cy', NULL)", []),
                ("INSERT INTO ZPET VALUES (1, 2, 1, 2, 'Tom'), (2, 2, 1, 1, 'Rex'), (3, 2, 1, NULL, 'Fido')", []),
            ],
            primaryKeys: [(1, "Customer", 0, 3), (2, "Pet", 0, 3)],
            metadata: try PropertyListSerialization.data(fromPropertyList: [
                "NSStoreType": "SQLite", "NSStoreUUID": CoreDataFixture.storeUUID, "NSStoreModelVersionIdentifiers": ["1"],
                "NSStoreModelVersionHashes": ["Customer": Data([1]), "Pet": Data([2])],
            ] as [String: Any], format: .binary, options: 0))
    }

    /// An attribute or relationship mapping: destination property, expression (nil: Xcode's default).
    struct Property {
        var name: String
        var expression: String?
        var relationship = false
    }

    /// The mapping model's entity mappings: (name, source, destination, policy class, properties).
    typealias Entity = (name: String, source: String?, destination: String?, policy: String?, properties: [Property])

    static let customerProperties: [Property] = [
        Property(name: "displayName", expression: "$source.first"),
        Property(name: "shout", expression: #"FUNCTION(FUNCTION($source.last, "uppercaseString"), "stringByAppendingString:", "!")"#),
        Property(name: "vip", expression: "$source.vip"),
        Property(name: "companion", expression: #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:" , "PetToPet", $source.buddy)"#, relationship: true),
    ]
    static let petProperties: [Property] = [Property(name: "name", expression: nil)]

    static var standard: [Entity] {
        [("CustomerToCustomer", "Customer", "Customer", nil, customerProperties), ("PetToPet", "Pet", "Pet", nil, petProperties)]
    }

    /// Writes `<name>.xcmappingmodel/xcmapping.xml` in `directory`.
    @discardableResult
    static func writeMapping(_ entities: [Entity] = standard, named name: String = "ShopToShop2", in directory: URL,
                             source: String = "Shop.xcdatamodeld/Shop.xcdatamodel", destination: String = "Shop.xcdatamodeld/Shop 2.xcdatamodel") throws -> URL {
        var objects: [String] = []
        var next = 200
        var entityIDs: [String] = []
        func escape(_ s: String) -> String {
            s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: "\"", with: "&quot;")
        }
        for (number, entity) in entities.enumerated() {
            let id = "z\(next)"; next += 1
            entityIDs.append(id)
            var attributeIDs: [String] = [], relationshipIDs: [String] = []
            for property in entity.properties {
                let pid = "z\(next)"; next += 1
                if property.relationship { relationshipIDs.append(pid) } else { attributeIDs.append(pid) }
                objects.append("""
                        <object type="\(property.relationship ? "XDDEVRELATIONSHIPMAPPING" : "XDDEVATTRIBUTEMAPPING")" id="\(pid)">
                            <attribute name="name" type="string">\(property.name)</attribute>
                            \(property.expression.map { #"<attribute name="valueexpressionstring" type="string">\#(escape($0))</attribute>"# } ?? "")
                            <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="\(id)"></relationship>
                        </object>
                    """)
            }
            objects.append("""
                    <object type="XDDEVENTITYMAPPING" id="\(id)">
                        <attribute name="mappingnumber" type="int16">\(number + 1)</attribute>
                        \(entity.source.map { #"<attribute name="sourcename" type="string">\#($0)</attribute>"# } ?? "")
                        \(entity.destination.map { #"<attribute name="destinationname" type="string">\#($0)</attribute>"# } ?? "")
                        <attribute name="mappingtypename" type="string">\(entity.source == nil ? "Add" : entity.destination == nil ? "Remove" : "Transform")</attribute>
                        \(entity.policy.map { #"<attribute name="migrationpolicyclassname" type="string">\#($0)</attribute>"# } ?? "")
                        <attribute name="autogeneratesourceexpression" type="bool">1</attribute>
                        <attribute name="name" type="string">\(entity.name)</attribute>
                        <relationship name="attributemappings" type="0/0" destination="XDDEVATTRIBUTEMAPPING" idrefs="\(attributeIDs.joined(separator: " "))"></relationship>
                        <relationship name="relationshipmappings" type="0/0" destination="XDDEVRELATIONSHIPMAPPING" idrefs="\(relationshipIDs.joined(separator: " "))"></relationship>
                        <relationship name="mappingmodel" type="1/1" destination="XDDEVMAPPINGMODEL" idrefs="z102"></relationship>
                    </object>
                """)
        }
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="no"?>
            <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">

            <database>
                <databaseInfo>
                    <version>134481920</version>
                    <UUID>6E0F1A52-3C1B-4D7E-9F0A-2B3C4D5E6F70</UUID>
                    <nextObjectID>\(next)</nextObjectID>
                    <metadata></metadata>
                </databaseInfo>
                <object type="XDDEVMAPPINGMODEL" id="z102">
                    <attribute name="sourcemodelpath" type="string">\(source)</attribute>
                    <attribute name="destinationmodelpath" type="string">\(destination)</attribute>
                    <attribute name="sourcemodeldata" type="binary">YnBsaXN0MDDUAQIDBAUGBwhYJHZlcnNpb24=</attribute>
                    <relationship name="entitymappings" type="0/0" destination="XDDEVENTITYMAPPING" idrefs="\(entityIDs.joined(separator: " "))"></relationship>
                </object>
            \(objects.joined(separator: "\n"))
            </database>
            """
        let url = directory.appending(path: "\(name).xcmappingmodel")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Data(xml.utf8).write(to: url.appending(path: "xcmapping.xml"))
        return url
    }
}
