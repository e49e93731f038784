import Foundation
import Testing
@testable import Strata

/// Every path of `ObjectModel.validationErrors()` and of model file decoding: the error's code,
/// and a message that names the file, version, entity and property.
@Suite("Model validation")
struct ModelValidationTests {
    // MARK: - Model problems

    struct Problem: CustomTestStringConvertible, Sendable {
        var name: String
        var entities: [Entity]
        var code: ModelError.Code
        var entity: String?
        var property: String?
        var message: String
        var testDescription: String { name }
    }

    static let aircraft = Entity("Aircraft", attributes: [Attribute("tailNumber", .string, isOptional: false)])

    static let problems: [Problem] = [
        Problem(name: "no entities", entities: [], code: .emptyModel, entity: nil, property: nil,
                message: "the model has no entities"),
        Problem(name: "invalid entity name", entities: [Entity("9lives")], code: .invalidIdentifier,
                entity: "9lives", property: nil, message: "'9lives' is not a valid entity name"),
        Problem(name: "invalid property name",
                entities: [Entity("A", attributes: [Attribute("_hidden", .string)])], code: .invalidIdentifier,
                entity: "A", property: "_hidden", message: "names starting with '_' are reserved"),
        Problem(name: "invalid composite element name",
                entities: [Entity("A", composites: [CompositeAttribute("c", elements: [.attribute(Attribute("a-b", .string))])])],
                code: .invalidIdentifier, entity: "A", property: "c.a-b", message: "'a-b' is not a valid element name"),
        Problem(name: "invalid index name",
                entities: [Entity("A", attributes: [Attribute("x", .string)], indexes: [Index("by x", keyPaths: ["x"])])],
                code: .invalidIdentifier, entity: "A", property: "by x", message: "'by x' is not a valid index name"),
        Problem(name: "duplicate entity", entities: [aircraft, aircraft], code: .duplicateName,
                entity: "Aircraft", property: nil, message: "the entity is declared twice"),
        Problem(name: "duplicate property",
                entities: [Entity("A", attributes: [Attribute("x", .string)], relationships: [Relationship("x", destination: "A")])],
                code: .duplicateName, entity: "A", property: "x", message: "the property is declared twice"),
        Problem(name: "property shadowing an inherited one",
                entities: [Entity("A", attributes: [Attribute("x", .string)]), Entity("B", parent: "A", attributes: [Attribute("x", .int64)])],
                code: .duplicateName, entity: "B", property: "x", message: "in this entity or its parents"),
        Problem(name: "duplicate composite element",
                entities: [Entity("A", composites: [CompositeAttribute("c", elements: [.attribute(Attribute("p", .string)), .attribute(Attribute("p", .string))])])],
                code: .duplicateName, entity: "A", property: "c.p", message: "element 'p' appears twice in composite 'c'"),
        Problem(name: "duplicate index",
                entities: [Entity("A", attributes: [Attribute("x", .string)], indexes: [Index("byX", keyPaths: ["x"]), Index("byX", keyPaths: ["x"])])],
                code: .duplicateName, entity: "A", property: "byX", message: "index 'byX' is declared twice"),
        Problem(name: "unknown parent", entities: [Entity("B", parent: "Missing")], code: .unknownParent,
                entity: "B", property: nil, message: "parent entity 'Missing' does not exist"),
        Problem(name: "inheritance cycle", entities: [Entity("A", parent: "B"), Entity("B", parent: "A")],
                code: .inheritanceCycle, entity: "A", property: nil, message: "inheritance cycle A -> B"),
        Problem(name: "unknown destination",
                entities: [Entity("A", relationships: [Relationship("owner", destination: "Person")])],
                code: .unknownDestination, entity: "A", property: "owner", message: "destination entity 'Person' does not exist"),
        Problem(name: "inverse that does not exist",
                entities: [Entity("A", relationships: [Relationship("b", destination: "B", inverse: "a")]), Entity("B", attributes: [Attribute("x", .string)])],
                code: .inverseMismatch, entity: "A", property: "b", message: "inverse 'a' does not exist on 'B'"),
        Problem(name: "inverse pointing elsewhere",
                entities: [Entity("A", relationships: [Relationship("b", destination: "B", inverse: "c")]),
                           Entity("B", relationships: [Relationship("c", destination: "C")]), Entity("C", attributes: [Attribute("x", .string)])],
                code: .inverseMismatch, entity: "A", property: "b", message: "inverse 'B.c' points to 'C', not back to 'A'"),
        Problem(name: "inverses that do not name each other",
                entities: [Entity("A", relationships: [Relationship("b", destination: "B", inverse: "a"), Relationship("b2", destination: "B", inverse: "a")]),
                           Entity("B", relationships: [Relationship("a", destination: "A", inverse: "b")])],
                code: .inverseMismatch, entity: "A", property: "b2", message: "names 'b' as its inverse, not 'b2'"),
        Problem(name: "ordered to-one",
                entities: [Entity("A", relationships: [Relationship("next", destination: "A", ordered: true)])],
                code: .inverseMismatch, entity: "A", property: "next", message: "a to-one relationship cannot be ordered"),
        Problem(name: "inconsistent counts",
                entities: [Entity("A", relationships: [Relationship("items", destination: "A", toMany: true, minCount: 5, maxCount: 2)])],
                code: .invalidCount, entity: "A", property: "items", message: "minCount 5 and maxCount 2 are inconsistent"),
        Problem(name: "default of the wrong type",
                entities: [Entity("A", attributes: [Attribute("count", .int16, defaultValue: "many")])],
                code: .invalidDefault, entity: "A", property: "count", message: "default value \"many\" (String) is not a valid int16"),
        Problem(name: "default out of range",
                entities: [Entity("A", attributes: [Attribute("count", .int16, defaultValue: .int(70_000))])],
                code: .invalidDefault, entity: "A", property: "count", message: "is not a valid int16"),
        Problem(name: "default of the wrong type in a composite",
                entities: [Entity("A", composites: [CompositeAttribute("c", elements: [.attribute(Attribute("on", .bool, defaultValue: .double(0.5)))])])],
                code: .invalidDefault, entity: "A", property: "c.on", message: "is not a valid bool"),
        Problem(name: "empty composite",
                entities: [Entity("A", composites: [CompositeAttribute("c", elements: [])])],
                code: .invalidFile, entity: "A", property: "c", message: "composite 'c' has no elements"),
        Problem(name: "unknown index keypath",
                entities: [Entity("A", attributes: [Attribute("x", .string)], indexes: [Index("byY", keyPaths: ["y"])])],
                code: .unknownKeyPath, entity: "A", property: "y", message: "index 'byY' names 'y'"),
        Problem(name: "index on a to-many relationship",
                entities: [Entity("A", relationships: [Relationship("items", destination: "A", toMany: true)], indexes: [Index("byItems", keyPaths: ["items"])])],
                code: .unknownKeyPath, entity: "A", property: "items", message: "not an attribute, composite leaf or to-one relationship"),
        Problem(name: "index without keypaths",
                entities: [Entity("A", attributes: [Attribute("x", .string)], indexes: [Index("empty", keyPaths: [])])],
                code: .unknownKeyPath, entity: "A", property: "empty", message: "index 'empty' has no keypaths"),
        Problem(name: "unknown constraint keypath",
                entities: [Entity("A", attributes: [Attribute("x", .string)], uniquenessConstraints: [UniquenessConstraint(["x", "colorScheme.primary"])])],
                code: .unknownKeyPath, entity: "A", property: "colorScheme.primary", message: "uniqueness constraint names 'colorScheme.primary'"),
        Problem(name: "attribute and foreign key in one column",
                entities: [Entity("A", attributes: [Attribute("owner_id", .int64)], relationships: [Relationship("owner", destination: "A")])],
                code: .columnCollision, entity: "A", property: "owner_id", message: "column 'owner_id' of table 'A' would store both 'A.owner_id' and relationship 'A.owner'"),
        Problem(name: "attribute and order column in one column",
                entities: [Entity("Post", relationships: [Relationship("sections", destination: "Section", inverse: "post", toMany: true, ordered: true)]),
                           Entity("Section", attributes: [Attribute("post_order", .int64)], relationships: [Relationship("post", destination: "Post", inverse: "sections")])],
                code: .columnCollision, entity: "Section", property: "post_order", message: "would store both 'Section.post_order' and the order of 'Post.sections'"),
        Problem(name: "sibling sub-entities with same-named to-one relationships",
                entities: [Entity("A", isAbstract: true), Entity("B", parent: "A", relationships: [Relationship("owner", destination: "A")]),
                           Entity("C", parent: "A", relationships: [Relationship("owner", destination: "A")])],
                code: .columnCollision, entity: "A", property: "owner_id", message: "would store both relationship 'B.owner' and relationship 'C.owner'"),
        Problem(name: "attribute and composite leaf in one column",
                entities: [Entity("A", attributes: [Attribute("color_primary", .string)],
                                  composites: [CompositeAttribute("color", elements: [.attribute(Attribute("primary", .string))])])],
                code: .columnCollision, entity: "A", property: "color_primary", message: "'A.color_primary' and 'A.color.primary'"),
        Problem(name: "sub-entity attribute colliding with a parent's composite leaf",
                entities: [Entity("A", composites: [CompositeAttribute("geo", elements: [.attribute(Attribute("lat", .double))])]),
                           Entity("B", parent: "A", attributes: [Attribute("geo_lat", .string)])],
                code: .columnCollision, entity: "A", property: "geo_lat", message: "column 'geo_lat' of table 'A'"),
    ]

