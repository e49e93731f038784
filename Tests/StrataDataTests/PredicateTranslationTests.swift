import Foundation
import Strata
import StrataData
import Testing

/// `#Predicate` trees translate to the SQL the string-keyed API compiles for the same
/// predicate format, select what Foundation's own evaluation selects, and refuse what they
/// cannot express with an error naming the operator and the model.
@Suite struct PredicateTranslationTests {
    static let layout = StorageLayout(model: try! Fleet.schema.objectModel())

    /// The SQL of a typed predicate over `T`.
    static func sql<T: PersistentModel>(_ predicate: Predicate<T>, _ type: T.Type = T.self) throws -> SQLFragment {
        try FetchQuery.select(FetchDescriptor<T>(predicate: predicate).fetchRequest(), layout: layout)
    }

    /// The SQL of a format predicate over `entity`.
    static func sql(_ entity: String, _ format: String, _ arguments: any PredicateArgument...) throws -> SQLFragment {
        try FetchQuery.select(FetchRequest(entityName: entity, predicate: try FetchPredicate(format: format, arguments: arguments)), layout: layout)
    }

    @Test func comparisonsAndLogic() throws {
        #expect(try Self.sql(#Predicate<Plane> { $0.seats > 100 }) == Self.sql("Plane", "seats > %d", 100))
        #expect(try Self.sql(#Predicate<Plane> { $0.tailNumber == "A" && $0.seats >= 10 }) == Self.sql("Plane", "tailNumber == %@ AND seats >= %d", "A", 10))
        #expect(try Self.sql(#Predicate<Plane> { $0.inService || !($0.flightHours < 5.0) }) == Self.sql("Plane", "inService == TRUE OR NOT flightHours < %f", 5.0))
        #expect(try Self.sql(#Predicate<Plane> { 100 < $0.seats }) == Self.sql("Plane", "seats > %d", 100))
        let minimum = 50
        #expect(try Self.sql(#Predicate<Plane> { $0.seats >= minimum }) == Self.sql("Plane", "seats >= %d", 50))
        let cargo = Category.cargo
        #expect(try Self.sql(#Predicate<Plane> { $0.category == cargo }) == Self.sql("Plane", "category == %@", "cargo"))
    }

