import Foundation
import Strata
import StrataVarlink
import Testing
@testable import StrataDaemon

/// Replies carry objects built straight into `JSONValue` (`ManagedObject.replyValue`); they
/// must be exactly what the object's display JSON (`jsonObject(style: .display)`) converted
/// through `JSONValue(foundation:)` gave: every attribute type, composites nested one and two
/// levels deep, to-one relationships saved and pending, nulls, and a value JSON cannot carry.
@Suite("Objects in replies")
struct ObjectReplyTests {
    static let model = ObjectModel(version: "Replies 1", entities: [
        Entity("Thing", attributes: [
            Attribute("text", .string),
            Attribute("small", .int16),
            Attribute("medium", .int32),
            Attribute("large", .int64),
            Attribute("real", .double),
            Attribute("single", .float),
            Attribute("money", .decimal),
            Attribute("flag", .bool),
            Attribute("when", .date),
            Attribute("blob", .data),
            Attribute("identifier", .uuid),
            Attribute("link", .uri),
        ], composites: [
            CompositeAttribute("colors", elements: [
                .attribute(Attribute("primary", .string)),
                .composite(CompositeAttribute("accent", elements: [
                    .attribute(Attribute("hue", .double)),
                    .attribute(Attribute("name", .string)),
                ])),
            ]),
        ], relationships: [
            Relationship("owner", destination: "Owner", inverse: "things"),
        ]),
        Entity("Owner", attributes: [Attribute("name", .string)], relationships: [
            Relationship("things", destination: "Thing", inverse: "owner", toMany: true),
        ]),
    ])

    static func member(_ value: JSONValue, _ path: String...) -> JSONValue? {
        var current: JSONValue? = value
        for name in path {
            guard case .object(let members)? = current else { return nil }
            current = members[name]
        }
        return current
    }

    static func reference(_ object: ManagedObject) -> JSONValue {
        JSONValue(foundation: object.jsonObject(style: .display))
    }

    @Test func everyValueIsWrittenAsTheDisplayJSONWasConverted() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("replies-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try PersistentStore.open(at: directory.appendingPathComponent("replies.sqlite"), model: Self.model)
        defer { try? store.close() }
        let context = ObjectContext(store: store)
        let owner = try context.insert("Owner")
        owner["name"] = "Ada"

        let full = try context.insert("Thing")
        full["text"] = "quote \" backslash \\ tab \t é 🚀"
        full["small"] = 7
        full["medium"] = -70_000
        full["large"] = .int(Int64.max)
        full["real"] = 3.0          // integral: an integer in JSON, as JSONValue(foundation:) made it
        full["single"] = 0.5
        full["money"] = .decimal(Decimal(string: "12.345")!)
        full["flag"] = true
        full["when"] = .date(Date(timeIntervalSince1970: 1_700_000_000.25))
        full["blob"] = .data(Data([0, 1, 2, 254, 255]))
        full["identifier"] = .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)
        full["link"] = .uri(URL(string: "https://example.com/a?b=c")!)
        full["colors.primary"] = "red"
        full["colors.accent.hue"] = 0.75
        full["colors.accent.name"] = "amber"
        try full.setObject(owner, forRelationship: "owner")

        let empty = try context.insert("Thing")   // nulls everywhere, no owner

        let unrepresentable = try context.insert("Thing")
        unrepresentable["real"] = .double(.infinity)

        // Pending (temporary keys, the owner as an object), then saved and fetched again
        // (the owner as a stored key).
        for object in [full, empty] { #expect(object.replyValue == Self.reference(object), "\(object.replyValue)") }
        try context.save()
        let fetched = try ObjectContext(store: store).fetch("Thing")
        #expect(fetched.count == 3)
        for object in fetched + [full, empty, owner] {
            #expect(object.replyValue == Self.reference(object), "\(object.replyValue) vs \(Self.reference(object))")
        }
        let saved = try #require(fetched.first { $0["text"] != .null })
        #expect(Self.member(saved.replyValue, "real") == .int(3))
        #expect(Self.member(saved.replyValue, "colors", "accent", "name") == .string("amber"))
        // Both forms are built from the entity's JSON members: their shape, spelt out.
        for value in [saved.replyValue, Self.reference(saved)] {
            guard case .object(let top) = value, case .object(let colors)? = top["colors"], case .object(let accent)? = colors["accent"] else {
                Issue.record("not nested as expected: \(value)")
                continue
            }
            #expect(Set(top.keys) == ["_entity", "_pk", "text", "small", "medium", "large", "real", "single", "money", "flag", "when",
                                      "blob", "identifier", "link", "colors", "owner"])
            #expect(Set(colors.keys) == ["primary", "accent"] && colors["primary"] == .string("red"))
            #expect(Set(accent.keys) == ["hue", "name"] && accent["hue"] == .double(0.75))
        }
        #expect(Self.member(saved.replyValue, "owner") == .int(owner.objectID.primaryKey))
        // Infinity has no JSON form: the whole object was null, and still is.
        #expect(unrepresentable.replyValue == .null)
        #expect(Self.reference(unrepresentable) == .null)
    }
}
