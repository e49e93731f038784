import Foundation
import GRDB
import GRDBSQLite
import Logging
import Synchronization

/// Keeps WAL checkpoints off the store's writer connection while deferred work runs.
///
/// SQLite checkpoints automatically at the commit that finds the WAL over 1,000 pages — on
/// whichever connection commits, so a client's one-row write could pay for copying the pages
/// of the finisher's last batch into the database file (and two fsyncs). While finishing runs,
/// the writer's automatic checkpoint is replaced by a WAL hook that only records the WAL's
/// size after each commit; the finisher then runs a `PASSIVE` checkpoint from a connection of
/// its own between two batches once the WAL passes ``threshold`` pages (a quarter of
/// SQLite's: smaller flushes, see there). A passive checkpoint takes no write lock, so writers
/// keep committing meanwhile, and the WAL stays smaller than SQLite would keep it.
/// ``stop(store:truncating:)`` returns without waiting for a checkpoint in flight; the automatic
/// checkpoint comes back on the checkpoint queue once the run's last frames are copied.
final class WALCheckpointer: Sendable {
    /// WAL pages after which a run starts a background checkpoint: a quarter of SQLite's
    /// automatic threshold (1,000). Each checkpoint ends with an `fdatasync` of the store file,
    /// and on ext4 that commit can hold up every other write to the file system — the clients'
    /// WAL appends included — for as long as it has data to flush. With 1,000 pages, client
    /// calls through stratad stalled together for 60–470 ms in about one run in two (1M and 4M
    /// rows, release); with 256, 4 runs of 4 at 1M stayed under 30 ms and two at 4M under 42
    /// and 76 ms, with p99 unchanged and finishing no slower (docs/Benchmarks.md).
    static let threshold = 256

    private let path: String
    private let hook: WALHook
    private var frames: WALHook.Frames { hook.frames }
    private let connection = Mutex<DatabaseQueue?>(nil)
    /// Bytes the store's ``WALTrimmer`` had cut when the run began.
    private let trimmedAtStart: Int
    /// Checkpoints run.
    let checkpoints = Atomic<Int>(0)
    private let running = Atomic<Bool>(false)
    /// The store's checkpoint queue (``PersistentStore/checkpointQueue``): serial, shared by
    /// every run on the store, so that the store's `close()` can wait for all of them.
    private let queue: DispatchQueue
    private let logger: Logger

    /// Called with the store's path at the start of every checkpoint (tests: to hold one).
    /// In a class, not in the `Mutex` directly: see ``Observer``.
    static let observer = Mutex<Observer?>(nil)

    /// A checkpoint observer. A closure kept in a `Mutex` directly and read back with
    /// `withLock { $0 }` gains a reabstraction thunk on every read (Swift 6.3).
    final class Observer: Sendable {
        let observe: @Sendable (String) -> Void
        init(_ observe: @escaping @Sendable (String) -> Void) { self.observe = observe }
    }

    /// Installs the WAL hook on the store's writer connection (or keeps the one a previous
    /// run left until its last checkpoint: ``WALHook``).
    init(store: PersistentStore) throws {
        path = store.url.path
        logger = store.logger
        queue = store.checkpointQueue
        let hook = store.walHook
        self.hook = hook
        trimmedAtStart = store.walTrimmer.trimmedBytes.load(ordering: .relaxed)
        try store.database.writeWithoutTransaction { db in
            // The WAL the run lets grow is cut back in steps (WALTrimmer), not at one write.
            try store.walTrimmer.engage(db)
            try hook.engage(db)
        }
    }

    /// Whether the WAL has grown past the threshold since the last checkpoint.
    var isDue: Bool { frames.value.load(ordering: .relaxed) >= Self.threshold }

    /// Starts a passive checkpoint in the background when the WAL is over the threshold and
    /// none runs (called after each batch). It overlaps the finisher's pause and next batch:
    /// a checkpoint takes no write lock, and its fsyncs are not the batch's to wait for.
    func checkpointIfDue() {
        guard isDue, !running.exchange(true, ordering: .acquiring) else { return }
        queue.async {
            self.checkpoint()
            self.running.store(false, ordering: .releasing)
        }
    }

