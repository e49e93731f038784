import Foundation
import GRDB
import Testing
@testable import Strata

@Suite("Object context: insert, fetch, update, delete, save, rollback")
struct ObjectContextTests {
    let temp = TemporaryStore()
    let store: PersistentStore

    init() throws {
        store = try temp.open(TestModels.fleet)
    }

    private func aircraft(_ context: ObjectContext, _ tail: String, primary: String? = nil) throws -> ManagedObject {
        let a = try context.insert("Aircraft")
        a["serial"] = .string("S-\(tail)")
        a["tailNumber"] = .string(tail)
        if let primary { a["colorScheme.primary"] = .string(primary) }
        return a
    }

    @Test func everyAttributeTypeRoundTrips() throws {
        let context = ObjectContext(store: store)
        let pilot = try context.insert("Pilot")
        let license = UUID()
        let born = Date(timeIntervalSince1970: 86_400 * 365.25 * 30 + 0.25)
        pilot["name"] = "Amelia"
        pilot["license"] = .uuid(license)
        pilot["born"] = .date(born)
        pilot["rating"] = .decimal(Decimal(string: "4.75")!)
        pilot["homepage"] = .uri(URL(string: "https://example.org/amelia")!)
        pilot["flights"] = .int(9_000_000_000)
        pilot["weight"] = .double(61.5)
        pilot["code"] = .int(-2_000_000_000)
        try context.save()
        #expect(!pilot.objectID.isTemporary)

        let fresh = ObjectContext(store: store)
        let loaded = try fresh.object(with: pilot.objectID)
        #expect(loaded["name"] == "Amelia")
        #expect(loaded["license"] == .uuid(license))
        #expect(loaded["born"] == .date(born))
        #expect(loaded["active"] == .bool(true))          // default
        #expect(loaded["rating"] == .decimal(Decimal(string: "4.75")!))
        #expect(loaded["homepage"] == .uri(URL(string: "https://example.org/amelia")!))
        #expect(loaded["flights"] == .int(9_000_000_000))
        #expect(loaded["weight"] == .double(61.5))
        #expect(loaded["code"] == .int(-2_000_000_000))
        // Stored in human-readable form.
        let raw = try temp.rawQueue()
        #expect(try raw.strings("SELECT license FROM Pilot") == [license.uuidString])
        #expect(try raw.strings("SELECT typeof(born) || ':' || typeof(active) FROM Pilot") == ["real:integer"])
    }

    @Test func compositeIsAccessibleByKeyPathAndAsADictionary() throws {
        let context = ObjectContext(store: store)
        let a = try aircraft(context, "F-GSPT", primary: "red")
        a[composite: "colorScheme"] = ["primary": "blue", "secondary": "white"]
        #expect(a["colorScheme.primary"] == "blue")
        #expect(a["colorScheme.tertiary"] == .null)
        try context.save()
        let reader = ObjectContext(store: store)
        let loaded = try reader.object(with: a.objectID)
        #expect(loaded[composite: "colorScheme"] == ["primary": "blue", "secondary": "white", "tertiary": .null])
        #expect(try temp.rawQueue().strings("SELECT colorScheme_secondary FROM Vehicle") == ["white"])
        let json = loaded.jsonObject()
        let scheme = try #require(json["colorScheme"] as? [String: Any])
        #expect(scheme["primary"] as? String == "blue")
        #expect(json["_entity"] as? String == "Aircraft")
        let error = try #require(throws: ObjectContextError.self) { try a.setComposite(["quaternary": "x"], forKey: "colorScheme") }
        #expect(error.code == .unknownProperty)
        #expect(error.description.contains("colorScheme.quaternary"))
    }

