import Foundation
import Testing
@testable import Strata

/// The context's identity map (``IdentityMap``): an open-addressing table keyed by primary
/// key, the entity compared on a key match, deletion by backward shift. Checked against a
/// `Dictionary` over random operations, and through a context with two entities whose rows
/// share primary keys.
@Suite struct IdentityMapTests {
    /// Runs `body` with a new context on a new store of the two-entity model.
    func withContext(_ body: (ObjectContext) throws -> Void) throws {
        let temp = TemporaryStore()
        let store = try temp.open(HistoryTests.model)
        defer { try? store.close() }
        try body(ObjectContext(store: store))
    }

    /// Objects of two entities, `count` each, primary keys 1...count (every key used twice).
    func objects(_ context: ObjectContext, count: Int) -> [ManagedObject] {
        ["Aircraft", "Owner"].flatMap { entity in
            let info = context.info(for: entity)!
            return (1...count).map { pk in
                ManagedObject(objectID: ObjectID(entityName: entity, primaryKey: Int64(pk)), info: info, context: context,
                              values: info.defaults, version: 1)
            }
        }
    }

    @Test func matchesADictionaryOverRandomOperations() throws {
        try withContext { context in
            // Keys that collide often: 300 per entity in a table that grows from 16 slots, and a
            // run of negative (temporary) keys.
            let pool = objects(context, count: 300)
            var generator = SystemRandomNumberGenerator()
            var map = IdentityMap()
            var reference: [ObjectID: ManagedObject] = [:]
            for step in 0..<20_000 {
                let object = pool.randomElement(using: &generator)!
                let id = step % 7 == 0 ? ObjectID(entityName: object.objectID.entityName, primaryKey: -object.objectID.primaryKey) : object.objectID
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<5:
                    map[id] = object
                    reference[id] = object
                case 5..<8:
                    map[id] = nil
                    reference[id] = nil
                case 8:
                    let found = map.object(primaryKey: id.primaryKey, entityName: id.entityName) { object }
                    if reference[id] == nil { reference[id] = object }
                    #expect(found === reference[id], "step \(step): \(id)")
                default:
                    if Int.random(in: 0..<50, using: &generator) == 0 {
                        map.removeAll()
                        reference.removeAll()
                    }
                }
                #expect(map.count == reference.count, "step \(step)")
                if step % 97 == 0 || step > 19_900 {
                    for candidate in pool {
                        for key in [candidate.objectID, ObjectID(entityName: candidate.objectID.entityName, primaryKey: -candidate.objectID.primaryKey)] {
                            #expect(map[key] === reference[key], "step \(step): \(key)")
                        }
                    }
                    #expect(Set(map.values.map(ObjectIdentifier.init)) == Set(reference.values.map(ObjectIdentifier.init)))
                }
            }
        }
    }

    @Test func growsPastThousandsAndShrinksOnReset() throws {
        try withContext { context in
            let pool = objects(context, count: 5_000)
            var map = IdentityMap()
            for object in pool { map[object.objectID] = object }
            #expect(map.count == 10_000)
            for object in pool { #expect(map[object.objectID] === object) }
            // Every other key removed: the rest stay reachable across the shifted runs.
            for object in pool where object.objectID.primaryKey % 2 == 0 { map[object.objectID] = nil }
            #expect(map.count == 5_000)
            for object in pool {
                #expect((map[object.objectID] != nil) == (object.objectID.primaryKey % 2 == 1), "\(object.objectID)")
            }
            map.removeAll()
            #expect(map.isEmpty && map.values.isEmpty)
            #expect(map[pool[0].objectID] == nil)
            map[pool[1].objectID] = pool[1]
            #expect(map[pool[1].objectID] === pool[1] && map.count == 1)
        }
    }

    @Test func aContextKeepsOneObjectPerRowAcrossEntitiesWithTheSameKeys() throws {
        let temp = TemporaryStore()
        let store = try temp.open(HistoryTests.model)
        defer { try? store.close() }
        let writer = ObjectContext(store: store)
        for n in 1...40 {
            let aircraft = try writer.insert("Aircraft")
            aircraft["tailNumber"] = .string("T\(n)")
            let owner = try writer.insert("Owner")
            owner["name"] = .string("O\(n)")
        }
        try writer.save()

        let context = ObjectContext(store: store)
        let aircraft = try context.fetch(FetchRequest(entityName: "Aircraft"))
        let owners = try context.fetch(FetchRequest(entityName: "Owner"))
        #expect(aircraft.count == 40 && owners.count == 40)
        #expect(Set(aircraft.map(\.objectID.primaryKey)) == Set(owners.map(\.objectID.primaryKey)), "the two tables share their keys")
        // The same rows again: the same instances, each of its own entity.
        let again = try context.fetch(FetchRequest(entityName: "Aircraft"))
        #expect(zip(aircraft, again).allSatisfy { $0 === $1 })
        for owner in owners {
            let id = owner.objectID
            #expect(try context.object(with: id) === owner)
            #expect(try context.object(with: ObjectID(entityName: "Aircraft", primaryKey: id.primaryKey)).entity.name == "Aircraft")
        }
        // A changed object stays the registered one until reset.
        aircraft[0]["seats"] = 9
        #expect(try context.fetch(FetchRequest(entityName: "Aircraft"))[0]["seats"] == 9)
        context.reset()
        let fresh = try context.fetch(FetchRequest(entityName: "Aircraft"))
        #expect(fresh.count == 40 && !fresh.contains { $0 === aircraft[0] })
        #expect(fresh.first { $0.objectID == aircraft[0].objectID }?["seats"] == .null, "the unsaved change went with the reset")
    }
}
