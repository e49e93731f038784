import Foundation
import Strata

/// The CRUD scenario through Strata's object layer, as an application would use it:
/// insert objects and save per batch, fetch with a predicate format, change and delete
/// fetched objects and save.
final class StrataCRUDWorkload: CRUDWorkload {
    let name = "strata"
    let store: PersistentStore
    let data: CRUDDataSet
    private let context: ObjectContext
    private var prepared: [ManagedObject] = []

    init(store: PersistentStore, data: CRUDDataSet) {
        self.store = store
        self.data = data
        self.context = ObjectContext(store: store)
    }

    func insert(_ range: Range<Int>) throws {
        for i in range {
            let row = data.row(i)
            try row.insert(into: context, tailNumber: row.tailNumber)
        }
        try context.save()
        // A bulk import forgets saved objects between batches, as with Core Data's reset().
        context.reset()
    }

    func fetch(color: String) throws -> Int {
        let request = FetchRequest(entityName: CRUDDataSet.entityName,
                                   predicate: try FetchPredicate(format: CRUDDataSet.fetchFormat, color))
        let objects = try context.fetch(request)
        var checksum = 0
        for object in objects { checksum &+= Int(object["seats"].int64Value ?? 0) }
        // Every fetch materializes its objects (no identity-map hits from earlier fetches).
        context.reset()
        return checksum
    }

    func prepareBatch(colors: [String]) throws {
        prepared = try context.fetch(FetchRequest(entityName: CRUDDataSet.entityName,
                                                  predicate: try FetchPredicate(format: CRUDDataSet.selectFormat, colors)))
    }

    func updatePrepared() throws -> Int {
        for object in prepared {
            object["flightHours"] = .double((object["flightHours"].doubleValue ?? 0) + 1)
        }
        try context.save()
        return finishBatch()
    }

    func deletePrepared() throws -> Int {
        for object in prepared { try context.delete(object) }
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

extension CRUDDataSet.Row {
    /// Inserts the row as an `Aircraft` object into `context` (not saved), with `tailNumber`.
    func insert(into context: ObjectContext, tailNumber: String) throws {
        let object = try context.insert(CRUDDataSet.entityName)
        object["tailNumber"] = .string(tailNumber)
        object["aircraftType"] = .string(aircraftType)
        object["seats"] = .int(seats)
        object["flightHours"] = .double(flightHours)
        object["colorScheme.primary"] = .string(primary)
        object["colorScheme.secondary"] = .string(secondary)
        object["colorScheme.tertiary"] = .string(tertiary)
    }
}