    @Test func defaultsAndTypeCoercion() throws {
        let context = ObjectContext(store: store)
        let a = try aircraft(context, "N1")
        #expect(a["seats"] == .int(4))
        #expect(a["flightHours"] == .double(0))
        try a.setValue(12, forKeyPath: "seats")
        #expect(a["seats"] == .int(12))
        let overflow = try #require(throws: ObjectContextError.self) { try a.setValue(70_000, forKeyPath: "seats") }
        #expect(overflow.code == .typeMismatch)
        #expect(overflow.description.contains("seats"))
        #expect(overflow.description.contains("int16"))
        let wrong = try #require(throws: ObjectContextError.self) { try a.setValue("many", forKeyPath: "flightHours") }
        #expect(wrong.code == .typeMismatch)
        let unknown = try #require(throws: ObjectContextError.self) { try a.setValue("x", forKeyPath: "tailnumber") }
        #expect(unknown.code == .unknownProperty)
        #expect(unknown.description.contains("did you mean 'tailNumber'"))
    }

    @Test func missingRequiredValueFailsSaveAndWritesNothing() throws {
        let context = ObjectContext(store: store)
        _ = try aircraft(context, "OK-1")
        let bad = try context.insert("Aircraft")
        bad["serial"] = "S-2"
        let error = try #require(throws: ObjectContextError.self) { try context.save() }
        #expect(error.code == .missingValue)
        #expect(error.entity == "Aircraft")
        #expect(error.property == "tailNumber")
        #expect(try temp.rawQueue().strings("SELECT tailNumber FROM Vehicle").isEmpty)
        bad["tailNumber"] = "OK-2"
        try context.save()
        #expect(try temp.rawQueue().strings("SELECT tailNumber FROM Vehicle ORDER BY _pk") == ["OK-1", "OK-2"])
    }

    @Test func abstractAndUnknownEntitiesCannotBeInserted() throws {
        let context = ObjectContext(store: store)
        let abstract = try #require(throws: ObjectContextError.self) { try context.insert("Vehicle") }
        #expect(abstract.code == .abstractEntity)
        #expect(abstract.description.contains("Aircraft"))
        let unknown = try #require(throws: ObjectContextError.self) { try context.insert("Airplane") }
        #expect(unknown.code == .unknownEntity)
    }

    @Test func uniquenessViolationNamesKeyPathAndWritesNothing() throws {
        let context = ObjectContext(store: store)
        _ = try aircraft(context, "F-AAAA")
        try context.save()
        let other = ObjectContext(store: store)
        _ = try aircraft(other, "F-BBBB")
        _ = try aircraft(other, "F-AAAA")
        let error = try #require(throws: ObjectContextError.self) { try other.save() }
        #expect(error.code == .uniquenessViolation)
        #expect(error.description.contains("tailNumber = \"F-AAAA\""))
        #expect(try temp.rawQueue().strings("SELECT tailNumber FROM Vehicle") == ["F-AAAA"])
    }

    @Test func optimisticLockingDetectsConflicts() throws {
        let context = ObjectContext(store: store)
        let a = try aircraft(context, "F-LOCK")
        try context.save()
        let firstContext = ObjectContext(store: store), secondContext = ObjectContext(store: store)
        let first = try firstContext.object(with: a.objectID)
        let second = try secondContext.object(with: a.objectID)
        first["aircraftType"] = "A320"
        try firstContext.save()
        second["aircraftType"] = "B737"
        let error = try #require(throws: ObjectContextError.self) { try secondContext.save() }
        #expect(error.code == .conflict)
        #expect(error.description.contains("refetch"))
        #expect(try temp.rawQueue().strings("SELECT aircraftType FROM Vehicle") == ["A320"])
        // Deleting a row that changed since it was read is a conflict too.
        let thirdContext = ObjectContext(store: store)
        let third = try thirdContext.object(with: a.objectID)
        first["aircraftType"] = "A321"
        try firstContext.save()
        try thirdContext.delete(third)
        let deleteConflict = try #require(throws: ObjectContextError.self) { try thirdContext.save() }
        #expect(deleteConflict.code == .conflict)
    }

