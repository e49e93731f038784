import Foundation
import Strata
import StrataVarlink

/// `io.strata.Store` (``StrataStore``, `varlink/io.strata.Store.varlink`): fetch, count,
/// insert, update, delete and transactional batches on hosted stores, objects as JSON.
///
/// Everything that can take long — predicate parsing and compilation, SQLite, turning objects
/// into JSON — runs on the store's own threads (``HostedStore/perform(_:)``) with its own
/// `ObjectContext`; only parameter checks run on the caller's task. Fetches and batches are
/// bounded by `limits.max_fetch_objects` and `limits.max_batch_operations`. The errors of the
/// registry and the library become the interface's errors in one place, ``failure(_:store:)``.
public struct StoreInterface: VarlinkTableInterface {
    /// The handlers of the interface's methods.
    public let table: VarlinkMethodTable<StrataStore>

    /// Memberwise initializer.
    public init(registry: StoreRegistry, limits: Limits = Limits()) {
        var table = VarlinkMethodTable<StrataStore>(translatingErrors: { Self.failure($0, store: nil) })
        let maxObjects = limits.maxFetchObjects
        table.on(StrataStore.Fetch.self) { parameters, call, _ in
            let query = Query(entity: parameters.entity, predicate: parameters.predicate, arguments: parameters.arguments,
                              sort: parameters.sort, limit: parameters.limit, offset: parameters.offset)
            return try await Self.serving(parameters.store, version: parameters.version, registry: registry, call: call) { hosted in
                StrataStore.Fetch.Reply(objects: try await Self.run(hosted, limits: limits, lane: query.lane, version: parameters.version,
                                                                    throughContextOnly: true) { context in
                    try Self.fetch(query, in: context, maxObjects: maxObjects)
                })
            }
        }
        table.on(StrataStore.Count.self) { parameters, call, _ in
            let query = Query(entity: parameters.entity, predicate: parameters.predicate, arguments: parameters.arguments)
            return try await Self.serving(parameters.store, version: parameters.version, registry: registry, call: call) { hosted in
                StrataStore.Count.Reply(count: try await Self.run(hosted, limits: limits, lane: query.lane, version: parameters.version,
                                                                  throughContextOnly: true) { context in
                    Int64(try context.count(try query.request(counting: true, maxObjects: maxObjects)))
                })
            }
        }
        table.on(StrataStore.Insert.self) { parameters, call, _ in
            let operation = try ObjectOperation(.insert, entity: parameters.entity, id: nil, values: parameters.values)
            let writer = try Writer(call, author: parameters.author)
            return try await Self.serving(parameters.store, version: parameters.version, registry: registry, call: call) { hosted in
                StrataStore.ObjectReply(object: try await Self.save(operation, on: hosted, limits: limits, writer: writer, version: parameters.version))
            }
        }
        table.on(StrataStore.Update.self) { parameters, call, _ in
            let operation = try ObjectOperation(.update, entity: parameters.entity, id: parameters.id, values: parameters.values)
            let writer = try Writer(call, author: parameters.author)
            return try await Self.serving(parameters.store, version: parameters.version, registry: registry, call: call) { hosted in
                StrataStore.ObjectReply(object: try await Self.save(operation, on: hosted, limits: limits, writer: writer, version: parameters.version))
            }
        }
        table.on(StrataStore.Delete.self) { parameters, call, _ in
            let operation = try ObjectOperation(.delete, entity: parameters.entity, id: parameters.id, values: nil)
            let writer = try Writer(call, author: parameters.author)
            return try await Self.serving(parameters.store, version: parameters.version, registry: registry, call: call) { hosted in
                _ = try await Self.save(operation, on: hosted, limits: limits, writer: writer, version: parameters.version)
                return StrataStore.Delete.Reply(deleted: true)
            }
        }
        table.on(StrataStore.Batch.self) { parameters, call, _ in
            let writer = try Writer(call, author: parameters.author)
            return try await Self.serving(parameters.store, version: parameters.version, registry: registry, call: call) { hosted in
                StrataStore.Batch.Reply(results: try await Self.batch(parameters.operations, on: hosted, limits: limits, writer: writer, version: parameters.version))
            }
        }
        table.on(StrataStore.History.self) { parameters, call, _ in
            try await Self.serving(parameters.store, version: parameters.version, registry: registry, call: call) { hosted in
                try await Self.history(parameters, on: hosted, limits: limits)
            }
        }
        table.on(StrataStore.Observe.self) { parameters, call, replies in
            try await Self.serving(parameters.store, version: parameters.version, registry: registry, call: call, retry: false) { hosted in
                try await Self.observe(parameters, on: hosted, context: call, replies: replies, limits: limits)
            }
        }
        self.table = table
    }

    // MARK: - Errors

    /// The interface's error for `error`: the registry's and the library's errors (``HostingError``,
    /// `StoreError`, `ObjectContextError`, `FetchPredicateError`); nil for anything else.
    /// `store` names the store whose work threw.
    static func failure(_ error: any Error, store: String?) -> StrataStore.Failure? {
        if let reply = StoreErrorReply(error, store: store) {
            return reply.failure(as: StrataStore.Failure.self)
        }
        switch error {
        case let error as VersionBridgeError:
            return .versionNotServed(.init(store: store ?? "?", version: error.version, current: error.current, reason: error.reason))
        case let error as ObjectContextError: return objectError(error, index: nil)
        case let error as FetchPredicateError:
            return .invalidPredicate(.init(format: error.format, position: error.position, reason: error.description))
        case let error as HistoryError: return historyFailure(error, store: store)
        default: return nil
        }
    }

