import Foundation
import GRDB
import Logging
import StrataUnits
import Synchronization

/// Gives a WAL that deferred work let grow back to the file system in bounded steps, each
/// under the write lock for a few milliseconds, instead of all at once at the write that
/// restarts it.
///
/// While deferred work and clients both write, background checkpoints never find the WAL
/// wholly copied at the moment a write begins, so the WAL is not restarted and grows by
/// everything written: 1.1–2.3 GB at 4M rows, 6.5 GB at 16M. When it finally restarts,
/// SQLite cuts it to `journal_size_limit` at that write's commit: one `ftruncate` of gigabytes
/// (about 0.28 ms per MiB on this project's ext4), under the write lock, paid by whichever
/// client wrote then — 284 ms at 4M rows and 1.7–1.9 s at 16M, with every other client queued
/// behind it (docs/Benchmarks.md).
///
/// While a run is engaged, the writer connection has no journal size limit (SQLite keeps the
/// WAL file at its size after a restart and writes it over from the start). Between batches,
/// and after the run until the file is back within ``PersistentStore/walSizeLimit``, a
/// ``step(_:budget:restart:)`` cuts off at most one step of the file's unused tail: the bytes after
/// the WAL's last committed frame, which no reader, checkpoint or recovery reads (the WAL
/// index names that frame; the write lock keeps it from moving meanwhile). SQLite's own
/// `journal_size_limit` truncation cuts the same tail under the same lock, all at once.
/// The step size follows the time the last step took, so that one step holds the lock for
/// about half a batch budget.
final class WALTrimmer: Sendable {
    /// What one step found.
    enum Outcome: Equatable, Sendable {
        /// The file is within the limit: nothing left to do.
        case done
        /// A step of the tail was cut, or the WAL restarted so that the next step can cut:
        /// more is left.
        case more
        /// The whole file is still WAL in use: it can shrink only after a checkpoint has copied
        /// every frame and a write restarts the WAL (a reader may hold a snapshot meanwhile).
        case waiting
    }

    private struct State {
        /// Runs between ``engage(_:)`` and ``disengage()``.
        var runs = 0
        /// Whether the writer's journal size limit is off.
        var engaged = false
        /// Bytes the next step cuts at most.
        var step = WALTrimmer.initialStep
    }

    static let initialStep = 32 << 20
    static let minimumStep = 4 << 20
    static let maximumStep = 512 << 20
    /// A tail shorter than this is left for the next step.
    static let minimumCut = 1 << 20
    /// How long no client call must have been in flight before a cut after a run.
    static let quietBeforeCut = Duration.milliseconds(250)
    /// How often the clients are looked at while waiting for a quiet moment.
    static let quietSample = Duration.milliseconds(5)

    private let walPath: String
    private let shmPath: String
    private let state = Mutex(State())
    private let closed = Atomic<Bool>(false)
    /// Bytes cut and steps taken (tests, the log).
    let trimmedBytes = Atomic<Int>(0)
    let steps = Atomic<Int>(0)

    init(storePath: String) {
        walPath = storePath + "-wal"
        shmPath = storePath + "-shm"
    }

    /// The store closes: ``trimAfterRun(store:budget:pause:clientsActive:checkpoint:patience:)`` stops.
    func close() { closed.store(true, ordering: .relaxed) }

    /// Whether a run is engaged or the WAL has not yet been cut back after one.
    var isEngaged: Bool { state.withLock { $0.engaged } }

    /// Whether a run is between ``engage(_:)`` and ``disengage()``.
    var isRunning: Bool { state.withLock { $0.runs > 0 } }

    /// A run begins (on the writer connection `db`): the writer stops cutting the WAL at the
    /// write that restarts it.
    func engage(_ db: Database) throws {
        let first = state.withLock { state in
            state.runs += 1
            defer { state.engaged = true }
            return !state.engaged
        }
        if first { try db.execute(sql: "PRAGMA journal_size_limit = -1") }
    }

