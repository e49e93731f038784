import Foundation
import Strata

/// `io.strata.Admin` (see `varlink/io.strata.Admin.varlink`).
public struct AdminInterface: VarlinkInterface {
    /// What the admin interface needs from the running daemon.
    public struct Control: Sendable {
        public var startedAt: ContinuousClock.Instant
        public var reload: @Sendable () async throws -> (status: String, opened: [String], closed: [String])

        public init(startedAt: ContinuousClock.Instant, reload: @escaping @Sendable () async throws -> (status: String, opened: [String], closed: [String])) {
            self.startedAt = startedAt
            self.reload = reload
        }
    }

    public let name = "io.strata.Admin"
    public var definition: String { InterfaceDefinitions.admin }
    public let methods = Self.methodNames(in: InterfaceDefinitions.admin)

    let registry: StoreRegistry
    let scheduler: any DeferredWorkScheduler
    let runner: DeferredWorkRunner
    let control: Control

    public init(registry: StoreRegistry, scheduler: any DeferredWorkScheduler, runner: DeferredWorkRunner, control: Control) {
        self.registry = registry
        self.scheduler = scheduler
        self.runner = runner
        self.control = control
    }

    public func handle(_ call: VarlinkCall, context: VarlinkCallContext, replies: VarlinkReplySender) async throws -> [String: JSONValue] {
        switch call.member {
        case "Status":
            _ = try VarlinkParameters(call.parameters, allowed: [])
            let stores = await registry.all()
            return [
                "version": .string(StrataDaemonVersion.string),
                "pid": .int(Int64(getpid())),
                "uptimeSeconds": .double((ContinuousClock.now - control.startedAt).seconds),
                "status": .string(await registry.summary()),
                "stores": .array(stores.map(Self.info)),
                "scheduler": Self.info(await scheduler.status()),
            ]
        case "ListStores":
            _ = try VarlinkParameters(call.parameters, allowed: [])
            return ["stores": .array(await registry.all().map(Self.info))]
        case "Pending":
            let parameters = try VarlinkParameters(call.parameters, allowed: ["store"])
            let stores = try await selectStores(try parameters.string("store"))
            return ["stores": .array(stores.map { store in
                .object(["store": .string(store.name), "tasks": .array(store.pendingTasks().map(Self.info))])
            })]
        case "FinishDeferred":
            return try await finishDeferred(call, replies: replies)
        case "Pause":
            let parameters = try VarlinkParameters(call.parameters, allowed: ["reason"])
            return ["scheduler": Self.info(await scheduler.pause(reason: try parameters.string("reason") ?? "by request"))]
        case "Resume":
            _ = try VarlinkParameters(call.parameters, allowed: [])
            return ["scheduler": Self.info(await scheduler.resume())]
        case "GetSettings":
            let parameters = try VarlinkParameters(call.parameters, allowed: ["key"])
            let settings = await scheduler.settings()
            let keys: [String]
            if let key = try parameters.string("key") {
                guard settings.value(of: key) != nil else { throw Self.unknownSetting(key) }
                keys = [key]
            } else {
                keys = SchedulerSettings.keys
            }
            return ["settings": .array(keys.map { Self.setting($0, settings) })]
        case "SetSetting":
            let parameters = try VarlinkParameters(call.parameters, allowed: ["key", "value"])
            let key = try parameters.requiredString("key")
            let value = try parameters.requiredString("value")
            do {
                let previous = try await scheduler.set(key, to: value)
                return ["setting": Self.setting(key, await scheduler.settings()), "previous": .string(previous)]
            } catch {
                if error.unknownKey { throw Self.unknownSetting(key) }
                throw VarlinkError("io.strata.Admin.InvalidSetting", ["key": .string(key), "value": .string(value), "reason": .string(error.reason)])
            }
        case "Checkpoint":
            let parameters = try VarlinkParameters(call.parameters, allowed: ["store"])
            let store = try await hosted(try parameters.requiredString("store"))
            let started = ContinuousClock.now
            try await blocking(store) { try $0.checkpoint() }
            return ["store": .string(store.name), "seconds": .double((ContinuousClock.now - started).seconds)]
        case "Backup":
            let parameters = try VarlinkParameters(call.parameters, allowed: ["store", "path"])
            let store = try await hosted(try parameters.requiredString("store"))
            let path = try parameters.requiredString("path")
            guard path.hasPrefix("/") else { throw VarlinkError.invalidParameter("path") }
            try await blocking(store) { try $0.backup(to: URL(fileURLWithPath: path)) }
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            context.logger.notice("backup written", metadata: ["strata.store": "\(store.name)", "strata.path": "\(path)", "strata.bytes": "\(size)"])
            return ["store": .string(store.name), "path": .string(path), "bytes": .int(Int64(size))]
        case "Reload":
            _ = try VarlinkParameters(call.parameters, allowed: [])
            let result = try await control.reload()
            return ["status": .string(result.status), "opened": .array(result.opened.map(JSONValue.string)),
                    "closed": .array(result.closed.map(JSONValue.string))]
        default:
            throw VarlinkError.methodNotImplemented(call.method)
        }
    }

