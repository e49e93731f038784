import Foundation
import GRDB
import Testing
@testable import Strata

/// An older model version served on a store migrated past it (``VersionBridge``): renamed,
/// added and removed attributes, a removed entity, predicates and sorts in the older names,
/// the history in the current ones; refusals once the cleanup dropped what the older version
/// needs, for a type change and for a newer version.
@Suite("Serving an older model version beside the store's")
struct VersionBridgeTests {
    // Fleet 1: Aircraft(registration, seats, photo), Hangar. Fleet 2: registration renamed to
    // tailNumber, photo and Hangar removed, colour added (default "white").
    static let fleet1 = ObjectModel(version: "Fleet 1", entities: [
        Entity("Aircraft", attributes: [
            Attribute("registration", .string, isOptional: false),
            Attribute("seats", .int32),
            Attribute("photo", .string, isOptional: false, defaultValue: .string("none")),
        ]),
        Entity("Hangar", attributes: [Attribute("code", .string)]),
    ])
    static let fleet2 = ObjectModel(version: "Fleet 2", entities: [
        Entity("Aircraft", attributes: [
            Attribute("tailNumber", .string, isOptional: false, renamingIdentifier: "registration"),
            Attribute("seats", .int32),
            Attribute("colour", .string, isOptional: false, defaultValue: .string("white")),
        ]),
    ])

    /// A store seeded at Fleet 1, opened (migrated, cleanup deferred) at Fleet 2.
    static func migratedStore(_ directory: TemporaryDirectory, to destination: ObjectModel = fleet2) throws -> PersistentStore {
        let url = directory.file("fleet.sqlite")
        let old = try PersistentStore.open(at: url, model: fleet1)
        let context = ObjectContext(store: old)
        for (registration, photo) in [("F-GSPT", "a.jpg"), ("F-HBXA", "b.jpg")] {
            _ = try context.insert("Aircraft", values: ["registration": registration, "seats": 180, "photo": photo])
        }
        _ = try context.insert("Hangar", values: ["code": "H1"])
        try context.save()
        try old.close()
        return try PersistentStore.open(at: url, model: destination, options: StoreOptions(migration: .deferred))
    }

    static var directory: ModelDirectory { get throws { try ModelDirectory(versions: [fleet1, fleet2]) } }

    @Test func olderClientReadsAndWritesInItsNames() throws {
        let temporary = TemporaryDirectory("bridge")
        let store = try Self.migratedStore(temporary)
        defer { try? store.close() }
        let bridge = try VersionBridge.resolve(store: store, directory: try Self.directory, version: "Fleet 1")
        #expect(bridge.leftovers.columns["Aircraft"] == ["photo"])
        #expect(bridge.leftovers.tables == ["Hangar"])

        let old = ObjectContext(store: store, serving: bridge)
        // A predicate and a sort on the renamed key, the removed attribute readable.
        let fetched = try old.fetch(FetchRequest(entityName: "Aircraft", predicate: try FetchPredicate(format: "registration BEGINSWITH %@", arguments: ["F-"]),
                                                 sortDescriptors: [FetchSortDescriptor("registration", ascending: false)]))
        #expect(fetched.map { $0.value(forKeyPath: "registration") } == [.string("F-HBXA"), .string("F-GSPT")])
        #expect(fetched.map { $0.value(forKeyPath: "photo") } == [.string("b.jpg"), .string("a.jpg")])
        #expect(try old.fetch("Hangar").count == 1)
        // Fleet 2's attribute is invisible to Fleet 1.
        #expect(throws: ObjectContextError.self) { try fetched[0].setValue("red", forKeyPath: "colour") }

        // Fleet 1 inserts: Fleet 2 sees it under its names, with colour's default.
        _ = try old.insert("Aircraft", values: ["registration": "F-OLD1", "seats": 9, "photo": "c.jpg"])
        try fetched[1].setValue("a2.jpg", forKeyPath: "photo")
        try old.save()
        let current = ObjectContext(store: store)
        let seen = try current.fetch("Aircraft", where: "tailNumber == %@", "F-OLD1")
        #expect(seen.count == 1)
        #expect(seen.first?.value(forKeyPath: "colour") == .string("white"))
        #expect(try store.database.read { db in try String.fetchOne(db, sql: "SELECT photo FROM Aircraft WHERE tailNumber = 'F-GSPT'") } == "a2.jpg")

        // Fleet 2 inserts: Fleet 1 sees it, the removed attribute empty.
        _ = try current.insert("Aircraft", values: ["tailNumber": "F-NEW1", "seats": 4])
        try current.save()
        let new = try ObjectContext(store: store, serving: bridge).fetch("Aircraft", where: "registration == %@", "F-NEW1")
        #expect(new.first?.value(forKeyPath: "photo") == .null)

        // History names Fleet 1's changes in Fleet 2's words.
        let history = try store.history(since: 0, entities: nil, limit: 100)
        let changes = history.transactions.flatMap(\.changes)
        #expect(changes.contains { $0.entity == "Aircraft" && $0.kind == .update && $0.properties == ["photo"] })
        #expect(!changes.contains { $0.properties.contains("registration") })
    }