    @Test func orderedToManyKeepsOrderAndInverse() throws {
        let context = ObjectContext(store: store)
        let a = try aircraft(context, "F-ORD")
        let pilots = try ["Cleo", "Ada", "Bea"].map { name -> ManagedObject in
            let p = try context.insert("Pilot")
            p["name"] = .string(name)
            return p
        }
        try a.setObjects(pilots, forRelationship: "pilots")
        #expect(try pilots[0].object(forRelationship: "aircraft") === a)
        try context.save()

        let fresh = ObjectContext(store: store)
        let loaded = try fresh.object(with: a.objectID)
        #expect(try loaded.objects(forRelationship: "pilots").map { $0["name"] } == ["Cleo", "Ada", "Bea"])
        let bea = try loaded.objects(forRelationship: "pilots")[2]
        try loaded.insertObject(bea, at: 0, intoRelationship: "pilots")
        try fresh.save()
        let againContext = ObjectContext(store: store)
        let again = try againContext.object(with: a.objectID)
        #expect(try again.objects(forRelationship: "pilots").map { $0["name"] } == ["Bea", "Cleo", "Ada"])
        #expect(try temp.rawQueue().strings("SELECT name FROM Pilot ORDER BY aircraft_order") == ["Bea", "Cleo", "Ada"])

        // Setting the to-one side moves the pilot to the end of the other aircraft's list.
        let other = try aircraft(fresh, "F-OTH")
        let cleo = try again.objects(forRelationship: "pilots")[1]
        _ = cleo
        let cleoHere = try fresh.object(with: cleo.objectID)
        try cleoHere.setObject(other, forRelationship: "aircraft")
        #expect(try fresh.object(with: a.objectID).objects(forRelationship: "pilots").map { $0["name"] } == ["Bea", "Ada"])
        try fresh.save()
        let check = ObjectContext(store: store)
        #expect(try check.object(with: a.objectID).objects(forRelationship: "pilots").map { $0["name"] } == ["Bea", "Ada"])
        #expect(try check.object(with: other.objectID).objects(forRelationship: "pilots").map { $0["name"] } == ["Cleo"])
    }

    @Test func manyToManyIsVisibleFromBothSides() throws {
        let context = ObjectContext(store: store)
        let a = try aircraft(context, "F-TAG")
        let b = try aircraft(context, "F-TAH")
        let jet = try context.insert("Tag", values: ["label": "jet"])
        let vintage = try context.insert("Tag", values: ["label": "vintage"])
        try a.setObjects([jet, vintage], forRelationship: "tags")
        try b.addObject(jet, toRelationship: "tags")
        try context.save()
        let fresh = ObjectContext(store: store)
        let jetAgain = try fresh.object(with: jet.objectID)
        #expect(Set(try jetAgain.objects(forRelationship: "aircraft").map { $0["tailNumber"] }) == ["F-TAG", "F-TAH"])
        try fresh.object(with: a.objectID).removeObject(jetAgain, fromRelationship: "tags")
        try fresh.save()
        #expect(try temp.rawQueue().read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM Aircraft_tags") } == 2)
        let check = ObjectContext(store: store)
        #expect(try check.object(with: jet.objectID).objects(forRelationship: "aircraft").map { $0["tailNumber"] } == ["F-TAH"])
    }

