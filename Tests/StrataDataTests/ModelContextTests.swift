import Foundation
import Strata
import StrataData
import Testing

/// The typed context over the object layer: insert, fetch, identity, relationships, faulting,
/// rollback, deletes with rules, batch changes, and the string-keyed API seeing the same rows.
@Suite struct ModelContextTests {
    @Test func insertSaveAndFetchRoundTripsEveryType() throws {
        let store = try Fleet.store()
        let context = ModelContext(store: store)
        let serial = UUID()
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let plane = Plane(tailNumber: "F-GSPT", seats: 180, flightHours: 1234.5, category: .cargo, model: "A320",
                          livery: Livery(primary: "red", secondary: nil, trim: Trim(finish: "matte", stripes: 3)))
        plane.serial = serial
        plane.registered = date
        context.insert(plane)
        #expect(plane.persistentModelID?.isTemporary == true)
        try context.save()
        #expect(plane.persistentModelID?.isTemporary == false)

        let other = ModelContext(store: store)
        let fetched = try other.fetch(FetchDescriptor<Plane>())
        try #require(fetched.count == 1)
        let p = fetched[0]
        #expect(p !== plane)
        #expect(p.tailNumber == "F-GSPT" && p.seats == 180 && p.flightHours == 1234.5 && p.inService)
        #expect(p.category == .cargo && p.model == "A320" && p.serial == serial && p.registered == date)
        #expect(p.livery == Livery(primary: "red", secondary: nil, trim: Trim(finish: "matte", stripes: 3)))
        // The string-keyed API reads the same row storage.
        let object = try #require(try other.objectContext.fetch("Plane").first)
        #expect(object["livery.trim.finish"] == "matte")
        #expect(object["category"] == "cargo")
        #expect(object["seats"] == 180)
    }

