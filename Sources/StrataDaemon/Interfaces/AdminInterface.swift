import Foundation
import Strata
import StrataVarlink

/// `io.strata.Admin` (``StrataAdmin``, `varlink/io.strata.Admin.varlink`): status, stores,
/// deferred work, the scheduler and its settings, checkpoints, backups, reload and metrics.
///
/// The errors of the registry, the library, the scheduler and the configuration become the
/// interface's errors in one place, ``failure(_:store:)``.
public struct AdminInterface: VarlinkTableInterface {
    /// What the admin interface needs from the running daemon.
    public struct Control: Sendable {
        /// When it started.
        public var startedAt: ContinuousClock.Instant
        /// Re-reads the configuration; throws its `ConfigurationError` when refused.
        public var reload: @Sendable () async throws -> ReloadOutcome
        /// The daemon's metrics in the Prometheus text format.
        public var metrics: @Sendable () async -> String

        /// Memberwise initializer.
        public init(startedAt: ContinuousClock.Instant, reload: @escaping @Sendable () async throws -> ReloadOutcome,
                    metrics: @escaping @Sendable () async -> String = { "" }) {
            self.startedAt = startedAt
            self.reload = reload
            self.metrics = metrics
        }
    }

    /// The handlers of the interface's methods.
    public let table: VarlinkMethodTable<StrataAdmin>

    /// Memberwise initializer.
    public init(registry: StoreRegistry, scheduler: any DeferredWorkScheduler, runner: DeferredWorkRunner, control: Control) {
        let handlers = AdminHandlers(registry: registry, scheduler: scheduler, runner: runner, control: control)
        var table = VarlinkMethodTable<StrataAdmin>(translatingErrors: { Self.failure($0, store: nil) })
        table.on(StrataAdmin.Status.self) { _, _, _ in await handlers.status() }
        table.on(StrataAdmin.ListStores.self) { _, _, _ in .init(stores: await registry.all().map(StrataAdmin.StoreInfo.init)) }
        table.on(StrataAdmin.Pending.self) { parameters, _, _ in try await handlers.pending(parameters) }
        table.on(StrataAdmin.FinishDeferred.self) { parameters, _, replies in try await handlers.finishDeferred(parameters, replies: replies) }
        table.on(StrataAdmin.Pause.self) { parameters, _, _ in
            .init(scheduler: StrataAdmin.SchedulerInfo(await scheduler.pause(reason: parameters.reason ?? "by request")))
        }
        table.on(StrataAdmin.Resume.self) { _, _, _ in .init(scheduler: StrataAdmin.SchedulerInfo(await scheduler.resume())) }
        table.on(StrataAdmin.GetSettings.self) { parameters, _, _ in try await handlers.settings(parameters) }
        table.on(StrataAdmin.SetSetting.self) { parameters, context, _ in try await handlers.set(parameters, logger: context.logger) }
        table.on(StrataAdmin.Clients.self) { parameters, _, _ in try await handlers.clients(parameters) }
        table.on(StrataAdmin.Checkpoint.self) { parameters, _, _ in try await handlers.checkpoint(parameters) }
        table.on(StrataAdmin.Backup.self) { parameters, context, _ in try await handlers.backup(parameters, logger: context.logger) }
        table.on(StrataAdmin.Reload.self) { _, _, _ in try await control.reload() }
        table.on(StrataAdmin.Metrics.self) { _, _, _ in .init(text: await control.metrics()) }
        self.table = table
    }

    // MARK: - Errors

    /// The interface's error for `error`: the registry's and the library's errors concerning
    /// a store, a refused setting, a refused configuration; nil for anything else. `store`
    /// names the store whose work threw.
    static func failure(_ error: any Error, store: String?) -> StrataAdmin.Failure? {
        if let reply = StoreErrorReply(error, store: store) {
            return reply.failure(as: StrataAdmin.Failure.self)
        }
        switch error {
        case let error as SchedulerSettingError:
            if error.unknownKey { return .unknownSetting(.init(key: error.key, known: AdminHandlers.allSettingKeys)) }
            return .invalidSetting(.init(key: error.key, value: error.value, reason: error.reason))
        case let error as ConfigurationError:
            return .reloadFailed(.init(file: error.file, key: error.key, reason: error.description))
        default:
            return nil
        }
    }
}

/// What a configuration reload did (`Reload`, SIGHUP): the `STATUS=` line after it and the
/// stores it opened and closed — the interface's reply itself.
public typealias ReloadOutcome = StrataAdmin.Reload.Reply
