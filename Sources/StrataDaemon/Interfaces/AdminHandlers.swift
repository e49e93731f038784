import Foundation
import Logging
import Strata
import StrataVarlink

/// The methods of ``AdminInterface`` that do more than one call: status, pending work,
/// finishing deferred work, settings, checkpoints and backups.
struct AdminHandlers: Sendable {
    let registry: StoreRegistry
    let scheduler: any DeferredWorkScheduler
    let runner: DeferredWorkRunner
    let control: AdminInterface.Control

    func status() async -> StrataAdmin.Status.Reply {
        let stores = await registry.all()
        return StrataAdmin.Status.Reply(
            version: StrataDaemonVersion.string, pid: Int(getpid()), uptimeSeconds: (ContinuousClock.now - control.startedAt).seconds,
            status: await registry.summary(), stores: stores.map(StrataAdmin.StoreInfo.init),
            scheduler: StrataAdmin.SchedulerInfo(await scheduler.status()))
    }

    func pending(_ parameters: StrataAdmin.Pending.Parameters) async throws -> StrataAdmin.Pending.Reply {
        let stores = try await selectStores(parameters.store)
        return .init(stores: stores.map { store in
            // Held tasks say why (for clients of an older model version: Rollout/).
            let held = store.heldTasks()
            return StrataAdmin.StorePending(store: store.name, tasks: store.pendingTasks().map { StrataAdmin.DeferredTaskInfo($0, held: held[$0.id]) })
        })
    }

    // MARK: - FinishDeferred

    func finishDeferred(_ parameters: StrataAdmin.FinishDeferred.Parameters,
                        replies: VarlinkReplies<StrataAdmin.FinishDeferred.Reply>) async throws -> StrataAdmin.FinishDeferred.Reply {
        let stores = try await selectStores(parameters.store)
        let now = parameters.now ?? false
        // Following runs already going needs no permission: they are running.
        let following = (parameters.wait ?? false) && stores.allSatisfy(\.isFinishingOnRequest)
        if !now && !following {
            let permission = await scheduler.permission()
            if !permission.allowed { return .init(state: .skipped, reason: permission.reason) }
        }
        // A forced run drops what clients of an older model version still use only when told to.
        if now && !(parameters.force ?? false) { try refuseHeldWithoutForce(stores) }
        // A scheduler turn gives the store over to the request (DeferredWorkRunner.run); an
        // earlier request's run is followed to its end with --wait (DeferredWorkRunner.finish).
        if stores.count == 1, stores[0].isFinishingOnRequest, !(parameters.wait ?? false) {
            throw StrataAdmin.Failure.alreadyRunning(.init(
                store: stores[0].name,
                reason: "deferred work already runs on this store (an earlier request); `stratactl finish-deferred --wait` follows it to the end"))
        }
        let settings = await scheduler.settings()
        // The free pages are given back by the scheduler's idle turns unless the request asks.
        let reclaim = parameters.reclaim ?? false
        let ignoreLag = parameters.ignoreLag ?? false
        guard parameters.wait ?? false else {
            runner.start(stores, now: now, reclaim: reclaim, ignoreLag: ignoreLag, settings: settings)
            return .init(state: .started)
        }
        let stream = AsyncStream<StrataAdmin.FinishDeferred.Reply>.makeStream()
        let forward = Task {
            for await progress in stream.stream { try? await replies.progress(progress) }
        }
        let results = await runner.finish(stores, now: now, reclaim: reclaim, ignoreLag: ignoreLag, settings: settings) { store, progress in
            stream.continuation.yield(.init(state: .running, progress: StrataAdmin.FinishProgress(progress, store: store)))
        }
        stream.continuation.finish()
        await forward.value
        let failed = results.contains { $0.error != nil }
        let stoppedEarly = results.contains { $0.report?.stoppedEarly ?? false }
        return .init(state: failed ? .failed : stoppedEarly ? .stopped : .finished, results: results.map(StrataAdmin.FinishResult.init))
    }

    // MARK: - Settings

    func settings(_ parameters: StrataAdmin.GetSettings.Parameters) async throws -> StrataAdmin.GetSettings.Reply {
        let settings = await scheduler.settings()
        let rollout = rolloutSettings()
        if let key = parameters.key {
            if let setting = rollout.first(where: { $0.key == key }) { return .init(settings: [setting]) }
            guard settings.value(of: key) != nil else {
                throw StrataAdmin.Failure.unknownSetting(.init(key: key, known: Self.allSettingKeys))
            }
            return .init(settings: [StrataAdmin.Setting(key: key, settings)])
        }
        return .init(settings: SchedulerSettings.keys.map { StrataAdmin.Setting(key: $0, settings) } + rollout)
    }

    func set(_ parameters: StrataAdmin.SetSetting.Parameters, logger: Logger) async throws -> StrataAdmin.SetSetting.Reply {
        if parameters.key.hasPrefix("rollout.") {
            let previous = try setRollout(parameters.key, to: parameters.value, logger: logger)
            return .init(setting: rolloutSettings().first { $0.key == parameters.key }!, previous: previous)
        }
        let previous = try await scheduler.set(parameters.key, to: parameters.value)
        return .init(setting: StrataAdmin.Setting(key: parameters.key, await scheduler.settings()), previous: previous)
    }

    // MARK: - Checkpoint and backup

    func checkpoint(_ parameters: StrataAdmin.Checkpoint.Parameters) async throws -> StrataAdmin.Checkpoint.Reply {
        let store = try await registry.store(named: parameters.store)
        let started = ContinuousClock.now
        try await blocking(store) { try $0.checkpoint() }
        return .init(store: store.name, seconds: (ContinuousClock.now - started).seconds)
    }

    func backup(_ parameters: StrataAdmin.Backup.Parameters, logger: Logger) async throws -> StrataAdmin.Backup.Reply {
        let store = try await registry.store(named: parameters.store)
        let path = parameters.path
        guard path.hasPrefix("/") else { throw VarlinkError.invalidParameter("path") }
        try await blocking(store) { try $0.backup(to: URL(fileURLWithPath: path)) }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        logger.notice("backup written", metadata: ["strata.store": "\(store.name)", "strata.path": "\(path)", "strata.bytes": "\(size)"])
        return .init(store: store.name, path: path, bytes: Int64(size))
    }

    // MARK: - Helpers

    func selectStores(_ name: String?) async throws -> [HostedStore] {
        guard let name else { return await registry.all() }
        return [try await registry.store(named: name)]
    }

    /// Runs blocking work on the store's own threads (``HostedStore/perform(_:)``), naming the
    /// store in what it throws.
    private func blocking(_ hosted: HostedStore, _ body: @escaping @Sendable (PersistentStore) throws -> Void) async throws {
        do {
            try await hosted.perform(body)
        } catch {
            throw AdminInterface.failure(error, store: hosted.name) ?? error
        }
    }
}
