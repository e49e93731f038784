import Foundation
import Logging
import Strata
import StrataVarlink

/// The roll-out side of the admin interface: `Clients`, the `rollout.*` settings, and the
/// refusal of a forced `FinishDeferred` that would take away what clients still use.
extension AdminHandlers {
    // MARK: - Clients

    func clients(_ parameters: StrataAdmin.Clients.Parameters) async throws -> StrataAdmin.Clients.Reply {
        let stores = try await selectStores(parameters.store)
        let clients = registry.clients
        let grace = clients.grace.withLock { $0 }
        let now = ContinuousClock.now
        var list: [StrataAdmin.ClientInfo] = []
        for hosted in stores {
            let current = hosted.modelVersion
            for entry in clients.entries(store: hosted.name, now: now) {
                list.append(StrataAdmin.ClientInfo(
                    store: entry.store, version: entry.version, named: entry.named, current: entry.version == current,
                    connection: entry.connection, open: entry.isOpen, pid: entry.peer?.pid, uid: entry.peer?.uid, user: entry.user,
                    calls: Int(entry.calls), lastCall: StrataAdmin.SchedulerInfo.timestamp(entry.lastDate),
                    lastCallSecondsAgo: (now - entry.last).seconds, active: now - entry.last <= grace,
                    refused: hosted.versions?.refusal(of: entry.version)))
            }
        }
        return .init(grace: DurationText.format(grace), clients: list)
    }

    // MARK: - Settings

    /// The `rollout.*` settings as `GetSettings` shows them.
    func rolloutSettings() -> [StrataAdmin.Setting] {
        [StrataAdmin.Setting(key: "rollout.grace", value: DurationText.format(registry.clients.grace.withLock { $0 }),
                             description: RolloutSettings.graceMeaning)]
    }

    /// Sets a `rollout.*` setting; returns the previous value.
    ///
    /// - Throws: ``SchedulerSettingError`` naming the key and the range.
    func setRollout(_ key: String, to value: String, logger: Logger) throws(SchedulerSettingError) -> String {
        guard key == "rollout.grace" else {
            throw SchedulerSettingError(key: key, value: value, reason: "unknown setting '\(key)'", unknownKey: true)
        }
        let grace = try RolloutSettings.parseGrace(value)
        let previous = registry.clients.grace.withLock { old in
            defer { old = grace }
            return old
        }
        logger.notice("rollout setting changed", metadata: ["strata.key": "\(key)", "strata.value": "\(DurationText.format(grace))",
                                                            "strata.previous": "\(DurationText.format(previous))"])
        return DurationText.format(previous)
    }

    /// Every setting's key (`UnknownSetting` lists them).
    static var allSettingKeys: [String] { SchedulerSettings.keys + RolloutSettings.keys }

    // MARK: - Forced runs

    /// Refuses `FinishDeferred` with `now` but without `force` while tasks of `stores` are held
    /// for clients of an older model version: who would lose access, and how to go ahead.
    func refuseHeldWithoutForce(_ stores: [HostedStore]) throws {
        for hosted in stores {
            // The tasks that destroy what clients use (the vacuum behind them only waits).
            let held = hosted.heldTasks().filter { $0.value.hasPrefix("held: ") }
            guard !held.isEmpty, let store = hosted.store, let versions = hosted.versions else { continue }
            let affected = versions.affectedClients(store: store)
            let tasks = held.keys.sorted()
            throw StrataAdmin.Failure.heldForClients(.init(
                store: hosted.name, tasks: tasks, clients: affected,
                reason: "\(tasks.count) deferred task\(tasks.count == 1 ? " is" : "s are") held for clients of an older model version (\(held[tasks[0]]!)); running \(tasks.count == 1 ? "it" : "them") now takes away what \(affected.count) client connection\(affected.count == 1 ? "" : "s") still use\(affected.count == 1 ? "s" : ""): add force (`stratactl finish-deferred --now --force`) to go ahead, or wait until they upgrade and go quiet for rollout.grace"))
        }
    }
}