    static func objectError(_ error: ObjectContextError, index: Int?) -> StrataStore.Failure {
        .objectError(.init(code: error.code.rawValue, entity: error.entity, property: error.property, reason: error.description, operation: index))
    }

    // MARK: - Running

    /// Runs `body` with a fresh context on the store's threads (rolled back when it throws),
    /// under the store's call deadline (``Limits/callTimeout`` or the store's `call_timeout`),
    /// translating what the store throws.
    ///
    /// `throughContextOnly`: `body` reaches the store only through the context's fetches,
    /// counts and saves, so the schema is checked in their transactions (the store's
    /// `TransactionGate`) instead of in a read of its own first.
    ///
    /// `lane`: the store's threads it runs on (``HostedStore/Lane``). `version`: the model
    /// version the call named; the context serves it (``HostedVersions``).
    static func run<T: Sendable>(_ hosted: HostedStore, limits: Limits, writer: Writer? = nil, lane: HostedStore.Lane = .query,
                                 version: String? = nil, throughContextOnly: Bool = false,
                                 _ body: @escaping @Sendable (ObjectContext) throws -> T) async throws -> T {
        let (timeout, limit) = callTimeout(of: hosted, limits: limits)
        do {
            return try await hosted.perform(lane: lane, schemaCheckedByContexts: throughContextOnly) { store in
                let context = try Self.context(on: store, hosted: hosted, version: version)
                context.deadline = CallDeadline(timeout: timeout, limit: limit)
                if let writer {
                    context.transactionUser = writer.user
                    context.transactionAuthor = writer.author
                }
                do {
                    return try body(context)
                } catch {
                    context.rollback()
                    throw error
                }
            }
        } catch let error as any VarlinkErrorConvertible {
            throw error
        } catch let error as HostingError where error.isClosedUnderTheCall {
            // Not translated here: ``serving(_:version:registry:call:_:)`` sends the call to
            // the store a reload opened again (the table translates it otherwise).
            throw error
        } catch let error as VersionBridgeError {
            // Found in a call's transaction: what the bridge used is gone. The next call works it out again.
            hosted.versions?.forget(error.version)
            throw versionNotServed(error, hosted: hosted)
        } catch let error as StoreError where error.code == .callTimeout {
            throw VarlinkError.callTimeout(limit: limit, timeout: timeout, store: hosted.name)
        } catch let error as ObjectContextError where error.storeError?.code == .callTimeout {
            throw VarlinkError.callTimeout(limit: limit, timeout: timeout, store: hosted.name)
        } catch {
            throw failure(error, store: hosted.name) ?? error
        }
    }

    /// The time limit of one call on `hosted` and the setting that gives it.
    static func callTimeout(of hosted: HostedStore, limits: Limits) -> (Duration, String) {
        if let own = hosted.configuration.callTimeout { return (own, "stores.\(hosted.name).call_timeout") }
        return (limits.callTimeout, "limits.call_timeout")
    }

    private static func fetch(_ query: Query, in context: ObjectContext, maxObjects: Int) throws -> [JSONValue] {
        var request = try query.request(counting: false, maxObjects: maxObjects)
        let unbounded = request.fetchLimit == nil
        if unbounded { request.fetchLimit = maxObjects + 1 }
        let objects = try context.fetch(request)
        if unbounded, objects.count > maxObjects {
            throw VarlinkError.limitExceeded("max_fetch_objects", maximum: maxObjects, parameter: "limit", reason:
                "more than \(maxObjects) objects match and no limit was given (limits.max_fetch_objects); page with limit and offset")
        }
        return objects.map(\.replyValue)
    }

    /// Applies one operation and saves; the object as saved (`{}` for a delete).
    private static func save(_ operation: ObjectOperation, on hosted: HostedStore, limits: Limits, writer: Writer, version: String?) async throws -> JSONValue {
        try await run(hosted, limits: limits, writer: writer, lane: .key, version: version, throughContextOnly: true) { context in
            try Self.checkInsert(operation, in: context, store: hosted.name)
            let object = try operation.apply(in: context, index: nil)
            try context.save()
            return object?.replyValue ?? .object([:])
        }
    }

    /// Applies every operation in one transaction: all or none.
    private static func batch(_ list: [StrataStore.Operation], on hosted: HostedStore, limits: Limits, writer: Writer, version: String?) async throws -> [JSONValue] {
        let maxOperations = limits.maxBatchOperations
        guard list.count <= maxOperations else {
            throw VarlinkError.limitExceeded("max_batch_operations", maximum: maxOperations, parameter: "operations", reason:
                "a batch holds at most \(maxOperations) operations (limits.max_batch_operations), this one \(list.count); split it")
        }
        let operations = try list.enumerated().map { index, operation in
            try ObjectOperation(operation.op, entity: operation.entity, id: operation.id, values: operation.values, index: index)
        }
        return try await run(hosted, limits: limits, writer: writer, lane: .key, version: version, throughContextOnly: true) { context in
            for operation in operations { try Self.checkInsert(operation, in: context, store: hosted.name) }
            let objects = try operations.enumerated().map { index, operation in try operation.apply(in: context, index: index) }
            try context.save()
            // After the save, primary keys are permanent: render the objects now.
            return objects.map { object in object?.replyValue ?? .object([:]) }
        }
    }
}
