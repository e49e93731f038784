import Foundation
import Testing
@testable import Strata

/// Version checksums are what a store records to know which model wrote it: they must never
/// drift silently, must ignore what does not affect storage, and must change with what does.
@Suite("Version checksums")
struct ChecksumTests {
    // MARK: - Golden values

    struct Golden: CustomTestStringConvertible, Sendable {
        var path: String
        var checksum: String
        var testDescription: String { path }
    }

    /// Every shipped model version. A change here means stores written by that version no
    /// longer match it: only update a literal together with a checksum format change.
    static let golden: [Golden] = [
        Golden(path: "config/models/Aircraft/Aircraft 1.yaml", checksum: "t9H8hv/roRwesKvzB7dKlWa5vVS1R+2RjxdXQNUnG2M="),
        Golden(path: "config/models/Aircraft/Aircraft 2.yaml", checksum: "UhqJ8O5nIeVQLR2zM4V7O7xeVEg3Q9GYWwNDh33PGdg="),
        Golden(path: "config/models/Aircraft/Aircraft 3.yaml", checksum: "GBJKbgTCpNcX+TPICQYfWWD/LK5sIWOHwy/gI5c+ABc="),
        Golden(path: "config/models/Post/Post 1.json", checksum: "r8L8ZCwJGa41LM/9QhJASKJO1S6V1t6FgJubVOjCNF0="),
        Golden(path: "config/models/Post/Post 2.yaml", checksum: "xJ/LIaQFOleaS7HIHetWjozxTaURSfPx15lIGFgaYAA="),
        Golden(path: "config/models/Post/Post 3.json", checksum: "H/2wrf2XxccdjHTLHo07lWvYWUAWj9sCXVA8Q1VfkSQ="),
        Golden(path: "config/models/Post/Post 4.yaml", checksum: "ndS1taoGb1crvjmWFHtyU1j+SQdqxzMt0OkGdM2qOZw="),
        Golden(path: "Tests/StrataTests/Fixtures/models/Aircraft.xcdatamodeld/Aircraft 1.xcdatamodel", checksum: "t9H8hv/roRwesKvzB7dKlWa5vVS1R+2RjxdXQNUnG2M="),
        Golden(path: "Tests/StrataTests/Fixtures/models/Aircraft.xcdatamodeld/Aircraft 2.xcdatamodel", checksum: "UhqJ8O5nIeVQLR2zM4V7O7xeVEg3Q9GYWwNDh33PGdg="),
        Golden(path: "Tests/StrataTests/Fixtures/models/Aircraft.xcdatamodeld/Aircraft 3.xcdatamodel", checksum: "GBJKbgTCpNcX+TPICQYfWWD/LK5sIWOHwy/gI5c+ABc="),
        Golden(path: "Tests/StrataTests/Fixtures/models/Library.xcdatamodel", checksum: "6YS0ZByMVVHkU77ULlNwdHHuPmXlrugYROFqXQA3p8E="),
        Golden(path: "Tests/StrataTests/Fixtures/models/Library.yaml", checksum: "6YS0ZByMVVHkU77ULlNwdHHuPmXlrugYROFqXQA3p8E="),
    ]

    @Test("Shipped versions keep their pinned checksums", arguments: golden)
    func pinned(_ golden: Golden) throws {
        let model = try ModelFile.load(contentsOf: ModelFileFixtures.packageRoot.appending(path: golden.path))
        #expect(model.checksum == golden.checksum)
    }

    @Test("Every version of the shipped directories is pinned", arguments: ["Aircraft", "Post"])
    func everyShippedVersionIsPinned(directory: String) throws {
        let models = try ModelDirectory(url: ModelFileFixtures.configModels.appending(path: directory))
        let pinned = Set(Self.golden.map(\.checksum))
        for model in models.versions {
            #expect(pinned.contains(model.checksum), "\(model.version) has no golden checksum")
        }
        #expect(Set(models.versions.map(\.checksum)).count == models.versions.count, "each version changes storage")
    }

