import Foundation
import Strata
import Synchronization

/// The model versions a hosted store serves beside its own, and the cleanup they hold.
///
/// A data-socket call that names an older version is served through a ``VersionBridge``,
/// worked out once per version for the store as it is open (a reload at a new version opens a
/// new hosted store, with new bridges) and kept; a refusal is kept too (a dropped column does
/// not come back). A bridge that finds its leftovers gone in a call's transaction is
/// forgotten, so that the next call gets the refusal with its reason.
///
/// **Holds.** A pending deferred task that would destroy a table or column a bridge of an
/// *active* older version uses (a call at it within `rollout.grace`, ``ClientVersions``) is
/// held: the scheduler and `finish-deferred` leave it in the ledger and say why ("held: 2
/// clients at Fleet 1, last call 14 s ago; uses Aircraft.photo"); the vacuum, which reclaims
/// what the held tasks will free, waits behind them. Index builds and everything else that
/// destroys nothing run. `finish-deferred --now --force` runs held tasks anyway.
final class HostedVersions: Sendable {
    let storeName: String
    /// The store's model directory (nil when it could not be read: only the store's own
    /// version is served then).
    let directory: ModelDirectory?
    /// The custom stages the store's migrations run (a hop one covers cannot be served across).
    let customStages: [MigrationStage]
    /// The daemon's record of who calls at which version.
    let clients: ClientVersions
    private let bridges = Mutex<[String: Result<VersionBridge, VersionBridgeError>]>([:])

    init(storeName: String, directory: ModelDirectory?, customStages: [MigrationStage], clients: ClientVersions) {
        self.storeName = storeName
        self.directory = directory
        self.customStages = customStages
        self.clients = clients
    }

    // MARK: - Serving

    /// The bridge that serves `version` on `store`; nil when the store's own version serves it
    /// (the same version, or one that stores data exactly like it). Works it out on the first
    /// call (reads the store's schema: call on the store's threads).
    ///
    /// - Throws: ``VersionBridgeError`` when `version` cannot be served.
    func bridge(for version: String, store: PersistentStore) throws(VersionBridgeError) -> VersionBridge? {
        let current = store.model
        if version == current.version { return nil }
        if let cached = bridges.withLock({ $0[version] }) { return try cached.get() }
        guard let directory else {
            throw VersionBridgeError(.unknownVersion, version: version, current: current.version,
                                     reason: "the store's model directory could not be read; only '\(current.version)' is served")
        }
        if let model = directory.version(named: version), model.checksum == current.checksum,
           let index = directory.index(ofVersion: version), let own = directory.index(ofVersion: current.version), index <= own {
            return nil
        }
        let result: Result<VersionBridge, VersionBridgeError>
        do {
            result = .success(try VersionBridge.resolve(store: store, directory: directory, version: version, customStages: customStages))
        } catch {
            result = .failure(error)
        }
        bridges.withLock { $0[version] = result }
        return try result.get()
    }

    /// Forgets what is known of `version` (its leftovers were found gone): the next call works
    /// it out again.
    func forget(_ version: String) {
        bridges.withLock { bridges in
            if case .success? = bridges[version] { bridges[version] = nil }
        }
    }

    /// Why calls at `version` are refused, when they are and it is known (for `Clients`).
    func refusal(of version: String) -> String? {
        guard case .failure(let error)? = bridges.withLock({ $0[version] }) else { return nil }
        return error.reason
    }

    // MARK: - Holds

    /// The pending tasks held for clients of older versions, with why, from `pending` (the
    /// ledger's tasks with their operations). Empty when no older version is active.
    func heldTasks(store: PersistentStore, pending: [PendingDeferredOperation], now: ContinuousClock.Instant = .now) -> [Int64: String] {
        let current = store.model.version
        let active = clients.activeVersions(of: storeName, now: now).keys.filter { $0 != current }.sorted()
        guard !active.isEmpty, pending.contains(where: { !$0.destroys.isEmpty }) else { return [:] }
        var needs: [(version: String, leftovers: VersionBridge.Leftovers)] = []
        for version in active {
            // A version that cannot be served has nothing to keep.
            guard let bridge = try? bridge(for: version, store: store), !bridge.leftovers.isEmpty else { continue }
            needs.append((version, bridge.leftovers))
        }
        guard !needs.isEmpty else { return [:] }
        var held: [Int64: String] = [:]
        for operation in pending {
            let destroys = operation.destroys
            guard !destroys.isEmpty else { continue }
            var reasons: [String] = []
            for need in needs {
                let used = need.leftovers.overlap(tables: destroys.tables, columns: destroys.columns)
                guard !used.isEmpty else { continue }
                reasons.append("\(clients.summary(store: storeName, version: need.version, now: now)); it uses \(used.joined(separator: "; "))")
            }
            if !reasons.isEmpty { held[operation.task.id] = "held: " + reasons.joined(separator: "; ") }
        }
        // The vacuum reclaims the pages the held tasks will free: it runs after them.
        if let first = held.keys.min() {
            for operation in pending where operation.task.kind == .incrementalVacuum {
                held[operation.task.id] = "waits: runs after the held task #\(first) (it reclaims the pages that task frees)"
            }
        }
        return held
    }

    /// ``heldTasks(store:pending:now:)`` read from the store's ledger now (nil: none).
    func heldTasks(store: PersistentStore) -> [Int64: String] {
        guard clients.activeVersions(of: storeName).keys.contains(where: { $0 != store.model.version }),
              let pending = try? store.pendingDeferredOperations() else { return [:] }
        return heldTasks(store: store, pending: pending)
    }

    /// For a run of deferred work: the check that leaves the held tasks in the ledger (nil
    /// when none is held now).
    func holdCheck(store: PersistentStore) -> (@Sendable (DeferredTask, MigrationOperation) -> Bool)? {
        let held = Set(heldTasks(store: store).keys)
        guard !held.isEmpty else { return nil }
        return { task, _ in held.contains(task.id) }
    }

    /// Who would lose access if the held tasks ran: one line per connection of an active
    /// older version (`Fleet 1: pid 4242 (app), 12 calls, last 3 s ago`).
    func affectedClients(store: PersistentStore, now: ContinuousClock.Instant = .now) -> [String] {
        let current = store.model.version
        let grace = clients.grace.withLock { $0 }
        // Clients of a refused version (a newer one, say) have nothing to lose.
        return clients.entries(store: storeName, within: grace, now: now).filter { $0.version != current && refusal(of: $0.version) == nil }.map { entry in
            let who = entry.peer.map { "pid \($0.pid)" + (entry.user.map { " (\($0))" } ?? " (uid \($0.uid))") } ?? "connection \(entry.connection)"
            return "\(entry.version): \(who), \(entry.calls) call\(entry.calls == 1 ? "" : "s"), last \(ClientVersions.ago(now - entry.last))"
        }
    }
}