    // MARK: - FinishDeferred

    private func finishDeferred(_ call: VarlinkCall, replies: VarlinkReplySender) async throws -> [String: JSONValue] {
        let parameters = try VarlinkParameters(call.parameters, allowed: ["store", "wait", "now"])
        let stores = try await selectStores(try parameters.string("store"))
        let wait = try parameters.bool("wait") ?? false
        let now = try parameters.bool("now") ?? false
        if !now {
            let permission = await scheduler.permission()
            if !permission.allowed {
                return ["state": "skipped", "reason": .string(permission.reason), "results": []]
            }
        }
        // A scheduler turn gives the store over to the request (DeferredWorkRunner.run).
        if stores.count == 1, stores[0].isFinishingOnRequest {
            throw VarlinkError("io.strata.Admin.AlreadyRunning", ["store": .string(stores[0].name), "reason": "deferred work already runs on this store"])
        }
        let settings = await scheduler.settings()
        guard wait else {
            runner.start(stores, now: now, settings: settings)
            return ["state": "started", "results": []]
        }
        let stream = AsyncStream<[String: JSONValue]>.makeStream()
        let forward = Task {
            for await progress in stream.stream { try? await replies.progress(progress) }
        }
        let results = await runner.finish(stores, now: now, settings: settings) { store, progress in
            stream.continuation.yield(["state": "running", "progress": Self.info(progress, store: store), "results": []])
        }
        stream.continuation.finish()
        await forward.value
        let failed = results.contains { $0.error != nil }
        let stoppedEarly = results.contains { $0.report?.stoppedEarly ?? false }
        let state = failed ? "failed" : stoppedEarly ? "stopped" : "finished"
        return ["state": .string(state), "results": .array(results.map(Self.info))]
    }

    // MARK: - Helpers

    private func selectStores(_ name: String?) async throws -> [HostedStore] {
        guard let name else { return await registry.all() }
        return [try await hosted(name)]
    }

    private func hosted(_ name: String) async throws(VarlinkError) -> HostedStore {
        do {
            return try await registry.store(named: name)
        } catch {
            throw VarlinkError(error.name.replacingOccurrences(of: "io.strata.Store.", with: "io.strata.Admin."), error.parameters)
        }
    }

    /// Runs blocking work on the store's own threads (``HostedStore/perform(_:)``).
    private func blocking(_ hosted: HostedStore, _ body: @escaping @Sendable (PersistentStore) throws -> Void) async throws {
        do {
            try await hosted.perform(body)
        } catch let error as StoreError {
            throw StoreErrors.failure(hosted.name, error, interface: "io.strata.Admin")
        } catch let error as VarlinkError {
            throw VarlinkError(error.name.replacingOccurrences(of: "io.strata.Store.", with: "io.strata.Admin."), error.parameters)
        }
    }

    private static func unknownSetting(_ key: String) -> VarlinkError {
        VarlinkError("io.strata.Admin.UnknownSetting", [
            "key": .string(key), "known": .array(SchedulerSettings.keys.map(JSONValue.string)),
            "reason": .string("unknown setting '\(key)'; known: \(SchedulerSettings.keys.joined(separator: ", "))"),
        ])
    }

    static func setting(_ key: String, _ settings: SchedulerSettings) -> JSONValue {
        .object(["key": .string(key), "value": .string(settings.value(of: key) ?? ""),
                 "description": .string(SchedulerSettings.descriptions[key] ?? "")])
    }