    /// A run ended; ``trimAfterRun(store:budget:pause:clientsActive:checkpoint:patience:)`` takes over.
    func disengage() {
        state.withLock { $0.runs = max(0, $0.runs - 1) }
    }

    /// Whether a step would cut something now (read without the lock: a hint): the file is over
    /// the limit and has a tail past the WAL's last committed frame.
    var hasTail: Bool {
        let size = PersistentStore.fileSize(walPath)
        guard size > PersistentStore.walSizeLimit, let header = WALIndexHeader.read(shmPath) else { return false }
        return Self.cuttable(size: size, header)
    }

    /// The size no step cuts below: the end of the last committed frame, or the limit.
    private static func lowestEnd(_ header: WALIndexHeader) -> Int {
        max(header.committedEnd, PersistentStore.walSizeLimit)
    }

    /// Whether a step cuts a file of `size` bytes: a tail of at least ``minimumCut`` past
    /// ``lowestEnd(_:)``, or, once the WAL in use is within the limit, whatever is left over
    /// it (a last step may leave less than ``minimumCut`` above the limit: it is cut too,
    /// or the file would stay over the limit for good).
    private static func cuttable(size: Int, _ header: WALIndexHeader) -> Bool {
        let floor = lowestEnd(header)
        return size - floor >= minimumCut || (header.committedEnd <= PersistentStore.walSizeLimit && size > floor)
    }

    /// One step on the writer connection `db` (outside a transaction), in a write transaction
    /// of its own. `restart`: when the whole file is WAL in use and a checkpoint has copied
    /// all of it, write one page (the header's `user_version`, unchanged) so that SQLite
    /// restarts the WAL; the next step can then cut.
    func step(_ db: Database, budget: Duration, restart: Bool, cap: Int? = nil) throws -> Outcome {
        // Read without the lock first: no write transaction (no lock taken) when there is
        // nothing to do; the transaction reads it all again.
        let limit = PersistentStore.walSizeLimit
        let hintSize = PersistentStore.fileSize(walPath)
        guard hintSize > limit, let hint = WALIndexHeader.read(shmPath) else { return .done }
        let restartable = restart && hint.frames > 0 && hint.backfilled == hint.frames
        guard Self.cuttable(size: hintSize, hint) || restartable else { return .waiting }
        var outcome = Outcome.waiting
        try db.inTransaction(.immediate) {
            let size = PersistentStore.fileSize(walPath)
            guard size > limit, let header = WALIndexHeader.read(shmPath) else {
                outcome = .done
                return .commit
            }
            // Under the write lock the last committed frame does not move.
            let floor = Self.lowestEnd(header)
            if Self.cuttable(size: size, header) {
                let cut = min(state.withLock { $0.step }, cap ?? Int.max)
                let target = max(floor, size - cut)
                let start = ContinuousClock.now
                guard truncate(walPath, off_t(target)) == 0 else {
                    throw DatabaseError(resultCode: .SQLITE_IOERR, message: "cannot truncate \(walPath) to \(target) bytes: \(String(cString: strerror(errno)))")
                }
                FaultInjection.point("wal.trim")
                adapt(cut: size - target, took: ContinuousClock.now - start, budget: budget)
                trimmedBytes.add(size - target, ordering: .relaxed)
                steps.add(1, ordering: .relaxed)
                // What is left past the limit is the WAL in use: it needs a restart first.
                outcome = target <= limit ? .done : target > floor ? .more : .waiting
            } else if restart, header.frames > 0, header.backfilled == header.frames {
                // Every frame is in the store file: SQLite restarts the WAL at this write's
                // commit unless a reader began using it since (then the page is appended; no
                // harm: the next wait checkpoints it).
                let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                try db.execute(sql: "PRAGMA user_version = \(version)")
                outcome = .more
            }
            return .commit
        }
        return outcome
    }

