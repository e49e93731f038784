import Foundation
import GRDB
@testable import Strata

/// The model and rows the predicate and fetch query tests run against.
///
/// ```text
/// Vehicle (root, _entity column)            Person                 Tag
///   ├─ Car                                    name, age              label
///   └─ Aircraft (tailNumber, wingspan)        manager -> Person      vehicles <<->> Vehicle.tags (join table)
///        └─ Helicopter (rotorCount)           reports ->> Person
///                                             vehicles ->> Vehicle.owner (inverse foreign key)
/// Vehicle: name, serial (uuid), registered (date), active (bool), hours (double), seats (int32),
///          price (decimal), website (uri), colorScheme { primary, secondary, trim { finish } },
///          owner -> Person, tags <<->> Tag; index byPrimaryColor on colorScheme.primary
/// ```
enum PredicateTestModel {
    static let model = ObjectModel(version: "Predicates 1", entities: [
        Entity("Vehicle",
               attributes: [
                   Attribute("name", .string),
                   Attribute("serial", .uuid),
                   Attribute("registered", .date),
                   Attribute("active", .bool),
                   Attribute("hours", .double),
                   Attribute("seats", .int32),
                   Attribute("price", .decimal),
                   Attribute("website", .uri),
               ],
               composites: [CompositeAttribute("colorScheme", elements: [
                   .attribute(Attribute("primary", .string)),
                   .attribute(Attribute("secondary", .string)),
                   .composite(CompositeAttribute("trim", elements: [.attribute(Attribute("finish", .string))])),
               ])],
               relationships: [
                   Relationship("owner", destination: "Person", inverse: "vehicles"),
                   Relationship("tags", destination: "Tag", inverse: "vehicles", toMany: true),
               ],
               indexes: [Index("byPrimaryColor", keyPaths: ["colorScheme.primary"])]),
        Entity("Car", parent: "Vehicle"),
        Entity("Aircraft", parent: "Vehicle",
               attributes: [Attribute("tailNumber", .string), Attribute("wingspan", .double)]),
        Entity("Helicopter", parent: "Aircraft", attributes: [Attribute("rotorCount", .int16)]),
        Entity("Person",
               attributes: [Attribute("name", .string), Attribute("age", .int16)],
               relationships: [
                   Relationship("vehicles", destination: "Vehicle", inverse: "owner", toMany: true),
                   Relationship("manager", destination: "Person", inverse: "reports"),
                   Relationship("reports", destination: "Person", inverse: "manager", toMany: true),
               ]),
        Entity("Tag",
               attributes: [Attribute("label", .string)],
               relationships: [Relationship("vehicles", destination: "Vehicle", inverse: "tags", toMany: true)]),
    ])

    static let layout = StorageLayout(model: model)

    static let serial1 = UUID(uuidString: "6F1A2B3C-4D5E-4F60-8A9B-0C1D2E3F4A5B")!
    static let serial3 = UUID(uuidString: "00000000-0000-4000-8000-000000000003")!

    static func date(_ iso: String) -> Date { Value.parseISODate(iso)! }

    /// A fresh in-memory database with the schema, the Strata SQL functions and the rows:
    ///
    /// | pk | entity | name | owner | primary | hours | seats | active | tags |
    /// |---|---|---|---|---|---|---|---|---|
    /// | 1 | Car | Café Racer | Alice | red | 120.5 | 2 | yes | fast, vintage |
    /// | 2 | Car | cafe latte | Bob | Red | 80 | 4 | no | vintage |
    /// | 3 | Aircraft | Spirit | Alice | blue | 1500 | 4 | yes | fast |
    /// | 4 | Helicopter | Écureuil | Zoé | white | 300 | 6 | nil | Électrique |
    /// | 5 | Vehicle | Unknown | nil | nil | nil | nil | nil | — |
    ///
    /// People: 1 Alice (30), 2 Bob (45, manager Alice), 3 Zoé (28, manager Bob), 4 ÉMILE (no age).
    static func makeDatabase() throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.prepareDatabase { db in SQLFunctions.register(in: db) }
        let queue = try DatabaseQueue(configuration: configuration)
        try queue.write { db in
            for statement in layout.creationSQL { try db.execute(sql: statement) }
            let people: [[DatabaseValueConvertible?]] = [
                [1, "Alice", 30, nil], [2, "Bob", 45, 1], [3, "Zoé", 28, 2], [4, "ÉMILE", nil, nil],
            ]
            for p in people {
                try db.execute(sql: #"INSERT INTO "Person" ("_pk", "name", "age", "manager_id") VALUES (?, ?, ?, ?)"#,
                               arguments: StatementArguments(p))
            }
            let vehicles: [[DatabaseValueConvertible?]] = [
                [1, "Car", "Café Racer", serial1.uuidString, date("2020-01-01").timeIntervalSince1970, 1, 120.5, 2, "19.99",
                 "https://example.com/racer", "red", "black", "matte", 1, nil, nil, nil],
                [2, "Car", "cafe latte", nil, date("2021-06-15").timeIntervalSince1970, 0, 80.0, 4, "5",
                 nil, "Red", nil, nil, 2, nil, nil, nil],
                [3, "Aircraft", "Spirit", serial3.uuidString, date("2019-03-03").timeIntervalSince1970, 1, 1500.0, 4, "250000",
                 "https://example.com/spirit", "blue", "white", "gloss", 1, "F-GSPT", 10.5, nil],
                [4, "Helicopter", "Écureuil", nil, date("2022-12-31").timeIntervalSince1970, nil, 300.0, 6, nil,
                 nil, "white", "red", nil, 3, "F-HBXA", 10.7, 1],
                [5, "Vehicle", "Unknown", nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil],
            ]
            for v in vehicles {
                try db.execute(sql: """
                    INSERT INTO "Vehicle" ("_pk", "_entity", "name", "serial", "registered", "active", "hours", "seats", "price",
                      "website", "colorScheme_primary", "colorScheme_secondary", "colorScheme_trim_finish", "owner_id",
                      "tailNumber", "wingspan", "rotorCount")
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, arguments: StatementArguments(v))
            }
            for (pk, label) in [(1, "fast"), (2, "vintage"), (3, "Électrique")] {
                try db.execute(sql: #"INSERT INTO "Tag" ("_pk", "label") VALUES (?, ?)"#, arguments: [pk, label])
            }
            // Tag_vehicles: source_id = tag, target_id = vehicle.
            for (tag, vehicle) in [(1, 1), (2, 1), (1, 3), (3, 4), (2, 2)] {
                try db.execute(sql: #"INSERT INTO "Tag_vehicles" ("source_id", "target_id") VALUES (?, ?)"#,
                               arguments: [tag, vehicle])
            }
        }
        return queue
    }

    /// The primary keys `request` selects, in order.
    static func primaryKeys(_ request: FetchRequest, in queue: DatabaseQueue) throws -> [Int64] {
        let query = try FetchQuery.selectPrimaryKeys(request, layout: layout)
        return try queue.read { db in
            try Int64.fetchAll(db, sql: query.sql, arguments: query.statementArguments)
        }
    }
}

// GRDB also declares `FetchRequest`: a file that imports GRDB next to Strata picks Strata's
// with a typealias (or writes `Strata.FetchRequest`).
typealias FetchRequest = Strata.FetchRequest