    /// Runs a passive checkpoint now. Errors are ignored: the next checkpoint catches up.
    /// One that takes longer than 50 ms is logged (it runs beside the work, not in it).
    func checkpoint() {
        let start = ContinuousClock.now
        Self.observer.withLock { $0 }?.observe(path)
        defer {
            let took = ContinuousClock.now - start
            if took > .milliseconds(50) {
                logger.info("background WAL checkpoint was slow", metadata: [
                    "strata.ms": "\(String(format: "%.1f", Double(took.components.seconds) * 1000 + Double(took.components.attoseconds) / 1e15))",
                ])
            }
        }
        do {
            try checkpoint(.passive)
            frames.value.store(0, ordering: .relaxed)
            checkpoints.add(1, ordering: .relaxed)
        } catch {
            // Best effort: SQLite's own checkpoint resumes once the hook is removed.
        }
    }

    /// One checkpoint of `kind` on the checkpoint connection (opened at first use; its default
    /// busy mode answers busy at once instead of waiting).
    private func checkpoint(_ kind: Database.CheckpointMode) throws {
        try connection.withLock { queue in
            if queue == nil { queue = try DatabaseQueue(path: path) }
            try queue?.writeWithoutTransaction { db in _ = try db.checkpoint(kind) }
        }
    }

    /// Gives the WAL file back to the file system when nobody is in the way: one `TRUNCATE`
    /// checkpoint attempt without waiting (the busy timeout at 0 for it), once the work of a
    /// run that let the WAL grow past the limit is all done, its last passive checkpoint
    /// copied the frames and ``WALTrimmer`` cut the file back
    /// to at most ``PersistentStore/walSizeLimit`` (so that the truncation holds the write lock
    /// for a few milliseconds at most). When a writer or an older reader is there, SQLite
    /// answers busy at once and the WAL stays, within the limit, for SQLite to reuse. It runs
    /// on the writer connection: a checkpoint from another connection that starts the WAL over
    /// looks to the writer like a change by another process (`data_version`), which the change
    /// history would record as a gap.
    func truncateIfFree(store: PersistentStore) {
        let size = PersistentStore.fileSize(path + "-wal")
        guard size > 0, size <= PersistentStore.walSizeLimit else { return }
        _ = try? store.database.writeWithoutTransaction { db in
            let timeout = try Int.fetchOne(db, sql: "PRAGMA busy_timeout") ?? 0
            try db.execute(sql: "PRAGMA busy_timeout = 0")
            defer { try? db.execute(sql: "PRAGMA busy_timeout = \(timeout)") }
            // Busy: the WAL stays for SQLite to reuse.
            _ = try? db.checkpoint(.truncate)
        }
    }

