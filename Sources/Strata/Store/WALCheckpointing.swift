/// Who moves the pages of a store's WAL into its main file (a checkpoint).
///
/// A WAL replicator such as Litestream must read every frame before it is checkpointed away:
/// it holds a read transaction so that `PASSIVE` checkpoints stop at what it has copied, and
/// runs its own checkpoints between two syncs. A `RESTART` or `TRUNCATE` checkpoint (or an
/// automatic one racing the replicator's lock switch) can restart the WAL behind its back
/// and cost a new snapshot of the whole store. So a replicated store hands checkpoints over:
///
/// ```swift
/// var options = StoreOptions()
/// options.walCheckpointing = .external   // Litestream checkpoints this store
/// ```
public enum WALCheckpointing: String, Sendable, Hashable {
    /// Strata checkpoints: SQLite's automatic checkpoint at 1,000 pages, moved off the writer
    /// to a background `PASSIVE` checkpoint while deferred work runs (`WALCheckpointer`), and
    /// `TRUNCATE` when asked (``PersistentStore/checkpoint(_:)``).
    case strata
    /// Another process checkpoints (Litestream): every connection runs with
    /// `wal_autocheckpoint = 0`, deferred work starts no checkpoint of its own, and
    /// ``PersistentStore/checkpoint(_:)`` runs only `PASSIVE` checkpoints, which never
    /// move past a frame the replicator has not read.
    case external
}
