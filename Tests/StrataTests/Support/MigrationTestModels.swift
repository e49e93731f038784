import Foundation
import Strata
import Testing

/// One change kind for the migration tests: a source and a destination model, rows to insert
/// at the source version, and queries whose results must hold after the whole plan ran.
struct MigrationCase: Sendable, CustomTestStringConvertible {
    var name: String
    var source: ObjectModel
    var destination: ObjectModel
    /// Plain SQL run on a fresh source store.
    var seed: [String]
    /// `(kind, deferrable)` pairs that must appear in the plan, e.g. `("renameColumn", false)`.
    var expectedOperations: [(String, Bool)]
    /// Query -> expected rows, each rendered as `a|b|NULL`.
    var checks: [(String, [String])]

    var testDescription: String { name }
}

enum MigrationTestModels {
    // MARK: - Building blocks

    static func owner(_ aircraft: Relationship? = Relationship("aircraft", destination: "Aircraft", inverse: "owner", toMany: true),
                      name: String = "Owner", extra: [Attribute] = []) -> Entity {
        Entity(name, attributes: [Attribute("name", .string)] + extra, relationships: aircraft.map { [$0] } ?? [])
    }

    static func aircraft(
        attributes: [Attribute]? = nil, composites: [CompositeAttribute]? = nil,
        relationships: [Relationship]? = nil, indexes: [Index] = [Index("byTail", keyPaths: ["tailNumber"])],
        unique: [UniquenessConstraint] = [], parent: String? = nil, name: String = "Aircraft"
    ) -> Entity {
        Entity(name, parent: parent,
               attributes: attributes ?? [
                   Attribute("tailNumber", .string, isOptional: false),
                   Attribute("seats", .int16),
                   Attribute("photo", .data),
               ],
               composites: composites ?? [CompositeAttribute("colorScheme", elements: [
                   .attribute(Attribute("primary", .string)), .attribute(Attribute("secondary", .string)),
               ])],
               relationships: relationships ?? [Relationship("owner", destination: "Owner", inverse: "aircraft")],
               indexes: indexes, uniquenessConstraints: unique)
    }

    static func model(_ version: String, _ entities: [Entity]) -> ObjectModel {
        ObjectModel(version: version, entities: entities)
    }

    static let base = model("Aircraft 1", [aircraft(), owner()])

    static let baseSeed = [
        #"INSERT INTO "Owner" ("_pk", "name") VALUES (1, 'Ann'), (2, 'Bob')"#,
        #"INSERT INTO "Aircraft" ("_pk", "tailNumber", "seats", "photo", "colorScheme_primary", "colorScheme_secondary", "owner_id") VALUES (1, 'F-GSPT', 4, X'01', 'red', 'white', 1), (2, 'D-EABC', NULL, NULL, 'blue', NULL, 1), (3, 'N123', 2, NULL, NULL, NULL, 2)"#,
    ]

    static let defaultAttributes = [
        Attribute("tailNumber", .string, isOptional: false), Attribute("seats", .int16), Attribute("photo", .data),
    ]

    // MARK: - Inferable change kinds

