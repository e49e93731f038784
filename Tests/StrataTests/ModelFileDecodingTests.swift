import Foundation
import Testing
@testable import Strata

/// How hand-written model files are read: shorthands, Core Data spellings, YAML scalars and
/// default values of every type.
@Suite("Model files: decoding")
struct ModelFileDecodingTests {
    static func decode(_ yaml: String) throws -> ObjectModel {
        try ModelFile.decode(Data(yaml.utf8), format: .yaml, file: "test.yaml")
    }

    @Test("Core Data type and delete rule spellings are accepted")
    func coreDataSpellings() throws {
        let model = try Self.decode("""
            version: V1
            entities:
              - name: A
                attributes:
                  - {name: a, type: Integer 16}
                  - {name: b, type: Integer 32}
                  - {name: c, type: Integer 64}
                  - {name: d, type: Boolean}
                  - {name: e, type: Binary}
                  - {name: f, type: String}
                  - {name: g, type: UUID}
                  - {name: h, type: URI}
                relationships:
                  - {name: r, destination: A, deleteRule: No Action}
                  - {name: s, destination: A, deleteRule: Cascade}
            """)
        let a = try #require(model.entity(named: "A"))
        #expect(a.attributes.map(\.type) == [.int16, .int32, .int64, .bool, .data, .string, .uuid, .uri])
        #expect(a.relationships.map(\.deleteRule) == [.noAction, .cascade])
    }

    @Test("YAML scalars are read by what the key expects, not guessed")
    func yamlScalars() throws {
        let model = try Self.decode("""
            version: 2023
            nextVersion: no
            userInfo: {enabled: yes, count: 3, empty: ""}
            entities:
              - name: A
                renamingIdentifier: 'null'
                attributes:
                  - {name: on, type: bool, optional: no, default: yes}
                  - {name: s, type: string, default: 12}
                  - {name: t, type: string, default: "~"}
                  - {name: u, type: string, default: ~}
            """)
        #expect(model.version == "2023")
        #expect(model.nextVersion == "no")
        #expect(model.userInfo == ["enabled": "yes", "count": "3", "empty": ""])
        let a = try #require(model.entity(named: "A"))
        #expect(a.renamingIdentifier == "null")
        #expect(a.attributes[0].isOptional == false)
        #expect(a.attributes[0].defaultValue == .bool(true))
        #expect(a.attributes[1].defaultValue == .string("12"))
        #expect(a.attributes[2].defaultValue == .string("~"))
        #expect(a.attributes[3].defaultValue == nil)
    }

    struct DefaultCase: CustomTestStringConvertible, Sendable {
        var type: AttributeType
        var yaml: String
        var expected: Value
        var testDescription: String { "\(type.rawValue) \(yaml)" }
    }