    @Test("The canonical encoding is pinned")
    func canonicalEncoding() throws {
        let model = try ModelFile.load(contentsOf: ModelFileFixtures.configModels.appending(path: "Post/Post 1.json"))
        #expect(model.canonicalEncoding == """
            strata-model-v1
            attribute "Post"."color" string optional=true
            attribute "Post"."content" string optional=true
            attribute "Post"."date" date optional=true
            attribute "Post"."postID" uuid optional=false
            entity "Post" parent=- abstract=false

            """)
        #expect(model.entityHashes == ["Post": "C6as3tHwk27ynwx8lzLgPP0VwXqMCDkD/7dtdI8eJms="])
    }

    // MARK: - What the checksum ignores

    @Test("Independent of declaration order", arguments: [1, 2, 3, 42, 2023] as [UInt64])
    func declarationOrder(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var model = ModelFileFixtures.everything
        model.entities.shuffle(using: &rng)
        for i in model.entities.indices {
            model.entities[i].attributes.shuffle(using: &rng)
            model.entities[i].relationships.shuffle(using: &rng)
            model.entities[i].indexes.shuffle(using: &rng)
            model.entities[i].uniquenessConstraints.shuffle(using: &rng)
            for j in model.entities[i].uniquenessConstraints.indices {
                model.entities[i].uniquenessConstraints[j].keyPaths.shuffle(using: &rng)
            }
            for j in model.entities[i].composites.indices {
                model.entities[i].composites[j] = Self.shuffled(model.entities[i].composites[j], using: &rng)
            }
        }
        #expect(model != ModelFileFixtures.everything)
        #expect(model.checksum == ModelFileFixtures.everything.checksum)
        #expect(model.entityHashes == ModelFileFixtures.everything.entityHashes)
    }

    static func shuffled(_ composite: CompositeAttribute, using rng: inout SplitMix64) -> CompositeAttribute {
        var copy = composite
        copy.elements = copy.elements.map { element in
            if case .composite(let inner) = element { return .composite(shuffled(inner, using: &rng)) }
            return element
        }
        copy.elements.shuffle(using: &rng)
        return copy
    }

    enum Ignored: String, CaseIterable, Sendable {
        case versionName, nextVersion, modelUserInfo, entityUserInfo, propertyUserInfo
        case entityRenamingIdentifier, attributeRenamingIdentifier, relationshipRenamingIdentifier, compositeRenamingIdentifier
        case defaultValue, deleteRule, counts

        func apply(to model: inout ObjectModel) {
            switch self {
            case .versionName: model.version = "Something else"
            case .nextVersion: model.nextVersion = nil
            case .modelUserInfo: model.userInfo = ["other": "info"]
            case .entityUserInfo: model.entities[0].userInfo = [:]
            case .propertyUserInfo: model.entities[0].attributes[0].userInfo = ["x": "y"]
            case .entityRenamingIdentifier: model.entities[0].renamingIdentifier = nil
            case .attributeRenamingIdentifier: model.entities[0].attributes[0].renamingIdentifier = "oldTitle"
            case .relationshipRenamingIdentifier: model.entities[0].relationships[1].renamingIdentifier = nil
            case .compositeRenamingIdentifier: model.entities[0].composites[0].renamingIdentifier = "where"
            case .defaultValue: model.entities[0].attributes[1].defaultValue = .int(3)
            case .deleteRule: model.entities[2].relationships[0].deleteRule = .deny
            case .counts: model.entities[2].relationships[0].maxCount = 99
            }
        }
    }

    @Test("Unaffected by what does not change storage", arguments: Ignored.allCases)
    func ignored(_ change: Ignored) {
        var model = ModelFileFixtures.everything
        change.apply(to: &model)
        #expect(model != ModelFileFixtures.everything)
        #expect(model.checksum == ModelFileFixtures.everything.checksum)
        #expect(model.entityHashes == ModelFileFixtures.everything.entityHashes)
    }

    // MARK: - What the checksum covers

    enum Covered: String, CaseIterable, Sendable {
        case attributeType, attributeOptionality, addedAttribute, removedAttribute, renamedAttribute
        case addedIndex, indexDirection, indexElementOrder, addedConstraint
        case toMany, ordered, relationshipOptionality, inverse, destination
        case compositeLeafType, compositeOptionality, nestedCompositeLeaf
        case parent, abstract, addedEntity

        /// Applies the change and returns the entity whose hash must change.
        func apply(to model: inout ObjectModel) -> String {
            func index(_ name: String) -> Int { model.entities.firstIndex { $0.name == name }! }
            let thing = index("Thing"), gadget = index("Gadget"), person = index("Person"), tag = index("Tag")
            switch self {
            case .attributeType: model.entities[gadget].attributes[0].type = .float; return "Gadget"
            case .attributeOptionality: model.entities[person].attributes[0].isOptional = true; return "Person"
            case .addedAttribute: model.entities[tag].attributes.append(Attribute("color", .string)); return "Tag"
            case .removedAttribute: model.entities[thing].attributes.removeLast(); return "Thing"
            case .renamedAttribute: model.entities[tag].attributes[0].name = "text"; return "Tag"
            case .addedIndex: model.entities[person].indexes.append(Index("byName", keyPaths: ["name"])); return "Person"
            case .indexDirection: model.entities[thing].indexes[0].elements[0].ascending = false; return "Thing"
            case .indexElementOrder: model.entities[thing].indexes[1].elements.reverse(); return "Thing"
            case .addedConstraint: model.entities[tag].uniquenessConstraints.append(UniquenessConstraint(["label"])); return "Tag"
            case .toMany: model.entities[person].relationships[2].isToMany = true; return "Person"
            case .ordered: model.entities[tag].relationships[0].isOrdered = false; return "Tag"
            case .relationshipOptionality: model.entities[thing].relationships[0].isOptional = true; return "Thing"
            case .inverse: model.entities[person].relationships[1].inverse = "things"; return "Person"
            case .destination: model.entities[person].relationships[2].destination = "Tag"; return "Person"
            case .compositeLeafType:
                model.entities[thing].composites[0].elements[0] = .attribute(Attribute("latitude", .float, isOptional: false))
                return "Thing"
            case .compositeOptionality: model.entities[thing].composites[0].isOptional = false; return "Thing"
            case .nestedCompositeLeaf:
                guard case .composite(var address) = model.entities[thing].composites[0].elements[2] else { fatalError() }
                address.elements.append(.attribute(Attribute("country", .string)))
                model.entities[thing].composites[0].elements[2] = .composite(address)
                return "Thing"
            case .parent: model.entities[gadget].parent = nil; return "Gadget"
            case .abstract: model.entities[thing].isAbstract = false; return "Thing"
            case .addedEntity: model.entities.append(Entity("Extra", attributes: [Attribute("x", .int64)])); return "Extra"
            }
        }
    }

    @Test("Changes with everything that changes storage", arguments: Covered.allCases)
    func covered(_ change: Covered) {
        var model = ModelFileFixtures.everything
        let changed = change.apply(to: &model)
        #expect(model.checksum != ModelFileFixtures.everything.checksum)
        #expect(model.entityHashes[changed] != ModelFileFixtures.everything.entityHashes[changed])
        for (entity, hash) in ModelFileFixtures.everything.entityHashes where entity != changed {
            #expect(model.entityHashes[entity] == hash, "the hash of \(entity) must not change")
        }
    }

    @Test("Names cannot forge another line of the canonical encoding")
    func quoting() {
        let a = ObjectModel(version: "a", entities: [Entity("A", attributes: [Attribute("x\" string optional=true\nattribute \"A\".\"y", .string)])])
        let b = ObjectModel(version: "b", entities: [Entity("A", attributes: [Attribute("x", .string), Attribute("y", .string)])])
        #expect(a.checksum != b.checksum)
    }
}

/// A small seeded generator, so shuffles are reproducible.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
