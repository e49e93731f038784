import Foundation
import Strata
import StrataVarlink

/// One operation of the `serve` scenario, as a Varlink call (through stratad, or answered by
/// the transport floor) and as the same work through the library in-process.
enum ServeOperation: String, CaseIterable {
    case fetchByID = "fetch_id"
    case fetchByPredicate = "fetch_100"
    case insert
    case update
    case batch = "batch_100"

    /// For people.
    var label: String {
        switch self {
        case .fetchByID: "Fetch by id"
        case .fetchByPredicate: "Fetch 100 by indexed predicate"
        case .insert: "Insert"
        case .update: "Update"
        case .batch: "Batch of 100 inserts"
        }
    }

    static let store = "bench"
    static let batchSize = 100

    /// The n-th call of connection `connection` of `connections`. Updates touch only the
    /// connection's own residue class of ids, so no two connections write the same row.
    func call(n: Int, connection: Int, connections: Int, data: CRUDDataSet) -> VarlinkCall {
        let entity = JSONValue.string(CRUDDataSet.entityName)
        let store = JSONValue.string(Self.store)
        switch self {
        case .fetchByID:
            return VarlinkCall(method: StrataStore.Fetch.qualifiedName, parameters: [
                "store": store, "entity": entity, "predicate": "SELF == %@",
                "arguments": .array([.int(Int64(Self.id(n: n, connection: connection, connections: connections, rows: data.rows)))])])
        case .fetchByPredicate:
            return VarlinkCall(method: StrataStore.Fetch.qualifiedName, parameters: [
                "store": store, "entity": entity, "predicate": .string(CRUDDataSet.fetchFormat),
                "arguments": .array([.string(data.fetchColor(n &* connections &+ connection))])])
        case .insert:
            return VarlinkCall(method: StrataStore.Insert.qualifiedName, parameters: [
                "store": store, "entity": entity, "values": Self.values(data.row(n &* connections &+ connection), tag: "I\(connection)-\(n)")])
        case .update:
            return VarlinkCall(method: StrataStore.Update.qualifiedName, parameters: [
                "store": store, "entity": entity, "id": .int(Int64(Self.id(n: n, connection: connection, connections: connections, rows: data.rows))),
                "values": .object(["flightHours": .double(Double(n))])])
        case .batch:
            let operations: [JSONValue] = (0..<Self.batchSize).map { i in
                .object(["op": "insert", "entity": entity,
                         "values": Self.values(data.row((n &* connections &+ connection) &* Self.batchSize &+ i), tag: "B\(connection)-\(n)-\(i)")])
            }
            return VarlinkCall(method: StrataStore.Batch.qualifiedName, parameters: ["store": store, "operations": .array(operations)])
        }
    }

    /// An id in 1...rows owned by `connection` (ids ≡ connection mod connections).
    static func id(n: Int, connection: Int, connections: Int, rows: Int) -> Int {
        let perConnection = max(1, rows / connections)
        return 1 + (((n % perConnection) &* 7919) % perConnection) * connections + connection
    }

    /// A row as the `values` of an insert.
    static func values(_ row: CRUDDataSet.Row, tag: String) -> JSONValue {
        .object(["tailNumber": .string(tag), "aircraftType": .string(row.aircraftType), "seats": .int(row.seats),
                 "flightHours": .double(row.flightHours),
                 "colorScheme": .object(["primary": .string(row.primary), "secondary": .string(row.secondary), "tertiary": .string(row.tertiary)])])
    }

    /// The same work through the library, as the daemon does it: a fresh context per call,
    /// the objects read (no JSON). Returns the objects touched.
    func runInProcess(n: Int, store: PersistentStore, data: CRUDDataSet) throws -> Int {
        let context = ObjectContext(store: store)
        switch self {
        case .fetchByID:
            return try context.fetch(CRUDDataSet.entityName, where: "SELF == %@", Int64(Self.id(n: n, connection: 0, connections: 1, rows: data.rows))).count
        case .fetchByPredicate:
            return try context.fetch(CRUDDataSet.entityName, where: CRUDDataSet.fetchFormat, data.fetchColor(n)).count
        case .insert:
            try data.row(n).insert(into: context, tailNumber: "P-\(n)")
            try context.save()
            return 1
        case .update:
            let object = try context.object(with: ObjectID(entityName: CRUDDataSet.entityName,
                                                           primaryKey: Int64(Self.id(n: n, connection: 0, connections: 1, rows: data.rows))))
            object["flightHours"] = .double(Double(n))
            try context.save()
            return 1
        case .batch:
            for i in 0..<Self.batchSize { try data.row(n &* Self.batchSize &+ i).insert(into: context, tailNumber: "PB-\(n)-\(i)") }
            try context.save()
            return Self.batchSize
        }
    }
}