    @Test func cleanupDropsWhatTheOlderVersionNeeds() async throws {
        let temporary = TemporaryDirectory("bridge-cleanup")
        let store = try Self.migratedStore(temporary)
        defer { try? store.close() }
        let bridge = try VersionBridge.resolve(store: store, directory: try Self.directory, version: "Fleet 1")
        let destroying = try store.pendingDeferredOperations().filter { !$0.destroys.isEmpty }
        #expect(destroying.contains { $0.destroys.columns["Aircraft"]?.contains("photo") ?? false })
        #expect(destroying.contains { $0.destroys.tables.contains("Hangar") })

        try await store.finishDeferredMigration()
        // A context made before the cleanup notices in its next transaction.
        let error = try #require(throws: VersionBridgeError.self) { try ObjectContext(store: store, serving: bridge).fetch("Aircraft") }
        #expect(error.code == .notServable)
        #expect(error.reason.contains("dropped by the deferred cleanup"))
        let again = try #require(throws: VersionBridgeError.self) {
            try VersionBridge.resolve(store: store, directory: try Self.directory, version: "Fleet 1")
        }
        #expect(again.version == "Fleet 1" && again.current == "Fleet 2")
        #expect(again.reason.contains("dropped by the deferred cleanup"))
    }

    @Test func typeChangeAndNewerVersionAreRefused() throws {
        let temporary = TemporaryDirectory("bridge-refusals")
        var widened = Self.fleet2
        widened.entities[0].attributes[1] = Attribute("seats", .int64)
        let store = try Self.migratedStore(temporary, to: widened)
        defer { try? store.close() }
        let models = try ModelDirectory(versions: [Self.fleet1, widened])
        let typeChange = try #require(throws: VersionBridgeError.self) {
            try VersionBridge.resolve(store: store, directory: models, version: "Fleet 1")
        }
        #expect(typeChange.code == .notServable)
        #expect(typeChange.reason.contains("attribute Aircraft.seats changes type from int32 to int64 in the hop 'Fleet 1' -> 'Fleet 2'"))

        var fleet3 = Self.fleet2
        fleet3.version = "Fleet 3"
        let ahead = try ModelDirectory(versions: [Self.fleet1, widened, fleet3])
        let newer = try #require(throws: VersionBridgeError.self) {
            try VersionBridge.resolve(store: store, directory: ahead, version: "Fleet 3")
        }
        #expect(newer.code == .newerVersion && newer.current == "Fleet 2")
        let unknown = try #require(throws: VersionBridgeError.self) {
            try VersionBridge.resolve(store: store, directory: ahead, version: "Fleet 9")
        }
        #expect(unknown.code == .unknownVersion)
    }
}