    @Test("validationErrors() reports the problem with its code and location", arguments: problems)
    func modelProblem(_ problem: Problem) throws {
        let model = ObjectModel(version: "Broken 1", entities: problem.entities)
        let errors = model.validationErrors()
        let error = try #require(errors.first { $0.code == problem.code }, "found \(errors)")
        #expect(error.version == "Broken 1")
        #expect(error.entity == problem.entity)
        #expect(error.property == problem.property)
        #expect(error.reason.contains(problem.message), "\(error.reason)")
        #expect(error.description.contains("version 'Broken 1'"))
        if let entity = problem.entity { #expect(error.description.contains("entity '\(entity)'")) }
        if let property = problem.property { #expect(error.description.contains("property '\(property)'")) }
        #expect(throws: error) { try model.validated() }
    }

    @Test("Decoding a file with the problem reports it naming the file", arguments: problems.filter { $0.code != .invalidDefault })
    func fileProblem(_ problem: Problem) throws {
        let model = ObjectModel(version: "Broken 1", entities: problem.entities)
        for format in ModelFileFormat.allCases {
            let data = try ModelFile.encode(model, format: format)
            let file = "models/Broken 1.\(format.rawValue)"
            let error = #expect(throws: ModelError.self) { try ModelFile.decode(data, format: format, file: file) }
            #expect(error?.code == model.validationErrors().first?.code)
            #expect(error?.file == file)
            #expect(error?.description.hasPrefix("\(file): version 'Broken 1'") == true, "\(String(describing: error))")
        }
    }

    @Test("A valid model has no problems and validates to itself")
    func validModel() throws {
        let model = ObjectModel(version: "Fine", entities: [Self.aircraft])
        #expect(model.validationErrors().isEmpty)
        #expect(try model.validated() == model)
    }

    @Test("All problems are listed, not only the first")
    func allProblems() {
        let model = ObjectModel(version: "V", entities: [
            Entity("A", attributes: [Attribute("x", .int16, defaultValue: "no")], relationships: [Relationship("b", destination: "Nope")]),
            Entity("B", attributes: [Attribute("y", .string)], indexes: [Index("byZ", keyPaths: ["z"])]),
        ])
        #expect(model.validationErrors().map(\.code) == [.invalidDefault, .unknownDestination, .unknownKeyPath])
        let layoutModel = ObjectModel(version: "V", entities: [
            Entity("B", attributes: [Attribute("y", .string)], indexes: [Index("byZ", keyPaths: ["z"])], uniquenessConstraints: [UniquenessConstraint(["w"])]),
        ])
        #expect(layoutModel.validationErrors().map(\.code) == [.unknownKeyPath, .unknownKeyPath])
    }

    // MARK: - File problems

    struct FileProblem: CustomTestStringConvertible, Sendable {
        var name: String
        var format: ModelFileFormat
        var text: String
        var code: ModelError.Code
        var entity: String?
        var property: String?
        var message: String
        var testDescription: String { name }
    }

    static let fileProblems: [FileProblem] = [
        FileProblem(name: "YAML syntax error", format: .yaml, text: "version: V1\nentities: [\n  {name: A\n", code: .invalidFile,
                    entity: nil, property: nil, message: "invalid YAML"),
        FileProblem(name: "JSON syntax error", format: .json, text: "{\"version\": \"V1\",\n \"entities\": [}\n", code: .invalidFile,
                    entity: nil, property: nil, message: "line 2: invalid JSON"),
        FileProblem(name: "JSON duplicate key", format: .json, text: "{\"version\": \"V1\", \"version\": \"V2\", \"entities\": []}", code: .invalidFile,
                    entity: nil, property: nil, message: "duplicate key 'version'"),
        FileProblem(name: "YAML duplicate key", format: .yaml, text: "version: V1\nentities:\n  - name: A\n    name: B\n", code: .invalidFile,
                    entity: nil, property: nil, message: "duplicate key"),
        FileProblem(name: "not a mapping", format: .yaml, text: "- just\n- a list\n", code: .invalidFile,
                    entity: nil, property: nil, message: "expected the model file (a mapping of keys to values), found a list"),
        FileProblem(name: "missing version", format: .yaml, text: "entities: []\n", code: .invalidFile,
                    entity: nil, property: nil, message: "the model file has no 'version'; add it"),
        FileProblem(name: "unknown top-level key", format: .yaml, text: "version: V1\nnext_version: V2\nentities: []\n", code: .invalidFile,
                    entity: nil, property: nil, message: "unknown key 'next_version' in the model file; did you mean 'nextVersion'?"),
        FileProblem(name: "unknown entity key", format: .json,
                    text: #"{"version": "V1", "entities": [{"name": "Aircraft", "atributes": []}]}"#, code: .invalidFile,
                    entity: "Aircraft", property: nil, message: "unknown key 'atributes' in entity 'Aircraft'; did you mean 'attributes'?"),
        FileProblem(name: "unknown attribute key", format: .yaml,
                    text: "version: V1\nentities:\n  - name: Aircraft\n    attributes:\n      - name: tailNumber\n        type: string\n        optinal: false\n",
                    code: .invalidFile, entity: "Aircraft", property: "tailNumber",
                    message: "entities[0].attributes[0] (line 7): unknown key 'optinal' in attribute 'tailNumber'; did you mean 'optional'?"),
        FileProblem(name: "missing type", format: .yaml,
                    text: "version: V1\nentities:\n  - name: Aircraft\n    attributes:\n      - name: tailNumber\n",
                    code: .invalidFile, entity: "Aircraft", property: "tailNumber", message: "attribute 'tailNumber' has no 'type'; add it"),
        FileProblem(name: "missing entity name", format: .yaml, text: "version: V1\nentities:\n  - attributes: []\n",
                    code: .invalidFile, entity: nil, property: nil, message: "entities[0] (line 3): an entity has no 'name'"),
        FileProblem(name: "unknown attribute type", format: .yaml,
                    text: "version: V1\nentities:\n  - name: A\n    attributes: [{name: x, type: varchar}]\n",
                    code: .invalidFile, entity: "A", property: "x", message: "unknown attribute type 'varchar'; use one of string, int16"),
        FileProblem(name: "transformable attribute", format: .yaml,
                    text: "version: V1\nentities:\n  - name: A\n    attributes: [{name: x, type: Transformable}]\n",
                    code: .unsupportedFeature, entity: "A", property: "x", message: "attribute type 'Transformable' is not supported"),
        FileProblem(name: "composite declared as an attribute", format: .yaml,
                    text: "version: V1\nentities:\n  - name: A\n    attributes: [{name: c, type: string, elements: []}]\n",
                    code: .invalidFile, entity: "A", property: "c", message: "declare composite attributes under the entity's 'composites' key"),
        FileProblem(name: "relationship inside a composite", format: .yaml,
                    text: """
                        version: V1
                        entities:
                          - name: Aircraft
                            composites:
                              - name: colorScheme
                                elements:
                                  - {name: primary, type: string}
                                  - {name: owner, destination: Person}
                        """,
                    code: .relationshipInComposite, entity: "Aircraft", property: "colorScheme.owner",
                    message: "composites cannot contain relationships"),
        FileProblem(name: "relationships key inside a nested composite", format: .json,
                    text: #"{"version": "V1", "entities": [{"name": "A", "composites": [{"name": "outer", "elements": [{"name": "inner", "elements": [{"name": "x", "type": "string"}], "relationships": []}]}]}]}"#,
                    code: .relationshipInComposite, entity: "A", property: "outer.inner", message: "composite 'outer.inner' declares relationships"),
        FileProblem(name: "wrong value kind for a flag", format: .json,
                    text: #"{"version": "V1", "entities": [{"name": "A", "attributes": [{"name": "x", "type": "string", "optional": "no"}]}]}"#,
                    code: .invalidFile, entity: "A", property: "x", message: "entities[0].attributes[0].optional (line 1): expected true or false, found a string"),
        FileProblem(name: "unknown delete rule", format: .yaml,
                    text: "version: V1\nentities:\n  - name: A\n    relationships: [{name: r, destination: A, deleteRule: explode}]\n",
                    code: .invalidFile, entity: "A", property: "r", message: "unknown delete rule 'explode'; use one of nullify, cascade, deny, noAction"),
        FileProblem(name: "integer default out of range", format: .yaml,
                    text: "version: V1\nentities:\n  - name: A\n    attributes:\n      - {name: x, type: int16, default: 40000}\n",
                    code: .invalidDefault, entity: "A", property: "x", message: "default (line 5): default '40000' is not a valid int16"),
        FileProblem(name: "quoted number for an integer in JSON", format: .json,
                    text: #"{"version": "V1", "entities": [{"name": "A", "attributes": [{"name": "x", "type": "int64", "default": "12"}]}]}"#,
                    code: .invalidDefault, entity: "A", property: "x", message: "default a string is not a valid int64"),
        FileProblem(name: "bad date default", format: .yaml,
                    text: "version: V1\nentities:\n  - name: A\n    attributes: [{name: d, type: date, default: \"yesterday\"}]\n",
                    code: .invalidDefault, entity: "A", property: "d", message: "give an ISO 8601 date"),
        FileProblem(name: "bad UUID default", format: .yaml,
                    text: "version: V1\nentities:\n  - name: A\n    attributes: [{name: u, type: uuid, default: not-a-uuid}]\n",
                    code: .invalidDefault, entity: "A", property: "u", message: "is not a valid uuid"),
        FileProblem(name: "bad base64 default", format: .yaml,
                    text: "version: V1\nentities:\n  - name: A\n    attributes: [{name: b, type: data, default: \"***\"}]\n",
                    code: .invalidDefault, entity: "A", property: "b", message: "give base64 text"),
        FileProblem(name: "number default for a string", format: .json,
                    text: #"{"version": "V1", "entities": [{"name": "A", "attributes": [{"name": "s", "type": "string", "default": 3}]}]}"#,
                    code: .invalidDefault, entity: "A", property: "s", message: "default a number is not a valid string"),
        FileProblem(name: "unknown index element key", format: .yaml,
                    text: "version: V1\nentities:\n  - name: A\n    attributes: [{name: x, type: string}]\n    indexes:\n      - name: byX\n        elements: [{keyPath: x, order: descending}]\n",
                    code: .invalidFile, entity: "A", property: "byX", message: "unknown key 'order' in an element of index 'byX'"),
        FileProblem(name: "validation problem after decoding", format: .yaml,
                    text: "version: V1\nentities:\n  - name: A\n    relationships: [{name: owner, destination: Person}]\n",
                    code: .unknownDestination, entity: "A", property: "owner", message: "destination entity 'Person' does not exist"),
    ]

    @Test("Decoding reports file problems with code, file, version, entity and property", arguments: fileProblems)
    func fileProblem(_ problem: FileProblem) throws {
        let file = "models/V1.\(problem.format.rawValue)"
        let error = try #require(#expect(throws: ModelError.self) {
            try ModelFile.decode(Data(problem.text.utf8), format: problem.format, file: file)
        })
        #expect(error.code == problem.code)
        #expect(error.file == file)
        #expect(error.entity == problem.entity)
        #expect(error.property == problem.property)
        #expect(error.description.hasPrefix("\(file): "))
        #expect(error.description.contains(problem.message), "\(error.description)")
        if problem.text.contains("version: V1") || problem.text.contains(#""version": "V1""#), error.code != .invalidFile || problem.entity != nil {
            #expect(error.version == "V1")
        }
        if let entity = problem.entity { #expect(error.description.contains("entity '\(entity)'")) }
        if let property = problem.property { #expect(error.description.contains("property '\(property)'")) }
    }

    @Test("validationErrors(contentsOf:) lists every problem of a file at once")
    func everyProblemOfAFile() throws {
        let dir = try TemporaryModelDirectory()
        try dir.write("V1.yaml", """
            version: V1
            entities:
              - name: A
                parent: Z
                attributes: [{name: x, type: int16, default: 99999}]
              - name: a b
            """)
        let errors = ModelFile.validationErrors(contentsOf: dir.url.appending(path: "V1.yaml"))
        #expect(errors.map(\.code) == [.invalidDefault, .invalidIdentifier, .unknownParent])
        #expect(errors.allSatisfy { $0.file == dir.url.appending(path: "V1.yaml").path && $0.version == "V1" })
        #expect(ModelFile.validationErrors(contentsOf: ModelFileFixtures.configModels.appending(path: "Post")) == [])
        #expect(ModelFile.validationErrors(contentsOf: ModelFileFixtures.fixture("Aircraft.xcdatamodeld")) == [])
    }

    @Test("Loading a missing file or an unknown extension is an unreadable file")
    func unreadable() {
        let missing = #expect(throws: ModelError.self) { try ModelFile.load(contentsOf: URL(filePath: "/nonexistent/V1.yaml")) }
        #expect(missing?.code == .unreadableFile)
        #expect(missing?.description == "/nonexistent/V1.yaml: no such file or directory")
        let odd = #expect(throws: ModelError.self) {
            try ModelFile.load(contentsOf: ModelFileFixtures.fixture("Library.xcdatamodel/contents"))
        }
        #expect(odd?.code == .unreadableFile)
        #expect(odd?.reason.contains("unknown model file extension") == true)
    }

    @Test("Encoding refuses a default that is not of its attribute's type")
    func encodeInvalidDefault() {
        let model = ObjectModel(version: "V", entities: [Entity("A", attributes: [Attribute("n", .double, defaultValue: .double(.infinity))])])
        let error = #expect(throws: ModelError.self) { try ModelFile.encode(model, format: .json) }
        #expect(error?.code == .invalidDefault)
        #expect(error?.entity == "A")
        #expect(error?.property == "n")
    }
}
