import Foundation
import Strata

/// Keeps each store's change history within its retention (`history: {keep, max_transactions}`):
/// the idle scheduler calls it on its idle ticks, and each call removes at most one bounded
/// batch per store (``HistoryRetention/batchSize`` changes in one short write transaction),
/// so purging never holds the write lock longer than a batch and stops when load returns.
enum HistoryPurger {
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
        return try? await hosted.perform { store -> HistoryPurgeBatch? in
            let token = try purgeToken(store, retention: retention, now: now)
            guard token > 0, let oldest = try store.oldestHistoryToken(), oldest <= token else { return nil }
            return try store.purgeHistory(through: token, batchSize: HistoryRetention.batchSize)
        }
    }

    /// Records a gap on stores another process wrote without history (a cheap check of the
    /// writer's `data_version` when nothing moved), so that observers learn of it.
    static func recordExternalWrites(_ hosted: HostedStore) async {
        guard hosted.state == .ready else { return }
        _ = try? await hosted.perform { store in try store.recordExternalWrites() }
    }
}
