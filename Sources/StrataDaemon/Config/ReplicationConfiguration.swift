import Foundation

/// A store replicated by Litestream (`stores[].replication:` in stratad.yaml; docs/Fleet.md).
///
/// ```yaml
/// replication:
///   replica: /var/lib/strata/replicas/aircraft   # a file replica (or file:// URL); optional
///   max_lag: 64MiB                               # the most the replica may be behind
///   sync_interval: 1s                            # the time between Litestream's shipments
/// ```
///
/// With it, the store's WAL checkpoints belong to Litestream (`WALCheckpointing.external`), and
/// the idle scheduler holds deferred work while the WAL bytes not yet shipped exceed
/// ``maxLag``, counting what the store's clients write in one ``syncInterval`` and the work's
/// next batch (the `replication` signal).
public struct ReplicationConfiguration: Sendable, Hashable {
    /// The directory of the replica whose position is read: a `file://` replica's path. Nil
    /// reads Litestream's local copy next to the store (`.NAME-litestream`), which shows
    /// the WAL Litestream has not read yet (what a remote replica cannot be asked).
    public var replica: String?
    /// The most WAL bytes not yet shipped before deferred work holds.
    public var maxLag: Int
    /// The time between two of Litestream's shipments (the replica's `sync-interval`, at least
    /// Litestream's 1 s monitor interval): how long the WAL the clients write waits to be
    /// shipped, which the work leaves room for under ``maxLag``.
    public var syncInterval: Duration

    /// The range of ``maxLag``: 64 KiB (a few batches) to 16 GiB.
    public static let maxLagRange: ClosedRange<Int> = (64 << 10) ... (16 << 30)
    /// The default ``maxLag``: 64 MiB. The clients' own WAL of one sync interval counts
    /// against it: 4 clients making 800 updates a second during a table rewrite write about
    /// 12–17 MiB a second, which a 16 MiB bound (the default until issue 23's pacing counted
    /// them) left no room beside; well under the 474 MiB past which Litestream runs a
    /// blocking `TRUNCATE` checkpoint (docs/Fleet.md).
    public static let defaultMaxLag = 64 << 20
    /// The range of ``syncInterval``.
    public static let syncIntervalRange: ClosedRange<Duration> = .milliseconds(10) ... .seconds(3600)
    /// The default ``syncInterval``: Litestream's own default, 1 s.
    public static let defaultSyncInterval: Duration = .seconds(1)

    /// Memberwise initializer.
    public init(replica: String? = nil, maxLag: Int = ReplicationConfiguration.defaultMaxLag,
                syncInterval: Duration = ReplicationConfiguration.defaultSyncInterval) {
        self.replica = replica
        self.maxLag = maxLag
        self.syncInterval = syncInterval
    }

    /// The directory holding the replica's LTX levels (`ltx/0/…`) for a store at `storePath`.
    public func positionDirectory(storePath: String) -> String {
        if let replica { return replica }
        let url = URL(fileURLWithPath: storePath)
        return url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent)-litestream").path
    }
}