    static let cases: [MigrationCase] = [
        MigrationCase(
            name: "add attribute", source: base,
            destination: model("Aircraft 2", [aircraft(attributes: defaultAttributes + [
                Attribute("flightHours", .double, isOptional: false, defaultValue: 0.5), Attribute("registeredAt", .date),
            ]), owner()]),
            seed: baseSeed,
            expectedOperations: [("addColumn", false), ("rewriteTable", true)],
            checks: [(#"SELECT "_pk", "flightHours", "registeredAt" FROM "Aircraft" ORDER BY 1"#, ["1|0.5|NULL", "2|0.5|NULL", "3|0.5|NULL"])]),
        MigrationCase(
            name: "remove attribute", source: base,
            destination: model("Aircraft 2", [aircraft(attributes: [Attribute("tailNumber", .string, isOptional: false), Attribute("seats", .int16)]), owner()]),
            seed: baseSeed,
            expectedOperations: [("rewriteTable", true), ("incrementalVacuum", true)],
            checks: [(#"SELECT "_pk", "tailNumber", "seats", "owner_id" FROM "Aircraft" ORDER BY 1"#, ["1|F-GSPT|4|1", "2|D-EABC|NULL|1", "3|N123|2|2"])]),
        MigrationCase(
            name: "optional to non-optional with default", source: base,
            destination: model("Aircraft 2", [aircraft(attributes: [
                Attribute("tailNumber", .string, isOptional: false), Attribute("seats", .int16, isOptional: false, defaultValue: 1), Attribute("photo", .data),
            ]), owner()]),
            seed: baseSeed,
            expectedOperations: [("setDefaultWhereNull", false)],
            checks: [(#"SELECT "_pk", "seats" FROM "Aircraft" ORDER BY 1"#, ["1|4", "2|1", "3|2"])]),
        MigrationCase(
            name: "non-optional to optional", source: base,
            destination: model("Aircraft 2", [aircraft(attributes: [
                Attribute("tailNumber", .string), Attribute("seats", .int16), Attribute("photo", .data),
            ]), owner()]),
            seed: baseSeed, expectedOperations: [],
            checks: [(#"SELECT count(*) FROM "Aircraft""#, ["3"])]),
        MigrationCase(
            name: "rename attribute", source: base,
            destination: model("Aircraft 2", [aircraft(attributes: [
                Attribute("registration", .string, isOptional: false, renamingIdentifier: "tailNumber"), Attribute("seats", .int16), Attribute("photo", .data),
            ], indexes: [Index("byTail", keyPaths: ["registration"])]), owner()]),
            seed: baseSeed,
            expectedOperations: [("renameColumn", false)],
            checks: [(#"SELECT "_pk", "registration" FROM "Aircraft" ORDER BY 1"#, ["1|F-GSPT", "2|D-EABC", "3|N123"])]),
        MigrationCase(
            name: "rename entity", source: base,
            destination: model("Aircraft 2", [
                aircraft(relationships: [Relationship("owner", destination: "Operator", inverse: "aircraft")]),
                Entity("Operator", attributes: [Attribute("name", .string)], relationships: [Relationship("aircraft", destination: "Aircraft", inverse: "owner", toMany: true)], renamingIdentifier: "Owner"),
            ]),
            seed: baseSeed,
            expectedOperations: [("renameTable", false)],
            checks: [(#"SELECT "_pk", "name" FROM "Operator" ORDER BY 1"#, ["1|Ann", "2|Bob"])]),
        MigrationCase(
            name: "add entity", source: base,
            destination: model("Aircraft 2", [aircraft(), owner(), Entity("Airport", attributes: [Attribute("code", .string, isOptional: false)], indexes: [Index("byCode", keyPaths: ["code"])])]),
            seed: baseSeed,
            expectedOperations: [("createTable", false), ("createIndex", false)],
            checks: [(#"SELECT count(*) FROM "Airport""#, ["0"])]),
        MigrationCase(
            name: "remove entity", source: base,
            destination: model("Aircraft 2", [aircraft(relationships: [])]),
            seed: baseSeed,
            expectedOperations: [("dropTable", true), ("rewriteTable", true)],
            checks: [(#"SELECT "_pk", "tailNumber" FROM "Aircraft" ORDER BY 1"#, ["1|F-GSPT", "2|D-EABC", "3|N123"])]),
        MigrationCase(
            name: "add to-one relationship", source: base,
            destination: model("Aircraft 2", [aircraft(relationships: [
                Relationship("owner", destination: "Owner", inverse: "aircraft"), Relationship("previousOwner", destination: "Owner"),
            ]), owner()]),
            seed: baseSeed,
            expectedOperations: [("addColumn", false), ("createIndex", true)],
            checks: [(#"SELECT count(*) FROM "Aircraft" WHERE "previousOwner_id" IS NULL"#, ["3"])]),
        MigrationCase(
            name: "remove relationship", source: base,
            destination: model("Aircraft 2", [aircraft(relationships: []), owner(nil)]),
            seed: baseSeed,
            expectedOperations: [("rewriteTable", true)],
            checks: [(#"SELECT "_pk" FROM "Aircraft" ORDER BY 1"#, ["1", "2", "3"])]),
        MigrationCase(
            name: "to-one to to-many (many-to-many)", source: base,
            destination: model("Aircraft 2", [aircraft(relationships: [Relationship("owner", destination: "Owner", inverse: "aircraft", toMany: true)]), owner()]),
            seed: baseSeed,
            expectedOperations: [("createJoinTable", false), ("populateJoinTable", false), ("rewriteTable", true)],
            checks: [(#"SELECT "source_id", "target_id" FROM "Aircraft_owner" ORDER BY 1, 2"#, ["1|1", "2|1", "3|2"])]),
        MigrationCase(
            name: "to-one without inverse to to-many", source: model("Aircraft 1", [aircraft(relationships: [Relationship("owner", destination: "Owner")]), owner(nil)]),
            destination: model("Aircraft 2", [aircraft(relationships: [Relationship("owner", destination: "Owner", toMany: true, ordered: true)]), owner(nil)]),
            seed: baseSeed,
            expectedOperations: [("createJoinTable", false), ("populateJoinTable", false)],
            checks: [(#"SELECT "source_id", "target_id", "source_order" FROM "Aircraft_owner" ORDER BY 1, 2"#, ["1|1|0", "2|1|0", "3|2|0"])]),
        MigrationCase(
            name: "ordered to unordered (one-to-many)", source: model("Aircraft 1", [aircraft(), owner(Relationship("aircraft", destination: "Aircraft", inverse: "owner", toMany: true, ordered: true))]),
            destination: base,
            seed: [baseSeed[0], #"INSERT INTO "Aircraft" ("_pk", "tailNumber", "owner_id", "owner_order") VALUES (1, 'A', 1, 1), (2, 'B', 1, 0)"#],
            expectedOperations: [("rewriteTable", true)],
            checks: [(#"SELECT "_pk", "owner_id" FROM "Aircraft" ORDER BY 1"#, ["1|1", "2|1"])]),
        MigrationCase(
            name: "unordered to ordered (one-to-many)", source: base,
            destination: model("Aircraft 2", [aircraft(), owner(Relationship("aircraft", destination: "Aircraft", inverse: "owner", toMany: true, ordered: true))]),
            seed: baseSeed,
            expectedOperations: [("addColumn", false), ("fillOrder", false)],
            checks: [(#"SELECT "_pk", "owner_id", "owner_order" FROM "Aircraft" ORDER BY 1"#, ["1|1|0", "2|1|1", "3|2|0"])]),
        MigrationCase(
            name: "ordered to unordered (many-to-many)", source: manyToMany(ordered: true, version: "Aircraft 1"),
            destination: manyToMany(ordered: false, version: "Aircraft 2"),
            seed: manyToManySeed(ordered: true),
            expectedOperations: [("rewriteJoinTable", true)],
            checks: [(#"SELECT "source_id", "target_id" FROM "Aircraft_crew" ORDER BY 1, 2"#, ["1|1", "1|2", "2|2"])]),
        MigrationCase(
            name: "unordered to ordered (many-to-many)", source: manyToMany(ordered: false, version: "Aircraft 1"),
            destination: manyToMany(ordered: true, version: "Aircraft 2"),
            seed: manyToManySeed(ordered: false),
            // The added order column leaves the join table exactly as a fresh one: nothing is
            // deferred (inference used to plan a rewrite that the ledger never held).
            expectedOperations: [("addColumn", false), ("fillOrder", false)],
            checks: [(#"SELECT "source_id", "target_id", "source_order" FROM "Aircraft_crew" ORDER BY 1, 2"#, ["1|1|0", "1|2|1", "2|2|0"])]),
        MigrationCase(
            name: "add parent entity", source: base,
            destination: model("Aircraft 2", [
                Entity("Vehicle", attributes: [Attribute("manufacturer", .string)]), aircraft(parent: "Vehicle"), owner(),
            ]),
            seed: baseSeed,
            expectedOperations: [("renameTable", false), ("addColumn", false), ("rewriteTable", true)],
            checks: [(#"SELECT "_pk", "_entity", "tailNumber", "owner_id" FROM "Vehicle" ORDER BY 1"#, ["1|Aircraft|F-GSPT|1", "2|Aircraft|D-EABC|1", "3|Aircraft|N123|2"])]),
        MigrationCase(
            name: "add sub-entity", source: base,
            destination: model("Aircraft 2", [aircraft(), Entity("Glider", parent: "Aircraft", attributes: [Attribute("span", .double)]), owner()]),
            seed: baseSeed,
            expectedOperations: [("addColumn", false), ("rewriteTable", true)],
            checks: [(#"SELECT "_pk", "_entity", "span" FROM "Aircraft" ORDER BY 1"#, ["1|Aircraft|NULL", "2|Aircraft|NULL", "3|Aircraft|NULL"])]),
        MigrationCase(
            name: "remove sub-entity", source: model("Aircraft 1", [aircraft(), Entity("Glider", parent: "Aircraft", attributes: [Attribute("span", .double)]), owner()]),
            destination: base,
            seed: [baseSeed[0], #"INSERT INTO "Aircraft" ("_pk", "_entity", "tailNumber", "span", "owner_id") VALUES (1, 'Aircraft', 'A', NULL, 1), (2, 'Glider', 'G', 15.0, 2)"#],
            expectedOperations: [("deleteRows", false), ("rewriteTable", true)],
            checks: [(#"SELECT "_pk", "tailNumber" FROM "Aircraft" ORDER BY 1"#, ["1|A"])]),
        MigrationCase(
            name: "move property up", source: model("Aircraft 1", [Entity("Vehicle", attributes: [Attribute("make", .string)]), Entity("Car", parent: "Vehicle", attributes: [Attribute("wheels", .int16)])]),
            destination: model("Aircraft 2", [Entity("Vehicle", attributes: [Attribute("make", .string), Attribute("wheels", .int16)]), Entity("Car", parent: "Vehicle")]),
            seed: [#"INSERT INTO "Vehicle" ("_pk", "_entity", "make", "wheels") VALUES (1, 'Car', 'VW', 4), (2, 'Vehicle', 'X', NULL)"#],
            expectedOperations: [],
            checks: [(#"SELECT "_pk", "_entity", "wheels" FROM "Vehicle" ORDER BY 1"#, ["1|Car|4", "2|Vehicle|NULL"])]),
        MigrationCase(
            name: "sub-entity becomes a root", source: model("Aircraft 1", [Entity("Vehicle", attributes: [Attribute("make", .string)]), Entity("Glider", parent: "Vehicle", attributes: [Attribute("span", .double)])]),
            destination: model("Aircraft 2", [Entity("Vehicle", attributes: [Attribute("make", .string)]), Entity("Glider", attributes: [Attribute("make", .string), Attribute("span", .double)])]),
            seed: [#"INSERT INTO "Vehicle" ("_pk", "_entity", "make", "span") VALUES (1, 'Vehicle', 'X', NULL), (2, 'Glider', 'Schleicher', 18.0)"#],
            expectedOperations: [("createTable", false), ("copyRows", false), ("deleteRows", false), ("rewriteTable", true)],
            checks: [(#"SELECT "_pk", "make", "span" FROM "Glider""#, ["2|Schleicher|18.0"]), (#"SELECT "_pk", "make" FROM "Vehicle""#, ["1|X"])]),
        MigrationCase(
            name: "composite elements added, removed, renamed", source: base,
            destination: model("Aircraft 2", [aircraft(composites: [CompositeAttribute("colorScheme", elements: [
                .attribute(Attribute("main", .string, renamingIdentifier: "primary")), .attribute(Attribute("trim", .string, defaultValue: "none")),
            ])]), owner()]),
            seed: baseSeed,
            expectedOperations: [("renameColumn", false), ("addColumn", false), ("rewriteTable", true)],
            checks: [(#"SELECT "_pk", "colorScheme_main", "colorScheme_trim" FROM "Aircraft" ORDER BY 1"#, ["1|red|none", "2|blue|none", "3|NULL|none"])]),
        MigrationCase(
            name: "add and remove composite attribute", source: base,
            destination: model("Aircraft 2", [aircraft(composites: [CompositeAttribute("engine", elements: [
                .attribute(Attribute("make", .string)), .composite(CompositeAttribute("power", elements: [.attribute(Attribute("kw", .int32))])),
            ])]), owner()]),
            seed: baseSeed,
            expectedOperations: [("addColumn", false), ("rewriteTable", true)],
            checks: [(#"SELECT count(*) FROM "Aircraft" WHERE "engine_power_kw" IS NULL"#, ["3"])]),
        MigrationCase(
            name: "add, change and remove indexes", source: model("Aircraft 1", [aircraft(indexes: [Index("byTail", keyPaths: ["tailNumber"]), Index("bySeats", keyPaths: ["seats"])]), owner()]),
            destination: model("Aircraft 2", [aircraft(indexes: [Index("byTail", elements: [.init("tailNumber"), .init("seats", ascending: false)]), Index("byColor", keyPaths: ["colorScheme.primary"])]), owner()]),
            seed: baseSeed,
            expectedOperations: [("dropIndex", true), ("createIndex", true)],
            checks: [(#"SELECT count(*) FROM "Aircraft""#, ["3"])]),
        MigrationCase(
            name: "add uniqueness constraint", source: base,
            destination: model("Aircraft 2", [aircraft(unique: [UniquenessConstraint(["tailNumber"])]), owner()]),
            seed: baseSeed,
            expectedOperations: [("createIndex", false)],
            checks: [(#"SELECT count(*) FROM "Aircraft""#, ["3"])]),
        MigrationCase(
            name: "remove uniqueness constraint", source: model("Aircraft 1", [aircraft(unique: [UniquenessConstraint(["tailNumber"])]), owner()]),
            destination: base,
            seed: baseSeed,
            expectedOperations: [("dropIndex", false)],
            checks: [(#"SELECT count(*) FROM "Aircraft""#, ["3"])]),
        MigrationCase(
            name: "widening type changes", source: base,
            destination: model("Aircraft 2", [aircraft(attributes: [
                Attribute("tailNumber", .string, isOptional: false), Attribute("seats", .double), Attribute("photo", .data),
            ]), owner(extra: [Attribute("fleetSize", .int64)])]),
            seed: baseSeed,
            expectedOperations: [("widenColumn", false), ("rewriteTable", true)],
            checks: [(#"SELECT "_pk", "seats", typeof("seats") FROM "Aircraft" ORDER BY 1"#, ["1|4.0|real", "2|NULL|null", "3|2.0|real"])]),
        MigrationCase(
            name: "rename relationship", source: base,
            destination: model("Aircraft 2", [
                aircraft(relationships: [Relationship("operator", destination: "Owner", inverse: "aircraft", renamingIdentifier: "owner")]),
                owner(Relationship("aircraft", destination: "Aircraft", inverse: "operator", toMany: true)),
            ]),
            seed: baseSeed,
            // The renamed column's index: dropped and built under its new name (two bounded ledger tasks).
            expectedOperations: [("renameColumn", false), ("dropIndex", true), ("createIndex", true)],
            checks: [(#"SELECT "_pk", "operator_id" FROM "Aircraft" ORDER BY 1"#, ["1|1", "2|1", "3|2"])]),
        MigrationCase(
            name: "one-to-one gains storage on both sides", source: model("Aircraft 1", [aircraft(relationships: [Relationship("owner", destination: "Owner")]), owner(nil)]),
            destination: model("Aircraft 2", [aircraft(relationships: [Relationship("owner", destination: "Owner", inverse: "plane")]), owner(Relationship("plane", destination: "Aircraft", inverse: "owner"))]),
            seed: [baseSeed[0], #"INSERT INTO "Aircraft" ("_pk", "tailNumber", "owner_id") VALUES (1, 'A', 2)"#],
            expectedOperations: [("addColumn", false), ("populateForeignKey", false)],
            checks: [(#"SELECT "_pk", "plane_id" FROM "Owner" ORDER BY 1"#, ["1|NULL", "2|1"])]),
        MigrationCase(
            name: "rename sub-entity in a shared table", source: model("Aircraft 1", [Entity("Vehicle", attributes: [Attribute("make", .string)]), Entity("Car", parent: "Vehicle")]),
            destination: model("Aircraft 2", [Entity("Vehicle", attributes: [Attribute("make", .string)]), Entity("Automobile", parent: "Vehicle", renamingIdentifier: "Car")]),
            seed: [#"INSERT INTO "Vehicle" ("_pk", "_entity", "make") VALUES (1, 'Car', 'VW'), (2, 'Vehicle', 'X')"#],
            expectedOperations: [("renameEntityValues", false)],
            checks: [(#"SELECT "_pk", "_entity" FROM "Vehicle" ORDER BY 1"#, ["1|Automobile", "2|Vehicle"])]),
        MigrationCase(
            name: "rename entity with a join table", source: manyToMany(ordered: true, version: "Aircraft 1"),
            destination: model("Aircraft 2", [
                Entity("Plane", attributes: [Attribute("tailNumber", .string)], relationships: [Relationship("crew", destination: "Pilot", inverse: "aircraft", toMany: true, ordered: true)], renamingIdentifier: "Aircraft"),
                Entity("Pilot", attributes: [Attribute("name", .string)], relationships: [Relationship("aircraft", destination: "Plane", inverse: "crew", toMany: true)]),
            ]),
            seed: manyToManySeed(ordered: true),
            expectedOperations: [("renameTable", false), ("createJoinTable", false), ("copyRows", false), ("dropTable", true)],
            checks: [(#"SELECT "target_id", "source_id", "target_order" FROM "Pilot_aircraft" ORDER BY 1, 2"#, ["1|1|0", "1|2|1", "2|2|0"])]),
        MigrationCase(
            name: "swap two attribute names and reuse a renamed name", source: base,
            destination: model("Aircraft 2", [aircraft(attributes: [
                Attribute("seats", .string, isOptional: false, renamingIdentifier: "tailNumber"),
                Attribute("tailNumber", .int16, renamingIdentifier: "seats"),
                Attribute("photo", .string),
                Attribute("picture", .data, renamingIdentifier: "photo"),
            ], indexes: [Index("byTail", keyPaths: ["seats"])]), owner()]),
            seed: baseSeed,
            expectedOperations: [("renameColumn", false), ("addColumn", false), ("rewriteTable", true)],
            checks: [(#"SELECT "_pk", "seats", "tailNumber", "photo", "picture" FROM "Aircraft" ORDER BY 1"#, ["1|F-GSPT|4|NULL|x01", "2|D-EABC|NULL|NULL|NULL", "3|N123|2|NULL|NULL"])]),
        MigrationCase(
            name: "sub-entity with a many-to-many becomes a root", source: model("Aircraft 1", [
                Entity("Vehicle", attributes: [Attribute("make", .string)]),
                Entity("Glider", parent: "Vehicle", relationships: [Relationship("pilots", destination: "Pilot", inverse: "gliders", toMany: true)]),
                Entity("Pilot", relationships: [Relationship("gliders", destination: "Glider", inverse: "pilots", toMany: true)]),
            ]),
            destination: model("Aircraft 2", [
                Entity("Vehicle", attributes: [Attribute("make", .string)]),
                Entity("Glider", attributes: [Attribute("make", .string)], relationships: [Relationship("pilots", destination: "Pilot", inverse: "gliders", toMany: true)]),
                Entity("Pilot", relationships: [Relationship("gliders", destination: "Glider", inverse: "pilots", toMany: true)]),
            ]),
            seed: [#"INSERT INTO "Vehicle" ("_pk", "_entity", "make") VALUES (1, 'Vehicle', 'X'), (2, 'Glider', 'G')"#, #"INSERT INTO "Pilot" ("_pk") VALUES (7)"#,
                   #"INSERT INTO "Glider_pilots" ("source_id", "target_id") VALUES (2, 7)"#],
            expectedOperations: [("createTable", false), ("copyRows", false), ("deleteRows", false), ("dropTable", true)],
            checks: [(#"SELECT "source_id", "target_id" FROM "Glider_pilots""#, ["2|7"]), (#"SELECT "_pk", "make" FROM "Glider""#, ["2|G"])]),
    ]

    static func manyToMany(ordered: Bool, version: String) -> ObjectModel {
        model(version, [
            Entity("Aircraft", attributes: [Attribute("tailNumber", .string)], relationships: [Relationship("crew", destination: "Pilot", inverse: "aircraft", toMany: true, ordered: ordered)]),
            Entity("Pilot", attributes: [Attribute("name", .string)], relationships: [Relationship("aircraft", destination: "Aircraft", inverse: "crew", toMany: true)]),
        ])
    }

    static func manyToManySeed(ordered: Bool) -> [String] {
        [
            #"INSERT INTO "Aircraft" ("_pk", "tailNumber") VALUES (1, 'A'), (2, 'B')"#,
            #"INSERT INTO "Pilot" ("_pk", "name") VALUES (1, 'P1'), (2, 'P2')"#,
            ordered ? #"INSERT INTO "Aircraft_crew" ("source_id", "target_id", "source_order") VALUES (1, 1, 0), (1, 2, 1), (2, 2, 0)"#
                : #"INSERT INTO "Aircraft_crew" ("source_id", "target_id") VALUES (1, 1), (1, 2), (2, 2)"#,
        ]
    }

    // MARK: - Refused changes

    struct Refusal: Sendable, CustomTestStringConvertible {
        var name: String
        var destination: ObjectModel
        var code: MigrationError.Code
        var entity: String
        var property: String?
        var mentions: [String]
        var testDescription: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(name: "narrowing type change", destination: model("Aircraft 2", [aircraft(attributes: [
            Attribute("tailNumber", .string, isOptional: false), Attribute("seats", .int16), Attribute("photo", .string),
        ]), owner()]), code: .incompatibleTypeChange, entity: "Aircraft", property: "photo", mentions: ["data -> string", "staged migration"]),
        Refusal(name: "string to integer", destination: model("Aircraft 2", [aircraft(attributes: [
            Attribute("tailNumber", .int64, isOptional: false), Attribute("seats", .int16), Attribute("photo", .data),
        ]), owner()]), code: .incompatibleTypeChange, entity: "Aircraft", property: "tailNumber", mentions: ["string -> int64", "staged migration"]),
        Refusal(name: "to-many to to-one", destination: model("Aircraft 2", [aircraft(relationships: [Relationship("owner", destination: "Owner", inverse: "aircraft")]),
            owner(Relationship("aircraft", destination: "Aircraft", inverse: "owner"))]),
            code: .notInferable, entity: "Owner", property: "aircraft", mentions: ["to-many -> to-one", "staged migration"]),
        Refusal(name: "ambiguous rename", destination: model("Aircraft 2", [aircraft(attributes: [
            Attribute("callSign", .string, renamingIdentifier: "tailNumber"), Attribute("registration", .string, renamingIdentifier: "tailNumber"), Attribute("seats", .int16), Attribute("photo", .data),
        ], indexes: []), owner()]), code: .ambiguousRename, entity: "Aircraft", property: "registration", mentions: ["tailNumber", "registration", "callSign"]),
        Refusal(name: "merge two tables under a new parent", destination: model("Aircraft 2", [
            Entity("Thing"), aircraft(parent: "Thing"), Entity("Owner", parent: "Thing", attributes: [Attribute("name", .string)], relationships: [Relationship("aircraft", destination: "Aircraft", inverse: "owner", toMany: true)]),
        ]), code: .notInferable, entity: "Owner", property: nil, mentions: ["merg", "staged migration"]),
    ]
}
