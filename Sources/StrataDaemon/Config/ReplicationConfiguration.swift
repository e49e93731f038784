import Foundation

/// A store replicated by Litestream (`stores[].replication:` in stratad.yaml; docs/Fleet.md).
///
/// ```yaml
/// replication:
///   replica: /var/lib/strata/replicas/aircraft   # a file replica (or file:// URL); optional
///   max_lag: 16MiB                               # hold deferred work while more is unshipped
/// ```
///
/// With it, the store's WAL checkpoints belong to Litestream (`WALCheckpointing.external`), and
/// the idle scheduler holds deferred work while the WAL bytes not yet shipped exceed
/// ``maxLag`` (the `replication` signal).
public struct ReplicationConfiguration: Sendable, Hashable {
    /// The directory of the replica whose position is read: a `file://` replica's path. Nil
    /// reads Litestream's local copy next to the store (`.NAME-litestream`), which shows
    /// the WAL Litestream has not read yet (what a remote replica cannot be asked).
    public var replica: String?
    /// The most WAL bytes not yet shipped before deferred work holds.
    public var maxLag: Int

    /// The range of ``maxLag``: 64 KiB (a few batches) to 16 GiB.
    public static let maxLagRange: ClosedRange<Int> = (64 << 10) ... (16 << 30)
    /// The default ``maxLag``: 16 MiB, about 15 s of Litestream's 1 s sync interval at the
    /// WAL rate of a 1M-row rewrite on a busy disk (docs/Fleet.md).
    public static let defaultMaxLag = 16 << 20

    /// Memberwise initializer.
    public init(replica: String? = nil, maxLag: Int = ReplicationConfiguration.defaultMaxLag) {
        self.replica = replica
        self.maxLag = maxLag
    }

    /// The directory holding the replica's LTX levels (`ltx/0/…`) for a store at `storePath`.
    public func positionDirectory(storePath: String) -> String {
        if let replica { return replica }
        let url = URL(fileURLWithPath: storePath)
        return url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent)-litestream").path
    }
}
