import Foundation
import Strata

/// `io.strata.Store` (see `varlink/io.strata.Store.varlink`): fetch, count, insert, update,
/// delete and transactional batches on hosted stores, objects as JSON.
///
/// Everything that can take long — predicate parsing and compilation, SQLite, turning objects
/// into JSON — runs on the store's own threads (``HostedStore/perform(_:)``) with its own
/// `ObjectContext`; only parameter checks run on the caller's task. Fetches and batches are
/// bounded by `limits.max_fetch_objects` and `limits.max_batch_operations`.
public struct StoreInterface: VarlinkInterface {
    public let name = "io.strata.Store"
    public var definition: String { InterfaceDefinitions.store }
    public let methods = Self.methodNames(in: InterfaceDefinitions.store)

    let registry: StoreRegistry
    let limits: Limits

    public init(registry: StoreRegistry, limits: Limits = Limits()) {
        self.registry = registry
        self.limits = limits
    }

    public func handle(_ call: VarlinkCall, context: VarlinkCallContext, replies: VarlinkReplySender) async throws -> [String: JSONValue] {
        let allowed: Set<String> = switch call.member {
        case "Fetch": ["store", "entity", "predicate", "arguments", "sort", "limit", "offset"]
        case "Count": ["store", "entity", "predicate", "arguments"]
        case "Insert": ["store", "entity", "values"]
        case "Update": ["store", "entity", "id", "values"]
        case "Delete": ["store", "entity", "id"]
        default: ["store", "operations"]
        }
        let parameters = try VarlinkParameters(call.parameters, allowed: allowed)
        let hosted = try await registry.store(named: try parameters.requiredString("store"))
        switch call.member {
        case "Fetch", "Count":
            let counting = call.member == "Count"
            let maxObjects = limits.maxFetchObjects
            return try await run(hosted) { context in
                // Parsed here, on the store's threads: a predicate can take long to compile.
                var request = try Self.fetchRequest(parameters, counting: counting, maxObjects: maxObjects)
                if counting { return ["count": .int(Int64(try context.count(request)))] }
                let unbounded = request.fetchLimit == nil
                if unbounded { request.fetchLimit = maxObjects + 1 }
                let objects = try context.fetch(request)
                if unbounded, objects.count > maxObjects {
                    throw VarlinkError.limitExceeded("max_fetch_objects", maximum: maxObjects, parameter: "limit", reason:
                        "more than \(maxObjects) objects match and no limit was given (limits.max_fetch_objects); page with limit and offset")
                }
                return ["objects": .array(objects.map { JSONValue(foundation: $0.jsonObject(style: .display)) })]
            }
        case "Insert", "Update", "Delete":
            let operation = try Self.operation(call.member.lowercased(), parameters)
            return try await run(hosted) { context in
                let result = try Self.apply(operation, in: context, index: nil)
                try context.save()
                if call.member == "Delete" { return ["deleted": true] }
                return ["object": JSONValue(foundation: result!.jsonObject(style: .display))]
            }
        default:
            guard let list = try parameters.array("operations") else { throw VarlinkError.invalidParameter("operations") }
            guard list.count <= limits.maxBatchOperations else {
                throw VarlinkError.limitExceeded("max_batch_operations", maximum: limits.maxBatchOperations, parameter: "operations", reason:
                    "a batch holds at most \(limits.maxBatchOperations) operations (limits.max_batch_operations), this one \(list.count); split it")
            }
            let operations = try list.enumerated().map { (index, value) throws(VarlinkError) -> Operation in
                guard case .object(let object) = value else { throw VarlinkError.invalidParameter("operations[\(index)]") }
                let op = try VarlinkParameters(object, allowed: ["op", "entity", "id", "values"])
                let kind = try op.requiredString("op")
                guard ["insert", "update", "delete"].contains(kind) else { throw VarlinkError.invalidParameter("operations[\(index)].op") }
                return try Self.operation(kind, op, index: index)
            }
            return try await run(hosted) { context in
                for (index, operation) in operations.enumerated() {
                    _ = try Self.apply(operation, in: context, index: index)
                }
                try context.save()
                // After the save, primary keys are permanent: render the objects now.
                let rendered: [JSONValue] = operations.map { operation in
                    operation.object.map { JSONValue(foundation: $0.jsonObject(style: .display)) } ?? .object([:])
                }
                return ["results": .array(rendered)]
            }
        }
    }

    // MARK: - Operations

    /// A parsed insert / update / delete. `object` is set while it is applied.
    final class Operation: @unchecked Sendable {
        // @unchecked: `object` is only touched on the one thread that runs the batch.
        let kind: String
        let entity: String
        let id: Int64?
        let values: JSONValue?
        var object: ManagedObject?

        init(kind: String, entity: String, id: Int64?, values: JSONValue?) {
            self.kind = kind
            self.entity = entity
            self.id = id
            self.values = values
        }
    }

    /// The range of object ids a client may name: saved objects have positive primary keys
    /// (negative ones are the library's temporary identifiers, never stored).
    static let objectIDRange: ClosedRange<Int64> = 1...Int64.max

    static func operation(_ kind: String, _ parameters: VarlinkParameters, index: Int? = nil) throws(VarlinkError) -> Operation {
        let entity = try parameters.requiredString("entity")
        let id = kind == "insert" ? nil : try parameters.requiredInt("id")
        if let id, !objectIDRange.contains(id) {
            var details: [String: JSONValue] = [
                "code": "invalidObjectID", "entity": .string(entity),
                "reason": .string("id \(id) is not an object id: ids of saved objects are 1 to \(Int64.max); use the _pk of a fetched object"),
            ]
            if let index { details["operation"] = .int(Int64(index)) }
            throw VarlinkError("io.strata.Store.ObjectError", details)
        }
        let values: [String: JSONValue]? = kind == "delete" ? nil : try parameters.requiredObject("values")
        if kind == "insert", parameters.values["id"] != nil { throw VarlinkError.invalidParameter("id") }
        return Operation(kind: kind, entity: entity, id: id, values: values.map(JSONValue.object))
    }