    static func info(_ store: HostedStore) -> JSONValue {
        var object: [String: JSONValue] = [
            "name": .string(store.name), "path": .string(store.configuration.path),
            "modelVersion": store.modelVersion.map(JSONValue.string) ?? .null,
            "targetVersion": store.configuration.targetVersion.map(JSONValue.string) ?? .null,
            "deferCleanup": .bool(store.configuration.deferCleanup),
            "pendingTasks": .int(Int64(store.pendingTasks().count)),
            "finishing": .bool(store.isFinishing), "requests": .int(Int64(store.requestCount)),
        ]
        switch store.state {
        case .ready: object["state"] = "ready"
        case .failed(let reason): object["state"] = "failed"; object["error"] = .string(reason)
        case .closed: object["state"] = "closed"
        }
        return .object(object)
    }

    static func info(_ status: SchedulerStatus) -> JSONValue {
        let stats = status.statistics
        return .object([
            "state": .string(status.state.rawValue), "reason": .string(status.reason), "paused": .bool(status.paused),
            "workingOn": status.workingOn.map(JSONValue.string) ?? .null,
            "signals": .array(status.signals.map { reading in
                .object(["signal": .string(reading.signal.rawValue), "label": .string(reading.label), "value": .double(reading.value),
                         "threshold": .double(reading.threshold), "busy": .bool(reading.isBusy), "summary": .string(reading.summary)])
            }),
            "unavailable": .array(status.unavailable.map(JSONValue.string)),
            "stats": .object([
                "runs": .int(Int64(stats.runs)), "workSeconds": .double(stats.workSeconds), "delaySeconds": .double(stats.delaySeconds),
                "windowRuntimeSeconds": .double(status.windowRuntimeSeconds),
                "rowsProcessed": .int(stats.rowsProcessed), "batches": .int(Int64(stats.batches)), "tasksFinished": .int(Int64(stats.tasksFinished)),
                "pauses": .int(Int64(stats.pauses)),
                "pausesByCause": .object(stats.pausesByCause.mapValues { .int(Int64($0)) }),
                "pauseLatencyP50Ms": .double(stats.pauseLatencyP50Milliseconds), "pauseLatencyP99Ms": .double(stats.pauseLatencyP99Milliseconds),
                "pauseLatencyMaxMs": .double(stats.pauseLatencyMaxMilliseconds),
                "recentPauses": .array(stats.recentPauses.map { pause in
                    .object(["cause": .string(pause.cause), "reason": .string(pause.reason), "latencyMs": .double(pause.latencyMilliseconds),
                             "store": pause.store.map(JSONValue.string) ?? .null, "at": .string(Self.timestamp(pause.at))])
                }),
                "errors": .int(Int64(stats.errors)), "lastError": stats.lastError.map(JSONValue.string) ?? .null,
            ]),
        ])
    }

    /// ISO 8601 with milliseconds (pause times are compared with clients' clocks).
    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    static func info(_ task: DeferredTask) -> JSONValue {
        .object([
            "id": .int(task.id), "kind": .string(task.kind.rawValue), "table": task.table.map(JSONValue.string) ?? .null,
            "summary": .string(task.summary), "state": .string(task.state.rawValue), "rowsDone": .int(task.rowsDone),
            "rowsTotal": .int(task.rowsTotal), "fraction": .double(task.fraction),
        ])
    }

    static func info(_ progress: DeferredProgress, store: String) -> JSONValue {
        .object([
            "store": .string(store), "taskId": .int(progress.task.id), "taskIndex": .int(Int64(progress.taskIndex)),
            "taskCount": .int(Int64(progress.taskCount)), "summary": .string(progress.task.summary),
            "rowsDone": .int(progress.task.rowsDone), "rowsTotal": .int(progress.task.rowsTotal), "fraction": .double(progress.task.fraction),
        ])
    }

    /// A store's result; a failed run reports what it finished and what the ledger still holds.
    static func info(_ result: DeferredWorkRunner.Result) -> JSONValue {
        let report = result.report
        let failure = result.failure
        let tasksFinished = report?.tasksFinished ?? failure?.tasksFinished ?? 0
        let tasksRemaining = report?.tasksRemaining ?? failure?.tasksRemaining ?? result.pendingTasks
        return .object([
            "store": .string(result.store), "tasksFinished": .int(Int64(tasksFinished)),
            "tasksRemaining": .int(Int64(tasksRemaining)), "rowsProcessed": .int(report?.rowsProcessed ?? failure?.rowsProcessed ?? 0),
            "batches": .int(Int64(report?.batches ?? failure?.batches ?? 0)), "seconds": .double(report?.seconds ?? failure?.seconds ?? 0),
            "stoppedEarly": .bool(report?.stoppedEarly ?? (result.error != nil)), "error": result.error.map(JSONValue.string) ?? .null,
        ])
    }
}
