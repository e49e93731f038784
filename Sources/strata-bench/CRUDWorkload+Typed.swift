import Foundation
import StrataData

/// The scenario's entity as a `@Model` class: the same model as ``CRUDDataSet/model`` (one
/// checksum), so that the typed side opens the same kind of store.
@Model
final class Aircraft {
    var tailNumber: String
    var aircraftType: String?
    var seats: Int32?
    var flightHours: Double?
    var colorScheme: BenchColorScheme?
    #Index<Aircraft>([\.colorScheme?.primary], name: "byPrimaryColor")

    init(tailNumber: String, aircraftType: String?, seats: Int32?, flightHours: Double?, colorScheme: BenchColorScheme?) {
        self.tailNumber = tailNumber
        self.aircraftType = aircraftType
        self.seats = seats
        self.flightHours = flightHours
        self.colorScheme = colorScheme
    }
}

/// The composite of the scenario's entity.
@Composite
struct BenchColorScheme {
    var primary: String?
    var secondary: String?
    var tertiary: String?
}

/// The CRUD scenario through StrataData's typed layer, as an application would write it:
/// `@Model` objects, `ModelContext.insert`/`save`, `FetchDescriptor` with `#Predicate`,
/// property setters, `delete`. Contexts are reset between batches and fetches, like the
/// string-keyed side.
final class TypedCRUDWorkload: CRUDWorkload {
    let name = "typed"
    let store: PersistentStore
    let data: CRUDDataSet
    private let context: ModelContext
    private var prepared: [Aircraft] = []

    init(store: PersistentStore, data: CRUDDataSet) {
        self.store = store
        self.data = data
        self.context = ModelContext(store: store)
    }

    func insert(_ range: Range<Int>) throws {
        for i in range {
            let row = data.row(i)
            context.insert(Aircraft(tailNumber: row.tailNumber, aircraftType: row.aircraftType, seats: Int32(row.seats), flightHours: row.flightHours,
                                    colorScheme: BenchColorScheme(primary: row.primary, secondary: row.secondary, tertiary: row.tertiary)))
        }
        try context.save()
        context.reset()
    }

    func fetch(color: String) throws -> Int {
        let aircraft = try context.fetch(FetchDescriptor<Aircraft>(predicate: #Predicate { $0.colorScheme?.primary == color }))
        var checksum = 0
        for plane in aircraft { checksum &+= Int(plane.seats ?? 0) }
        context.reset()
        return checksum
    }

    func prepareBatch(colors: [String]) throws {
        let wanted: [String?] = colors
        prepared = try context.fetch(FetchDescriptor<Aircraft>(predicate: #Predicate { wanted.contains($0.colorScheme.flatMap { $0.primary }) }))
    }

    func updatePrepared() throws -> Int {
        for plane in prepared { plane.flightHours = (plane.flightHours ?? 0) + 1 }
        try context.save()
        return finishBatch()
    }

    func deletePrepared() throws -> Int {
        for plane in prepared { try context.delete(plane) }
        try context.save()
        return finishBatch()
    }

    private func finishBatch() -> Int {
        defer {
            prepared = []
            context.reset()
        }
        return prepared.count
    }

    func close() throws { try store.close() }
}

extension TypedCRUDWorkload {
    func fetchAll() throws -> Int {
        let all = try context.fetch(FetchDescriptor<Aircraft>())
        var count = 0
        for plane in all where plane.seats != nil { count += 1 }
        context.reset()
        return count
    }
}
