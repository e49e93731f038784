import Foundation
@testable import Strata

/// Models built in code for the store and object tests.
enum TestModels {
    /// Aircraft with a composite and an index on a composite leaf; pilots (one-to-many,
    /// ordered), tags (many-to-many), a vehicle hierarchy, and every attribute type.
    static let fleet: ObjectModel = ObjectModel(version: "Fleet 1", entities: [
        Entity("Vehicle", isAbstract: true, attributes: [
            Attribute("serial", .string, isOptional: false),
        ]),
        Entity("Aircraft", parent: "Vehicle", attributes: [
            Attribute("tailNumber", .string, isOptional: false),
            Attribute("aircraftType", .string),
            Attribute("photo", .data),
            Attribute("seats", .int16, defaultValue: 4),
            Attribute("flightHours", .double, defaultValue: 0),
        ], composites: [
            CompositeAttribute("colorScheme", elements: [
                .attribute(Attribute("primary", .string)),
                .attribute(Attribute("secondary", .string)),
                .attribute(Attribute("tertiary", .string)),
            ]),
        ], relationships: [
            Relationship("pilots", destination: "Pilot", inverse: "aircraft", toMany: true, ordered: true, deleteRule: .cascade),
            Relationship("tags", destination: "Tag", inverse: "aircraft", toMany: true),
            Relationship("hangar", destination: "Hangar", inverse: "aircraft", deleteRule: .nullify),
        ], indexes: [
            Index("byPrimaryColor", keyPaths: ["colorScheme.primary"]),
        ], uniquenessConstraints: [UniquenessConstraint(["tailNumber"])]),
        Entity("Boat", parent: "Vehicle", attributes: [
            Attribute("hullLength", .double),
        ]),
        Entity("Pilot", attributes: [
            Attribute("name", .string, isOptional: false),
            Attribute("license", .uuid),
            Attribute("born", .date),
            Attribute("active", .bool, defaultValue: true),
            Attribute("rating", .decimal),
            Attribute("homepage", .uri),
            Attribute("flights", .int64, defaultValue: 0),
            Attribute("weight", .float),
            Attribute("code", .int32),
        ], relationships: [
            Relationship("aircraft", destination: "Aircraft", inverse: "pilots"),
        ]),
        Entity("Tag", attributes: [Attribute("label", .string, isOptional: false)], relationships: [
            Relationship("aircraft", destination: "Aircraft", inverse: "tags", toMany: true),
        ]),
        Entity("Hangar", attributes: [Attribute("name", .string)], relationships: [
            Relationship("aircraft", destination: "Aircraft", inverse: "hangar", toMany: true, deleteRule: .deny),
        ]),
    ])
}