    /// Applies one operation to `context` (not saved).
    static func apply(_ operation: Operation, in context: ObjectContext, index: Int?) throws -> ManagedObject? {
        do {
            switch operation.kind {
            case "insert":
                let object = try context.insert(operation.entity)
                try object.setValues(fromJSON: operation.values!.foundationObject as? [String: Any] ?? [:])
                operation.object = object
                return object
            default:
                let object: ManagedObject
                do {
                    object = try context.object(with: ObjectID(entityName: operation.entity, primaryKey: operation.id!))
                } catch let error as ObjectContextError where error.code == .objectNotFound {
                    var parameters: [String: JSONValue] = ["entity": .string(operation.entity), "id": .int(operation.id!)]
                    if let index { parameters["operation"] = .int(Int64(index)) }
                    throw VarlinkError("io.strata.Store.ObjectNotFound", parameters)
                }
                if operation.kind == "delete" {
                    try context.delete(object)
                    return nil
                }
                try object.setValues(fromJSON: operation.values!.foundationObject as? [String: Any] ?? [:])
                operation.object = object
                return object
            }
        } catch let error as ObjectContextError {
            throw objectError(error, index: index)
        }
    }

    static func objectError(_ error: ObjectContextError, index: Int?) -> VarlinkError {
        var parameters: [String: JSONValue] = ["code": .string(error.code.rawValue), "reason": .string(error.description)]
        if let entity = error.entity { parameters["entity"] = .string(entity) }
        if let property = error.property { parameters["property"] = .string(property) }
        if let index { parameters["operation"] = .int(Int64(index)) }
        return VarlinkError("io.strata.Store.ObjectError", parameters)
    }

    // MARK: - Fetch requests

    static func fetchRequest(_ parameters: VarlinkParameters, counting: Bool, maxObjects: Int) throws(VarlinkError) -> FetchRequest {
        var request = FetchRequest(entityName: try parameters.requiredString("entity"))
        let arguments = try (parameters.array("arguments") ?? []).enumerated().map { (index, value) throws(VarlinkError) in
            guard let argument = predicateArgument(value) else { throw VarlinkError.invalidParameter("arguments[\(index)]") }
            return argument
        }
        if let format = try parameters.string("predicate") {
            do {
                request.predicate = try FetchPredicate(format: format, arguments: arguments)
            } catch {
                throw invalidPredicate(error)
            }
        } else if !arguments.isEmpty {
            throw VarlinkError.invalidParameter("arguments")
        }
        if !counting {
            for (index, value) in (try parameters.array("sort") ?? []).enumerated() {
                guard case .string(let text) = value else { throw VarlinkError.invalidParameter("sort[\(index)]") }
                do {
                    request.sortDescriptors.append(try FetchSortDescriptor(parsing: text))
                } catch {
                    throw invalidPredicate(error)
                }
            }
            if let limit = try parameters.int("limit") {
                guard limit >= 0 else { throw VarlinkError.invalidParameter("limit") }
                guard limit <= maxObjects else {
                    throw VarlinkError.limitExceeded("max_fetch_objects", maximum: maxObjects, parameter: "limit", reason:
                        "a fetch returns at most \(maxObjects) objects (limits.max_fetch_objects), asked for \(limit); page with limit and offset")
                }
                request.fetchLimit = Int(limit)
            }
            if let offset = try parameters.int("offset") {
                guard offset >= 0 else { throw VarlinkError.invalidParameter("offset") }
                request.fetchOffset = Int(offset)
            }
        }
        return request
    }

    static func predicateArgument(_ value: JSONValue) -> (any PredicateArgument)? {
        switch value {
        case .null: return Value.null
        case .bool(let b): return b
        case .int(let i): return i
        case .double(let d): return d
        case .string(let s): return s
        case .array(let elements):
            var list: [any PredicateArgument] = []
            for element in elements {
                guard let argument = predicateArgument(element) else { return nil }
                list.append(argument)
            }
            return PredicateList(list)
        case .object: return nil
        }
    }

    static func invalidPredicate(_ error: FetchPredicateError) -> VarlinkError {
        var parameters: [String: JSONValue] = ["format": .string(error.format), "reason": .string(error.description)]
        if let position = error.position { parameters["position"] = .int(Int64(position)) }
        return VarlinkError("io.strata.Store.InvalidPredicate", parameters)
    }

    // MARK: - Running

    /// Runs `body` with a fresh context on the store's threads, mapping library errors.
    private func run(_ hosted: HostedStore, _ body: @escaping @Sendable (ObjectContext) throws -> [String: JSONValue]) async throws -> [String: JSONValue] {
        do {
            return try await hosted.perform { store in
                let context = ObjectContext(store: store)
                do {
                    return try body(context)
                } catch {
                    context.rollback()
                    throw error
                }
            }
        } catch let error as VarlinkError {
            throw error
        } catch let error as ObjectContextError {
            if let storeError = error.storeError { throw StoreErrors.failure(hosted.name, storeError) }
            throw Self.objectError(error, index: nil)
        } catch let error as FetchPredicateError {
            throw Self.invalidPredicate(error)
        } catch let error as StoreError {
            throw StoreErrors.failure(hosted.name, error)
        }
    }}