    /// The next step's size: what takes about half of `budget` at the rate the last step cut,
    /// at most twice the last step.
    private func adapt(cut: Int, took: Duration, budget: Duration) {
        guard cut > 0 else { return }
        let seconds = max(took.seconds, 1e-6)
        let fitting = Double(cut) * (budget.seconds / 2) / seconds
        state.withLock { state in
            let next = min(Double(state.step * 2), fitting)
            state.step = min(Self.maximumStep, max(Self.minimumStep, Int(next)))
        }
    }

    /// After a run (on the store's checkpoint queue): steps until the file is within the limit,
    /// and a passive checkpoint and a growing wait while the WAL is all in use. **Nothing is cut
    /// while clients call**: a cut is made only once no client call has been in flight for
    /// ``quietBeforeCut``, sampled every few milliseconds. The blocks a cut frees are given back
    /// to the device at the file system's next journal commit (`discard`), which every other
    /// write to the file system — the clients' commits included — waits for: cuts of hundreds
    /// of megabytes in a row made clients wait 10–30 ms at 1M and 4M rows, and cuts of 4 MiB
    /// every 50 ms while they called still 120–140 ms now and then at 4M (issue 44). Stops when a
    /// run begins (that run goes on between its batches) or the store closes; once done, the
    /// writer's journal size limit is back. Gives up after `patience` of waiting (for a reader
    /// or for a quiet moment), leaving the limit off: SQLite would cut the whole file at once
    /// at a client's write.
    func trimAfterRun(store: PersistentStore, budget: Duration, pause: Duration, clientsActive: () -> Bool,
                      checkpoint: () -> Void, patience: Duration = .seconds(300)) {
        var waited = Duration.zero
        var wait = Duration.milliseconds(50)
        // The run has just ended, most often because a client came: quiet only once seen so.
        var lastSeenBusy = ContinuousClock.now
        let began = ContinuousClock.now
        while !closed.load(ordering: .relaxed), !isRunning, isEngaged {
            let now = ContinuousClock.now
            if clientsActive() { lastSeenBusy = now }
            if now - lastSeenBusy < Self.quietBeforeCut {
                guard now - began < patience else {
                    store.logger.notice("the WAL stays larger than the journal size limit: clients kept calling", metadata: [
                        "strata.wal_bytes": "\(PersistentStore.fileSize(walPath))",
                    ])
                    return
                }
                Thread.sleep(forTimeInterval: Self.quietSample.seconds)
                continue
            }
            let outcome: Outcome
            do {
                outcome = try store.database.writeWithoutTransaction { db in
                    let outcome = try step(db, budget: budget, restart: true)
                    if outcome == .done { release(db) }
                    return outcome
                }
            } catch {
                store.logger.debug("cutting the WAL back failed; tried again later", metadata: ["strata.error": "\(error)"])
                outcome = .waiting
            }
            switch outcome {
            case .done:
                return
            case .more:
                waited = .zero
                wait = .milliseconds(50)
                Thread.sleep(forTimeInterval: pause.seconds)
            case .waiting:
                guard waited < patience else {
                    store.logger.notice("the WAL stays larger than the journal size limit: a reader held it in use", metadata: [
                        "strata.wal_bytes": "\(PersistentStore.fileSize(walPath))",
                    ])
                    return
                }
                checkpoint()
                Thread.sleep(forTimeInterval: wait.seconds)
                waited += wait
                wait = min(wait * 2, .seconds(1))
            }
        }
    }

    /// The file is within the limit and no run is engaged: the writer cuts the WAL again.
    private func release(_ db: Database) {
        let released = state.withLock { state in
            guard state.runs == 0, state.engaged else { return false }
            state.engaged = false
            return true
        }
        if released { try? db.execute(sql: "PRAGMA journal_size_limit = \(PersistentStore.walSizeLimit)") }
    }
}
