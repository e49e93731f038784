import Foundation
@testable import Strata

/// Locations of shipped model files and a model that uses every feature of the format.
///
/// Fixtures are located relative to this source file (`#filePath`), so tests read the same
/// files that ship in `config/models` and `Tests/StrataTests/Fixtures/models`.
enum ModelFileFixtures {
    static let testsDirectory = URL(filePath: #filePath).deletingLastPathComponent()
    static let packageRoot = testsDirectory.deletingLastPathComponent().deletingLastPathComponent()
    static let fixtures = testsDirectory.appending(path: "Fixtures/models")
    static let configModels = packageRoot.appending(path: "config/models")

    static func fixture(_ name: String) -> URL { fixtures.appending(path: name) }

    /// A model using every attribute type (with defaults), nested composites, every kind of
    /// relationship, inheritance, indexes, constraints, renaming identifiers and user info.
    static let everything: ObjectModel = {
        let allTypes: [Attribute] = [
            Attribute("title", .string, isOptional: false, defaultValue: "untitled: \"quoted\" # not a comment",
                      renamingIdentifier: "name", userInfo: ["doc": "the title"]),
            Attribute("small", .int16, defaultValue: .int(-7)),
            Attribute("medium", .int32, defaultValue: .int(70_000)),
            Attribute("large", .int64, defaultValue: .int(Int64.max)),
            Attribute("ratio", .double, defaultValue: .double(0.1)),
            Attribute("weight", .float, defaultValue: .double(2.5)),
            Attribute("price", .decimal, defaultValue: .decimal(Decimal(string: "12.50")!)),
            Attribute("active", .bool, defaultValue: .bool(false)),
            Attribute("created", .date, defaultValue: .date(Date(timeIntervalSince1970: 1_686_045_600))),
            Attribute("blob", .data, defaultValue: .data(Data([0, 1, 2, 254, 255]))),
            Attribute("identifier", .uuid, defaultValue: .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)),
            Attribute("homepage", .uri, defaultValue: .uri(URL(string: "https://example.com/a?b=c")!)),
            Attribute("note", .string, defaultValue: "null"),
            Attribute("flag", .string, defaultValue: "yes"),
        ]
        let location = CompositeAttribute("location", elements: [
            .attribute(Attribute("latitude", .double, isOptional: false, defaultValue: .double(0))),
            .attribute(Attribute("longitude", .double)),
            .composite(CompositeAttribute("address", elements: [
                .attribute(Attribute("street", .string)),
                .composite(CompositeAttribute("city", elements: [
                    .attribute(Attribute("name", .string, defaultValue: "Paris")),
                    .attribute(Attribute("zip", .string)),
                ], renamingIdentifier: "town")),
            ], isOptional: false)),
        ], renamingIdentifier: "place", userInfo: ["k": "v"])
        return ObjectModel(version: "Everything 1", entities: [
            Entity("Thing", isAbstract: true, attributes: allTypes, composites: [location],
                   relationships: [
                       Relationship("owner", destination: "Person", inverse: "things", isOptional: false, deleteRule: .nullify),
                       Relationship("tags", destination: "Tag", inverse: "things", toMany: true, deleteRule: .noAction,
                                    renamingIdentifier: "labels"),
                   ],
                   indexes: [
                       Index("byTitle", keyPaths: ["title"]),
                       Index("byCity", elements: [.init("location.address.city.name"), .init("created", ascending: false)]),
                   ],
                   uniquenessConstraints: [UniquenessConstraint(["identifier"]), UniquenessConstraint(["title", "owner"])],
                   renamingIdentifier: "Item", userInfo: ["table": "things", "empty": ""]),
            Entity("Gadget", parent: "Thing", attributes: [Attribute("voltage", .double)]),
            Entity("Person", attributes: [Attribute("name", .string, isOptional: false)],
                   relationships: [
                       Relationship("things", destination: "Thing", inverse: "owner", toMany: true, ordered: true,
                                    deleteRule: .cascade, minCount: 1, maxCount: 10),
                       Relationship("favorites", destination: "Tag", toMany: true, deleteRule: .deny),
                       Relationship("mentor", destination: "Person"),
                   ]),
            Entity("Tag", attributes: [Attribute("label", .string)],
                   relationships: [Relationship("things", destination: "Thing", inverse: "tags", toMany: true, ordered: true)]),
        ], nextVersion: "Everything 2", userInfo: ["author": "strata", "multi\nline": "a: b"])
    }()
}
