import Foundation
import Logging
import ServiceLifecycle
import Strata

/// Tells the journal when the last client of an older model version goes quiet (no call
/// within `rollout.grace`) and which held cleanup becomes runnable with it: the roll-out's
/// end, as far as the store can see it. The idle scheduler then takes the cleanup on by
/// itself (its turns skip held work only).
///
/// Looks once a second, at the stores' client records only (no store is read unless an older
/// version has clients).
final class RolloutWatch: Service, Sendable {
    let registry: StoreRegistry
    let logger: Logger
    static let interval: Duration = .seconds(1)

    init(registry: StoreRegistry, logger: Logger) {
        self.registry = registry
        self.logger = logger
    }

    /// The older versions seen active, and what was held, per store.
    private struct Seen {
        var active: Set<String> = []
        var held: [Int64: String] = [:]
    }

    func run() async {
        await cancelWhenGracefulShutdown {
            var seen: [String: Seen] = [:]
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.interval)
                for hosted in await self.registry.all() {
                    seen[hosted.name] = self.look(at: hosted, seen: seen[hosted.name] ?? Seen())
                }
            }
        }
    }

    /// Logs the versions of `hosted` that went quiet since `seen`; what is seen now.
    private func look(at hosted: HostedStore, seen: Seen) -> Seen {
        guard let store = hosted.store, let versions = hosted.versions else { return Seen() }
        let clients = versions.clients
        let current = store.model.version
        let now = ContinuousClock.now
        // Versions refused (newer, or not servable) hold nothing: their clients going quiet releases nothing.
        let active = Set(clients.activeVersions(of: hosted.name, now: now).keys.filter { $0 != current && versions.refusal(of: $0) == nil })
        guard !active.isEmpty || !seen.active.isEmpty else { return Seen() }
        let held = active.isEmpty ? [:] : hosted.heldTasks()
        let grace = clients.grace.withLock { $0 }
        for version in seen.active.subtracting(active).sorted() {
            let last = clients.lastCalls(of: hosted.name)[version].map { ClientVersions.ago(now - $0) } ?? "long ago"
            // What was held a second ago and is not now: released by this version going quiet.
            let released = seen.held.keys.filter { held[$0] == nil }.sorted()
            let what = released.isEmpty
                ? "no cleanup was held for it"
                : "its held cleanup is runnable: " + released.map { id in "#\(id)" }.joined(separator: ", ")
            logger.notice("the last client of model version '\(version)' went quiet; \(what)", metadata: [
                "strata.store": "\(hosted.name)", "strata.version": "\(version)", "strata.current": "\(current)",
                "strata.last_call": "\(last)", "strata.grace": "\(DurationText.format(grace))",
                "strata.released_tasks": "\(released.map(String.init).joined(separator: ","))",
            ])
        }
        return Seen(active: active, held: held)
    }
}