    static let defaults: [DefaultCase] = [
        DefaultCase(type: .string, yaml: "\"a: b\"", expected: .string("a: b")),
        DefaultCase(type: .int16, yaml: "-32768", expected: .int(-32768)),
        DefaultCase(type: .int32, yaml: "2147483647", expected: .int(2_147_483_647)),
        DefaultCase(type: .int64, yaml: "-9223372036854775808", expected: .int(Int64.min)),
        DefaultCase(type: .double, yaml: "1e-3", expected: .double(0.001)),
        DefaultCase(type: .double, yaml: "3", expected: .double(3)),
        DefaultCase(type: .float, yaml: "0.5", expected: .double(0.5)),
        DefaultCase(type: .decimal, yaml: "\"0.10\"", expected: .decimal(Decimal(string: "0.1")!)),
        DefaultCase(type: .decimal, yaml: "12.25", expected: .decimal(Decimal(string: "12.25")!)),
        DefaultCase(type: .bool, yaml: "false", expected: .bool(false)),
        DefaultCase(type: .date, yaml: "\"2023-06-05T10:00:00Z\"", expected: .date(Date(timeIntervalSince1970: 1_685_959_200))),
        DefaultCase(type: .date, yaml: "2023-06-05", expected: .date(Date(timeIntervalSince1970: 1_685_923_200))),
        DefaultCase(type: .date, yaml: "\"2023-06-05T10:00:00.250Z\"", expected: .date(Date(timeIntervalSince1970: 1_685_959_200.25))),
        DefaultCase(type: .date, yaml: "0", expected: .date(Date(timeIntervalSince1970: 0))),
        DefaultCase(type: .data, yaml: "\"aGVsbG8=\"", expected: .data(Data("hello".utf8))),
        DefaultCase(type: .uuid, yaml: "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", expected: .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)),
        DefaultCase(type: .uri, yaml: "\"https://example.com/x\"", expected: .uri(URL(string: "https://example.com/x")!)),
    ]

    @Test("Defaults coerce to the attribute's type", arguments: defaults)
    func defaultValue(_ c: DefaultCase) throws {
        let model = try Self.decode("""
            version: V1
            entities:
              - name: A
                attributes:
                  - name: x
                    type: \(c.type.rawValue)
                    default: \(c.yaml)
            """)
        let value = try #require(model.entity(named: "A")?.attribute(named: "x")?.defaultValue)
        #expect(value == c.expected)
        // And the value survives a round trip through both formats.
        for format in ModelFileFormat.allCases {
            let again = try ModelFile.decode(try ModelFile.encode(model, format: format), format: format)
            #expect(again.entity(named: "A")?.attribute(named: "x")?.defaultValue == c.expected)
        }
    }

    @Test("Index elements accept the shorthand, the full form and a mix; constraints accept a single keypath")
    func indexForms() throws {
        let model = try Self.decode("""
            version: V1
            entities:
              - name: A
                attributes: [{name: x, type: string}, {name: y, type: int64}]
                indexes:
                  - {name: byX, elements: [x]}
                  - name: byXY
                    elements:
                      - x
                      - {keyPath: y, ascending: false}
                uniquenessConstraints:
                  - x
                  - [x, y]
            """)
        let a = try #require(model.entity(named: "A"))
        #expect(a.indexes == [Index("byX", keyPaths: ["x"]), Index("byXY", elements: [.init("x"), .init("y", ascending: false)])])
        #expect(a.uniquenessConstraints == [UniquenessConstraint(["x"]), UniquenessConstraint(["x", "y"])])
    }

    @Test("Nested composites and an explicit composite type")
    func nestedComposites() throws {
        let model = try Self.decode("""
            version: V1
            entities:
              - name: A
                composites:
                  - name: outer
                    optional: false
                    elements:
                      - {name: a, type: string}
                      - name: inner
                        type: composite
                        elements:
                          - {name: b, type: double, default: 1}
            """)
        let outer = try #require(model.entity(named: "A")?.composite(named: "outer"))
        #expect(outer.isOptional == false)
        #expect(outer.leaves.map(\.path) == [["a"], ["inner", "b"]])
        #expect(outer.leaves.last?.attribute.defaultValue == .double(1))
    }

    @Test("YAML anchors and aliases can share definitions")
    func aliases() throws {
        let model = try Self.decode("""
            version: V1
            entities:
              - name: A
                composites:
                  - name: home
                    elements: &address
                      - {name: street, type: string}
                      - {name: city, type: string}
                  - name: work
                    elements: *address
            """)
        #expect(model.entity(named: "A")?.composite(named: "work")?.elements == model.entity(named: "A")?.composite(named: "home")?.elements)
    }

    @Test("JSON strings with escapes decode exactly")
    func jsonEscapes() throws {
        let json = #"{"version": "V\u00e9 \"1\"\n\/", "userInfo": {"emoji": "\ud83d\ude80"}, "entities": [{"name": "A", "attributes": [{"name": "x", "type": "string"}]}]}"#
        let model = try ModelFile.decode(Data(json.utf8), format: .json)
        #expect(model.version == "Vé \"1\"\n/")
        #expect(model.userInfo["emoji"] == "🚀")
    }

    @Test("Encoded YAML quotes strings a YAML reader could misread", arguments: ["true", "no", "null", "~", "", "123", "1.5", " padded", "a: b", "# x", "- y", "[z]", "@at", "it's"])
    func yamlQuoting(_ text: String) throws {
        let model = ObjectModel(version: "V1", entities: [Entity("A", attributes: [Attribute("x", .string, defaultValue: .string(text))])], userInfo: [text: text])
        let yaml = String(decoding: try ModelFile.encode(model, format: .yaml), as: UTF8.self)
        #expect(yaml.contains("default: \"\(text)\"") || yaml.contains("default: '\(text)'"), "\(yaml)")
        #expect(try ModelFile.decode(Data(yaml.utf8), format: .yaml) == model)
    }
}