    @Test func everyScalarTypeRoundTripsAndMapsToItsAttributeType() throws {
        let model = try Fleet.schema.objectModel()
        let entity = try #require(model.entity(named: "Reading"))
        #expect(entity.attributes.map { "\($0.name):\($0.type.rawValue):\($0.isOptional)" } == [
            "small:int16:false", "medium:int32:false", "large:int64:false", "ratio:float:false", "amount:decimal:false",
            "link:uri:false", "blob:data:false", "at:date:false", "id:uuid:false", "note:string:true", "maybeSmall:int16:true",
            "maybeAmount:decimal:true",
        ])
        let store = try Fleet.store()
        let context = ModelContext(store: store)
        let id = UUID()
        let at = Date(timeIntervalSince1970: 1_234_567.25)
        let reading = Reading(small: -7, medium: 70_000, large: Int64.max, ratio: 0.5, amount: Decimal(string: "12.34")!,
                              link: URL(string: "https://example.org/a")!, blob: Data([0, 255]), at: at, id: id)
        reading.maybeSmall = 3
        context.insert(reading)
        try context.save()
        let r = try #require(try ModelContext(store: store).fetch(FetchDescriptor<Reading>()).first)
        #expect(r.small == -7 && r.medium == 70_000 && r.large == Int64.max && r.ratio == 0.5)
        #expect(r.amount == Decimal(string: "12.34")! && r.link.absoluteString == "https://example.org/a" && r.blob == Data([0, 255]))
        #expect(r.at == at && r.id == id && r.note == nil && r.maybeSmall == 3 && r.maybeAmount == nil)
        let past = Date.distantPast
        let found = try ModelContext(store: store).fetch(FetchDescriptor<Reading>(predicate: #Predicate { $0.id == id && $0.at > past }))
        #expect(found.count == 1)
    }

    @Test func oneModelPerRowPerContext() throws {
        let store = try Fleet.store()
        let context = ModelContext(store: store)
        context.insert(Plane(tailNumber: "A"))
        try context.save()
        let first = try context.fetch(FetchDescriptor<Plane>())
        let second = try context.fetch(FetchDescriptor<Plane>(predicate: #Predicate { $0.tailNumber == "A" }))
        #expect(first.count == 1 && second.count == 1)
        #expect(first[0] === second[0])
    }

    @Test func identifiersAndModelsByIdentity() throws {
        let store = try Fleet.store()
        let context = ModelContext(store: store)
        for i in 0..<3 { context.insert(Plane(tailNumber: "P\(i)", seats: i)) }
        try context.save()
        let ids = try context.fetchIdentifiers(FetchDescriptor<Plane>(predicate: #Predicate { $0.seats > 0 }, sortBy: [SortDescriptor(\.seats)]))
        #expect(ids.count == 2 && ids.allSatisfy { $0.entityName == "Plane" && !$0.isTemporary })
        let other = ModelContext(store: store)
        let plane: Plane = try other.model(for: ids[1])
        #expect(plane.tailNumber == "P2")
        #expect(try other.model(for: ids[1], as: Plane.self) === plane)
        #expect(throws: ObjectContextError.self) { try other.model(for: ObjectID(entityName: "Plane", primaryKey: 999), as: Plane.self) }
    }

    @Test func changesAreSavedAndRollbackRestoresThem() throws {
        let store = try Fleet.store()
        let context = ModelContext(store: store)
        let plane = Plane(tailNumber: "A", seats: 10)
        context.insert(plane)
        try context.save()
        plane.seats = 20
        plane.livery = Livery(primary: "blue")
        #expect(context.hasChanges)
        context.rollback()
        #expect(plane.seats == 10 && plane.livery == nil)
        plane.seats = 30
        try context.save()
        let reread = try ModelContext(store: store).fetch(FetchDescriptor<Plane>())
        #expect(reread.map(\.seats) == [30])
    }

    @Test func relationshipsAreTraversedAndToManyFaultedFromTheStore() throws {
        let store = try Fleet.store()
        let context = ModelContext(store: store)
        let airline = Airline(name: "Air Lorraine")
        let plane = Plane(tailNumber: "F-1")
        // Never-inserted models related to each other: inserting one inserts the others.
        plane.crew = [CrewMember(name: "Zoé", role: "captain", hours: 900), CrewMember(name: "Luc", role: "first officer", hours: 300)]
        plane.airline = airline
        context.insert(plane)
        try context.save()
        #expect(airline.persistentModelID?.isTemporary == false)
        #expect(airline.planes.map(\.tailNumber) == ["F-1"])   // the inverse, kept on both sides

        let other = ModelContext(store: store)
        let fetched = try #require(try other.fetch(FetchDescriptor<Airline>()).first)
        let planes = fetched.planes                              // faulted from the store
        #expect(planes.map(\.tailNumber) == ["F-1"])
        #expect(planes[0].crew.map(\.name) == ["Zoé", "Luc"])   // ordered
        #expect(planes[0].crew[0].plane === planes[0])           // identity through the traversal
        #expect(planes[0].airline === fetched)
    }

    @Test func deleteAppliesTheCascadeRule() throws {
        let store = try Fleet.store()
        let context = ModelContext(store: store)
        let airline = Airline(name: "A")
        let plane = Plane(tailNumber: "P")
        plane.crew = [CrewMember(name: "C", role: "captain")]
        airline.planes = [plane]
        context.insert(airline)
        try context.save()
        try context.delete(airline)
        try context.save()
        let check = ModelContext(store: store)
        #expect(try check.fetchCount(FetchDescriptor<Plane>()) == 0)
        #expect(try check.fetchCount(FetchDescriptor<CrewMember>()) == 0)
    }

    @Test func fetchLimitOffsetSortAndCount() throws {
        let store = try Fleet.store()
        let context = ModelContext(store: store)
        for i in 0..<10 { context.insert(Plane(tailNumber: "P\(i)", seats: i * 10, livery: Livery(primary: i % 2 == 0 ? "red" : "blue"))) }
        try context.save()
        var descriptor = FetchDescriptor<Plane>(predicate: #Predicate { $0.livery?.primary == "red" },
                                                sortBy: [SortDescriptor(\.seats, order: .reverse)])
        #expect(try context.fetchCount(descriptor) == 5)
        descriptor.fetchLimit = 2
        descriptor.fetchOffset = 1
        #expect(try context.fetch(descriptor).map(\.seats) == [60, 40])
        #expect(try context.fetchCount(descriptor) == 2)
        let byLeaf = try context.fetch(FetchDescriptor<Plane>(sortBy: [SortDescriptor(\.livery?.primary), SortDescriptor(\.tailNumber)]))
        #expect(byLeaf.first?.livery?.primary == "blue" && byLeaf.first?.tailNumber == "P1")
    }

    @Test func batchDeleteAndUpdateRunOneStatementEachAndRecordHistory() throws {
        let store = try Fleet.store()
        let context = ModelContext(store: store)
        for i in 0..<6 { context.insert(CrewMember(name: "C\(i)", role: i < 4 ? "cabin" : "captain", hours: i)) }
        try context.save()
        let updated = try context.update(model: CrewMember.self, where: #Predicate { $0.role == "cabin" }, set: [.init(\.hours, 100)])
        #expect(updated == 4)
        let deleted = try context.delete(model: CrewMember.self, where: #Predicate { $0.hours < 10 })
        #expect(deleted == 2)
        let left = try ModelContext(store: store).fetch(FetchDescriptor<CrewMember>(sortBy: [SortDescriptor(\.name)]))
        #expect(left.map(\.hours) == [100, 100, 100, 100])
        let history = try store.history()
        #expect(history.transactions.suffix(2).map { $0.changes.count } == [4, 2])
    }

    @Test func batchDeleteRefusesAnEntityWhoseDeleteRulesItCannotApply() throws {
        let store = try Fleet.store()
        let context = ModelContext(store: store)
        let airline = Airline(name: "A")
        airline.planes = [Plane(tailNumber: "P")]
        context.insert(airline)
        try context.save()
        #expect(throws: ObjectContextError.self) { try context.delete(model: Airline.self) }
        #expect(try context.fetchCount(FetchDescriptor<Plane>()) == 1)
        #expect(try context.fetchCount(FetchDescriptor<Airline>()) == 1)
    }

    @Test func aStoreWithoutTheClassRefusesItWithAClearErrorAndLosesNothing() throws {
        let url = try TestPaths.temporaryDirectory().appending(path: "v1.sqlite")
        let store = try PersistentStore.open(at: url, model: try AircraftSchemaV1.objectModel())
        let context = ModelContext(store: store)
        let kept = AircraftSchemaV1.Aircraft(tailNumber: "kept")
        context.insert(kept)
        context.insert(Plane(tailNumber: "nowhere"))
        #expect {
            try context.save()
        } throws: { error in
            "\(error)".contains("no entity 'Plane'") && "\(error)".contains("Aircraft 1")
        }
        #expect(throws: ModelSchemaError.self) { try context.fetch(FetchDescriptor<AircraftSchemaV2.Aircraft>()) }
        try context.save()   // the rest of the changes are still there
        #expect(try ModelContext(store: store).fetch(FetchDescriptor<AircraftSchemaV1.Aircraft>()).map(\.tailNumber) == ["kept"])
    }

    @Test func aUniquenessViolationIsReportedAndTheContextKeepsItsChanges() throws {
        let store = try Fleet.store()
        let context = ModelContext(store: store)
        context.insert(Airline(name: "Same"))
        try context.save()
        let duplicate = Airline(name: "Same")
        context.insert(duplicate)
        #expect(throws: ObjectContextError.self) { try context.save() }
        #expect(context.hasChanges)
        duplicate.name = "Other"
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Airline>()) == 2)
    }
}