    /// Hands the rest to the background, the writer's automatic checkpoint (which replaces the
    /// hook) restored there after the run's last checkpoint: the checkpoint in flight, a last one when the WAL is still over the
    /// threshold, cutting a grown WAL back in steps (``WALTrimmer/trimAfterRun(store:budget:pause:clientsActive:checkpoint:patience:)``,
    /// paced by `budget` and `pause` while `clientsActive` says a client call is in flight),
    /// `truncating` the WAL once the work is done (``truncateIfFree(store:)``), and closing the
    /// checkpoint connection. Call once. **It never waits for a checkpoint**: a run that stops
    /// for a pause or a shutdown returns within its batch, not after a checkpoint's page copies
    /// and fsyncs (hundreds of milliseconds on a busy disk). A client commit meanwhile finds
    /// the checkpoint lock taken and skips its automatic checkpoint at once. The store's
    /// `close()` waits for it all (and stops the trimming).
    func stop(store: PersistentStore, truncating: Bool = false, budget: Duration = .milliseconds(20),
              pause: Duration = .milliseconds(10), clientsActive: (@Sendable () -> Bool)? = nil) {
        let due = isDue
        let hook = self.hook
        hook.disengage()
        let trimmer = store.walTrimmer
        // A run that let the WAL grow past the limit gives it back at its end; a WAL that
        // stayed within it is SQLite's to reuse (no write lock taken for it).
        let grew = PersistentStore.fileSize(path + "-wal") > PersistentStore.walSizeLimit
            || trimmer.trimmedBytes.load(ordering: .relaxed) > trimmedAtStart
        trimmer.disengage()
        let stopped = ContinuousClock.now
        queue.async {
            // Checkpoint what the run left, or the next client commit would: the automatic
            // checkpoint comes back only after it (a client's commit that found it back with
            // the run's last frames still to copy paid for copying them and the fsync, and
            // every client behind it waited: 130-140 ms now and then at 4M rows, issue 44).
            if due { self.checkpoint() }
            _ = try? store.database.writeWithoutTransaction { db in hook.restoreIfIdle(db) }
            trimmer.trimAfterRun(store: store, budget: budget, pause: max(pause, .milliseconds(5)),
                                 clientsActive: { clientsActive?() ?? false }, checkpoint: { self.checkpoint() })
            // Given back only while nobody calls: the truncation is a checkpoint on the writer
            // connection, and a client's write arriving then would wait for it (a client at 4M
            // rows waited 115 ms for one that began after the clients came back). What the
            // background checkpoint can copy first, it copies without the write lock.
            if truncating, grew, !trimmer.isEngaged, !(clientsActive?() ?? false) {
                self.checkpoint()
                if !(clientsActive?() ?? false) { self.truncateIfFree(store: store) }
            }
            self.connection.withLock { queue in
                try? queue?.close()
                queue = nil
            }
            // What a run that waited for its checkpoints would have added to its end.
            let after = ContinuousClock.now - stopped
            self.logger.log(level: after > .milliseconds(50) ? .info : .debug, "the run's last WAL checkpoint ended after the run (which did not wait for it)", metadata: [
                "strata.ms_after_run": "\(String(format: "%.1f", Double(after.components.seconds) * 1000 + Double(after.components.attoseconds) / 1e15))",
                "strata.wal_trimmed_bytes": "\(trimmer.trimmedBytes.load(ordering: .relaxed))",
                "strata.wal_trim_steps": "\(trimmer.steps.load(ordering: .relaxed))",
            ])
        }
    }

}

/// The WAL hook the runs on one store put on its writer connection in place of SQLite's
/// automatic checkpoint: it only records the WAL's size after each commit. Shared by the runs
/// on the store: a run that begins while the previous run's last checkpoint is still queued
/// keeps the hook (and the automatic checkpoint's setting saved when the first run installed
/// it); the setting comes back when the last run's last checkpoint is done and no run is on.
/// Every method runs on the writer connection, so the writer orders them.
final class WALHook: Sendable {
    /// Pages in the WAL after the last commit on the writer connection (set by the hook).
    final class Frames: Sendable {
        let value = Atomic<Int>(0)
    }

    private struct State {
        /// The writer's `wal_autocheckpoint` before the hook, while the hook is installed.
        var saved: Int?
        var runs = 0
    }

    let frames = Frames()
    private let state = Mutex(State())

    /// A run begins: installs the hook unless it is there.
    func engage(_ db: Database) throws {
        let installed = state.withLock { state -> Bool in
            state.runs += 1
            return state.saved != nil
        }
        guard !installed else { return }
        let previous = try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") ?? 1000
        // Retained for good (one per open store): the hook never sees a freed context.
        let context = Unmanaged.passUnretained(frames).toOpaque()
        sqlite3_wal_hook(db.sqliteConnection, { context, _, _, pages in
            if let context {
                Unmanaged<Frames>.fromOpaque(context).takeUnretainedValue().value.store(Int(pages), ordering: .relaxed)
            }
            return SQLITE_OK
        }, context)
        state.withLock { $0.saved = previous }
    }

    /// A run ended (its last checkpoint is still to come).
    func disengage() {
        state.withLock { $0.runs = max(0, $0.runs - 1) }
    }

    /// After a run's last checkpoint: the automatic checkpoint back, unless a run is on.
    func restoreIfIdle(_ db: Database) {
        let saved = state.withLock { state -> Int? in
            guard state.runs == 0, let saved = state.saved else { return nil }
            state.saved = nil
            return saved
        }
        guard let saved else { return }
        try? db.execute(sql: "PRAGMA wal_autocheckpoint = \(saved)")
    }
}
