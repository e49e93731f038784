import Foundation
import Strata
import Synchronization

/// Keeps each store's change history within its retention (`history: {keep, max_transactions}`)
/// and records gaps for other processes' raw writes. The idle scheduler starts it on its
/// ticks (``start(_:purge:)``); each start does at most one bounded purge batch per store
/// (``HistoryRetention/batchSize`` changes in one short write transaction), so purging never
/// holds the write lock longer than a batch and stops when load returns. The work runs on the
/// store's threads without counting as client load, and never holds a tick back.
enum HistoryPurger {
    /// Stores whose upkeep is running (one at a time per store).
    private static let running = Mutex<Set<ObjectIdentifier>>([])

    /// Starts the upkeep of `hosted` unless it is already running: a gap check, and with
    /// `purge` (the machine is idle) one purge batch.
    static func start(_ hosted: HostedStore, purge: Bool) {
        guard hosted.state == .ready else { return }
        let key = ObjectIdentifier(hosted)
        guard running.withLock({ $0.insert(key).inserted }) else { return }
        Task {
            defer { _ = running.withLock { $0.remove(key) } }
            await recordExternalWrites(hosted)
            if purge { _ = await purgeOneBatch(hosted) }
        }
    }

    /// The token `retention` purges through on `store` now (0: nothing).
    static func purgeToken(_ store: PersistentStore, retention: HistoryRetention, now: Date) throws -> Int64 {
        var token: Int64 = 0
        if let keep = retention.keep { token = max(token, try store.historyToken(before: now.addingTimeInterval(-keep.seconds))) }
        if let count = retention.maxTransactions { token = max(token, try store.historyToken(keepingLast: count)) }
        return token
    }

    /// One purge batch on `hosted` when its history holds more than its retention keeps;
    /// nil when there was nothing to do (or the store is not ready, or finishing).
    static func purgeOneBatch(_ hosted: HostedStore, now: Date = Date()) async -> HistoryPurgeBatch? {
        let retention = hosted.configuration.history
        guard retention.purges, hosted.state == .ready, !hosted.isFinishing else { return nil }
        return try? await hosted.performUpkeep { store -> HistoryPurgeBatch? in
            let token = try purgeToken(store, retention: retention, now: now)
            guard token > 0, let oldest = try store.oldestHistoryToken(), oldest <= token else { return nil }
            return try store.purgeHistory(through: token, batchSize: HistoryRetention.batchSize)
        }
    }

    /// Records a gap when another process wrote the store without history (a cheap check of
    /// the writer's `data_version` when nothing moved), so that observers learn of it.
    static func recordExternalWrites(_ hosted: HostedStore) async {
        guard hosted.state == .ready, hosted.configuration.history.record else { return }
        _ = try? await hosted.performUpkeep { store in try store.recordExternalWrites() }
    }
}