    @Test func deleteRulesCascadeNullifyAndDeny() throws {
        let context = ObjectContext(store: store)
        let hangar = try context.insert("Hangar", values: ["name": "H1"])
        let a = try aircraft(context, "F-DEL")
        let p = try context.insert("Pilot", values: ["name": "Zed"])
        try a.setObjects([p], forRelationship: "pilots")
        try a.setObject(hangar, forRelationship: "hangar")
        let tag = try context.insert("Tag", values: ["label": "x"])
        try a.setObjects([tag], forRelationship: "tags")
        try context.save()

        let fresh = ObjectContext(store: store)
        let h = try fresh.object(with: hangar.objectID)
        let denied = try #require(throws: ObjectContextError.self) { try fresh.delete(h) }
        #expect(denied.code == .deleteDenied)
        #expect(denied.property == "aircraft")
        #expect(!h.isDeleted)

        let aircraftAgain = try fresh.object(with: a.objectID)
        try fresh.delete(aircraftAgain)             // cascades to pilots, nullifies hangar.aircraft
        #expect(try h.objects(forRelationship: "aircraft").isEmpty)
        try fresh.save()
        let raw = try temp.rawQueue()
        #expect(try raw.strings("SELECT name FROM Pilot").isEmpty)
        #expect(try raw.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM Aircraft_tags") } == 0)
        #expect(try raw.strings("SELECT label FROM Tag") == ["x"])
        try fresh.delete(h)                          // now empty: allowed
        try fresh.save()
        #expect(try raw.strings("SELECT name FROM Hangar").isEmpty)
    }

    @Test func rollbackRestoresSavedState() throws {
        let context = ObjectContext(store: store)
        let a = try aircraft(context, "F-RB")
        try context.save()
        a["aircraftType"] = "A380"
        let scratch = try aircraft(context, "F-TMP")
        try context.delete(a)
        #expect(context.hasChanges)
        context.rollback()
        #expect(!context.hasChanges)
        #expect(!a.isDeleted)
        #expect(a["aircraftType"] == .null)
        #expect(scratch.context == nil)
        try context.save()
        #expect(try temp.rawQueue().strings("SELECT tailNumber FROM Vehicle") == ["F-RB"])
    }

    @Test func rollbackRestoresToOneRelationships() throws {
        let context = ObjectContext(store: store)
        let hangar = try context.insert("Hangar", values: ["name": "H1"])
        let other = try context.insert("Hangar", values: ["name": "H2"])
        let a = try aircraft(context, "F-RB1")
        try a.setObject(hangar, forRelationship: "hangar")
        try context.save()

        let fresh = ObjectContext(store: store)
        let loaded = try fresh.object(with: a.objectID)
        try loaded.setObject(try fresh.object(with: other.objectID), forRelationship: "hangar")
        loaded["aircraftType"] = "A350"
        fresh.rollback()
        #expect(try loaded.object(forRelationship: "hangar")?["name"] == "H1")
        #expect(loaded["aircraftType"] == .null)
        // After a save, rollback goes back to the saved state, not the fetched one.
        try loaded.setObject(try fresh.object(with: other.objectID), forRelationship: "hangar")
        try fresh.save()
        loaded["aircraftType"] = "B747"
        fresh.rollback()
        #expect(try loaded.object(forRelationship: "hangar")?["name"] == "H2")
    }

    @Test func subEntityRowsCarryTheirEntityName() throws {
        let context = ObjectContext(store: store)
        _ = try aircraft(context, "F-SUB")
        let boat = try context.insert("Boat", values: ["serial": "B-1", "hullLength": 12.5])
        try context.save()
        #expect(try temp.rawQueue().strings("SELECT _entity FROM Vehicle ORDER BY _pk") == ["Aircraft", "Boat"])
        let reader = ObjectContext(store: store)
        let loaded = try reader.object(with: ObjectID(entityName: "Vehicle", primaryKey: boat.objectID.primaryKey))
        #expect(loaded.entity.name == "Boat")
        #expect(loaded["hullLength"] == .double(12.5))
    }

    struct Pilot: EntityRepresentable, Equatable {
        static let entityName = "Pilot"
        var name: String
        var born: Date?
        var license: UUID?
        var active: Bool
        var flights: Int
    }

    @Test func codableTypesInsertAndDecode() throws {
        let context = ObjectContext(store: store)
        let value = Pilot(name: "Bessie", born: Date(timeIntervalSince1970: 1_000_000), license: UUID(), active: false, flights: 12)
        let object = try context.insert(value)
        try context.save()
        let reader = ObjectContext(store: store)
        let loaded = try reader.object(with: object.objectID)
        #expect(try loaded.decode(Pilot.self) == value)
    }
}