    @Test func optionals() throws {
        #expect(try Self.sql(#Predicate<Plane> { $0.model == nil }) == Self.sql("Plane", "model == nil"))
        #expect(try Self.sql(#Predicate<Plane> { $0.model != nil }) == Self.sql("Plane", "model != nil"))
        #expect(try Self.sql(#Predicate<Plane> { ($0.model ?? "none") == "A320" }) == Self.sql("Plane", "model != nil AND model == %@", "A320"))
        #expect(try Self.sql(#Predicate<Plane> { ($0.model ?? "A320") == "A320" })
                == Self.sql("Plane", "(model != nil AND model == %@) OR model == nil", "A320"))
        #expect(try Self.sql(#Predicate<Plane> { $0.livery?.primary == "red" }) == Self.sql("Plane", "livery.primary == %@", "red"))
        #expect(try Self.sql(#Predicate<Plane> { $0.livery?.trim?.finish == "matte" }) == Self.sql("Plane", "livery.trim.finish == %@", "matte"))
        #expect(try Self.sql(#Predicate<Plane> { $0.airline?.name == "Air" }) == Self.sql("Plane", "airline.name == %@", "Air"))
    }

    @Test func stringsListsAndRanges() throws {
        #expect(try Self.sql(#Predicate<Plane> { $0.tailNumber.contains("GS") }) == Self.sql("Plane", "tailNumber CONTAINS %@", "GS"))
        #expect(try Self.sql(#Predicate<Plane> { $0.tailNumber.starts(with: "F-") }) == Self.sql("Plane", "tailNumber BEGINSWITH %@", "F-"))
        #expect(try Self.sql(#Predicate<Plane> { ["A", "B"].contains($0.tailNumber) }) == Self.sql("Plane", "tailNumber IN %@", ["A", "B"]))
        #expect(try Self.sql(#Predicate<Plane> { (100...200).contains($0.seats) }) == Self.sql("Plane", "seats BETWEEN %@", [100, 200]))
        #expect(try Self.sql(#Predicate<Plane> { (100..<200).contains($0.seats) }) == Self.sql("Plane", "seats >= %d AND seats < %d", 100, 200))
    }

    @Test func toManyRelationships() throws {
        #expect(try Self.sql(#Predicate<Plane> { $0.crew.contains { $0.role == "captain" } }) == Self.sql("Plane", "ANY crew.role == %@", "captain"))
        #expect(try Self.sql(#Predicate<Plane> { $0.crew.contains { $0.role == "captain" || $0.hours > 5 } })
                == Self.sql("Plane", "ANY crew.role == %@ OR ANY crew.hours > %d", "captain", 5))
        #expect(try Self.sql(#Predicate<Plane> { $0.crew.isEmpty }) == Self.sql("Plane", "crew.@count == 0"))
        #expect(try Self.sql(#Predicate<Plane> { !$0.crew.isEmpty }) == Self.sql("Plane", "NOT crew.@count == 0"))
        #expect(try Self.sql(#Predicate<Plane> { $0.crew.count > 2 }) == Self.sql("Plane", "crew.@count > %d", 2))
        #expect(try Self.sql(#Predicate<Plane> { $0.crew.allSatisfy { $0.hours > 10 } }) == Self.sql("Plane", "ALL crew.hours > %d", 10))
        #expect(try Self.sql(#Predicate<Airline> { $0.planes.contains { $0.crew.contains { $0.hours > 100 } } })
                == Self.sql("Airline", "ANY planes.crew.hours > %d", 100))
    }

    // MARK: - Refused, before any SQL

    static func refusal<T: PersistentModel>(_ predicate: Predicate<T>) -> PredicateTranslationError? {
        do {
            _ = try FetchDescriptor<T>(predicate: predicate).fetchRequest()
            return nil
        } catch {
            return error
        }
    }

    @Test func unsupportedFormsAreRefusedNamingTheOperatorAndTheModel() throws {
        let arithmetic = try #require(Self.refusal(#Predicate<Plane> { $0.seats + 1 > 3 }))
        #expect(arithmetic.code == .unsupportedOperator && arithmetic.operator == "Arithmetic" && arithmetic.model == "Plane")
        #expect(arithmetic.description.contains("'Plane'") && arithmetic.description.contains("Arithmetic"))

        let conditional = try #require(Self.refusal(#Predicate<Plane> { $0.inService ? $0.seats > 1 : $0.seats > 2 }))
        #expect(conditional.operator == "Conditional")

        let computed = try #require(Self.refusal(#Predicate<Plane> { $0.label == "x" }))
        #expect(computed.code == .unsupportedKeyPath && computed.description.contains("not a persisted property"))

        let length = try #require(Self.refusal(#Predicate<Plane> { $0.tailNumber.count > 3 }))
        #expect(length.code == .unsupportedKeyPath)

        let both = try #require(Self.refusal(#Predicate<Plane> { $0.crew.contains { $0.role == "captain" && $0.hours > 10 } }))
        #expect(both.description.contains("&&") && both.description.contains("crew"))

        let red = Livery(primary: "red")
        let composite = try #require(Self.refusal(#Predicate<Plane> { $0.livery == red }))
        #expect(composite.description.contains("composite") && composite.description.contains("livery.primary"))
    }

    @Test func aRefusedPredicateThrowsFromFetchAndCount() throws {
        let context = ModelContext(store: try Fleet.store())
        let descriptor = FetchDescriptor<Plane>(predicate: #Predicate { $0.seats * 2 > 3 })
        #expect(throws: PredicateTranslationError.self) { try context.fetch(descriptor) }
        #expect(throws: PredicateTranslationError.self) { try context.fetchCount(descriptor) }
        #expect(throws: PredicateTranslationError.self) { try context.delete(model: Plane.self, where: descriptor.predicate) }
    }

    // MARK: - Semantics

    /// Each predicate selects in SQL what Foundation's `evaluate` selects in Swift.
    @Test func sqlSelectsWhatSwiftEvaluates() throws {
        let store = try Fleet.store()
        let context = ModelContext(store: store)
        let airline = Airline(name: "Air Lorraine")
        let colors: [String?] = ["red", "blue", nil]
        for i in 0..<12 {
            let plane = Plane(tailNumber: i % 2 == 0 ? "F-G\(i)" : "N\(i)", seats: i * 20, flightHours: Double(i) * 1.5, inService: i % 3 != 0,
                              category: Category.allCases[i % 3], model: i % 4 == 0 ? nil : "A3\(i % 4)0",
                              livery: i % 5 == 4 ? nil : Livery(primary: colors[i % 3], trim: i % 2 == 0 ? Trim(finish: "matte", stripes: i) : nil))
            plane.crew = (0..<(i % 4)).map { CrewMember(name: "c\(i)-\($0)", role: $0 == 0 ? "captain" : "cabin", hours: i * 10 + $0) }
            if i % 2 == 0 { plane.airline = airline }
            context.insert(plane)
        }
        try context.save()
        let trainer = Category.trainer
        let predicates: [Predicate<Plane>] = [
            #Predicate { $0.seats > 100 },
            #Predicate { ($0.model ?? "A320") == "A320" },
            #Predicate { ($0.model ?? "none") != "A310" },
            #Predicate { !(($0.model ?? "x") == "A310") },
            #Predicate { $0.livery?.primary == "red" || $0.livery?.primary == nil },
            #Predicate { $0.livery?.trim?.stripes ?? 0 > 4 },
            #Predicate { $0.tailNumber.starts(with: "F-") && $0.inService },
            #Predicate { $0.crew.contains { $0.role == "captain" } },
            #Predicate { $0.crew.isEmpty || $0.crew.count > 2 },
            #Predicate { $0.crew.allSatisfy { $0.hours > 50 } },
            #Predicate { $0.airline?.name == "Air Lorraine" },
            #Predicate { ["N1", "N3", "F-G4"].contains($0.tailNumber) },
            #Predicate { (40...120).contains($0.seats) && $0.category != trainer },
        ]
        let all = try context.fetch(FetchDescriptor<Plane>())
        #expect(all.count == 12)
        for (index, predicate) in predicates.enumerated() {
            let inSQL = Set(try context.fetch(FetchDescriptor(predicate: predicate)).map(\.tailNumber))
            let inSwift = Set(try all.filter { try predicate.evaluate($0) }.map(\.tailNumber))
            #expect(inSQL == inSwift, "predicate #\(index)")
        }
    }
}
