import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// The one place that decides whether deferred work goes on, gives way to a client, or stops —
/// and how long its next unit of work may hold the store's write lock. Every step of
/// ``DeferredFinisher`` asks it between two units of its work:
///
/// - **before a batch or a step** (``mayGoOn()``): the caller's stop (``FinishOptions/shouldContinue``:
///   the scheduler's gate, the daemon's load, shutdown), cancellation, and the pacing in force
///   (``FinishOptions/livePacing``); then the batch's budget (``beginBatch(counted:lookForOtherWriters:)``):
///   an **idle batch** of ``FinishOptions/idleBatchBudget`` while no client call has been in flight
///   for a while, a normal one of ``FinishOptions/batchBudget`` otherwise;
/// - **during a batch** (``guarding(_:limit:_:)``: SQLite's progress handler, a few thousand
///   instructions apart, and ``checkBetweenStatements()``): a stop (``FinishOptions/interruptRequested``)
///   ends it, so does its time limit (``Overrun``), and during an idle batch so does a client's
///   arrival (``Yielded``): the batch rolls back and the client waits for the stretch between two
///   checks and the rollback, never for the rest of the batch;
/// - **before a unit that no check can cut short** (``fitsUninterruptibly(_:)``): one statement
///   over many rows (the rest of a dropped table in one `DROP TABLE`, SQLite's own `CREATE
///   INDEX` whose sorter sets up its merge in one step), a commit, an `ftruncate` of the WAL, a
///   step of the vacuum. A client that arrives during it waits for all of it, so it is
///   admitted only when predicted to fit ``uninterruptibleBudget`` — one
///   ``FinishOptions/batchBudget`` — and units sized adaptively aim at ``uninterruptibleTarget``
///   (60 % of it, as batches do), **idle batch or not**: an idle batch is long only because a
///   client's arrival ends it at its next check.
///
/// The threads beside the writer (the index build's sort into its buffer, the check of a
/// rewrite's shadow beside the index builds) hold no lock; they ask ``mayGoOn()`` between their
/// ranges and ``stopRequested()`` during them.
///
/// This is the promise of docs/Scheduler.md ("The promise comes first"): when a client call
/// arrives or the caller says stop, the work in flight ends within about one `batch_budget`,
/// whatever the step.
final class StepAside: Sendable {
    /// A batch that ran past its time limit: rolled back; run a smaller one.
    struct Overrun: Error {}
    /// An idle batch that gave way to a client's arrival: rolled back; run one of the normal size.
    struct Yielded: Error {}

    private let options: FinishOptions
    private let arrivals: ArrivalChecks?
    private let state: Mutex<State>

    private struct State {
        /// The pacing taken from ``FinishOptions/livePacing`` (nil: the options' own).
        var live: FinishPacing?
        /// The batch in flight is an idle batch.
        var idle = false
        /// Batches begun as idle batches; idle batches that gave way.
        var idleBatches = 0
        var yielded = 0
        /// How long the clients must have been quiet before an idle batch begins (nil: one
        /// idle budget); doubled by each idle batch that gives way, halved by each that ends.
        var quietNeeded: Duration?
        /// The writer's `PRAGMA data_version` when it last looked, and when it last saw it
        /// change (another process committed).
        var dataVersion: Int?
        var externalWrite: ContinuousClock.Instant?
        /// The unit in flight (``guarding(_:limit:_:)``).
        var unit = Unit()
        /// A stop interrupted a unit: the run stops.
        var fired = false
    }

    private struct Unit {
        var armed = false
        var started = ContinuousClock.now
        var lastCheck = ContinuousClock.now
        var deadline: ContinuousClock.Instant?
        var overran = false
        var yieldsToArrivals = false
        var yielded = false
    }

    /// - Parameter arrivals: told of every check at which a client's arrival ends a unit, for
    ///   the longest wait a client can meet (``LockHolds``).
    init(options: FinishOptions, arrivals: ArrivalChecks? = nil) {
        self.options = options
        self.arrivals = arrivals
        self.state = Mutex(State())
    }

    // MARK: - Pacing in force

    /// The batch budget and cost delay in force: the options', or what ``FinishOptions/livePacing``
    /// last gave.
    var pacing: FinishPacing {
        state.withLock { $0.live } ?? FinishPacing(batchBudget: options.batchBudget, pauseBetweenBatches: options.pauseBetweenBatches)
    }

    /// Takes the pacing ``FinishOptions/livePacing`` gives now; returns it with the previous
    /// one when it changed (the finisher says so in the store's log). A zero budget would stop
    /// every batch at once, so the smallest budget is a millisecond; a cost delay is never negative.
    func refreshPacing() -> (next: FinishPacing, previous: FinishPacing)? {
        guard let live = options.livePacing?() else { return nil }
        let next = FinishPacing(batchBudget: max(.milliseconds(1), live.batchBudget), pauseBetweenBatches: max(.zero, live.pauseBetweenBatches))
        let previous = pacing
        guard next != previous else { return nil }
        state.withLock { $0.live = next }
        return (next, previous)
    }

    // MARK: - Between two units

    /// Whether the work goes on: not cancelled, and the caller does not say stop. Asked before
    /// every batch and step, between the slices of the cost delay, and by the threads beside
    /// the writer between their ranges. Never sleeps.
    func mayGoOn() -> Bool {
        !Task.isCancelled && options.shouldContinue()
    }

    /// Whether the caller asks the work in flight to stop now (cheap; never sleeps): the
    /// check of the threads beside the writer during a range.
    func stopRequested() -> Bool { options.interruptRequested() }

    /// The budget of the batch in flight: ``FinishOptions/idleBatchBudget`` for an idle batch,
    /// the batch budget in force otherwise.
    var budget: Duration { isIdle ? options.idleBatchBudget : pacing.batchBudget }

    /// Whether the batch in flight is an idle batch.
    var isIdle: Bool { state.withLock { $0.idle } }

    /// How long a unit that no check can cut short may be predicted to hold the write lock: the
    /// batch budget in force, idle batch or not (the promise: a client waits about one batch).
    var uninterruptibleBudget: Duration { pacing.batchBudget }

    /// What units that no check can cut short and whose size adapts to their measured time (a
    /// vacuum's steps, its commit, a cut of the WAL) aim at: 60 % of the batch budget, the
    /// target batches are sized for, so that an error of prediction stays within the budget.
    var uninterruptibleTarget: Duration { pacing.batchBudget * 0.6 }

    /// Whether a unit that no check can cut short, predicted to take `predicted`, may run now.
    func fitsUninterruptibly(_ predicted: Duration) -> Bool { predicted <= uninterruptibleBudget }

    /// Whether clients may be waiting for the store at all (false when the caller cannot tell:
    /// every batch is then a normal one).
    var watchesClients: Bool { options.clientsActive != nil && options.idleBatchBudget > options.batchBudget }

    /// Picks the next batch's budget: idle while no client call is in flight
    /// (``FinishOptions/clientsActive``) and none was for the quiet spell needed
    /// (``FinishOptions/clientsQuiet``, one idle budget, doubled by each idle batch that gave
    /// way), nor any other process's commit (`lookForOtherWriters` reads `PRAGMA data_version`
    /// on the writer and calls ``noteDataVersion(_:)``). Returns the factor by which the batch
    /// size is rescaled when the budget changed (the first batch after a client's arrival is
    /// sized for the normal budget at once), nil when it did not. A `counted` batch (a write
    /// batch) adds to ``idleBatches`` when it begins idle.
    func beginBatch(counted: Bool = true, lookForOtherWriters: () -> Void) -> Double? {
        var idle = false
        if watchesClients, let active = options.clientsActive, !active() {
            let needed = quietNeeded
            idle = options.clientsQuiet.map { $0() >= needed } ?? true
            if idle {
                lookForOtherWriters()
                idle = state.withLock { $0.externalWrite }.map { ContinuousClock.now - $0 >= needed } ?? true
            }
        }
        let ratio = pacing.batchBudget / options.idleBatchBudget
        return state.withLock { state in
            if idle, counted { state.idleBatches += 1 }
            guard idle != state.idle else { return nil }
            state.idle = idle
            return idle ? 1 / ratio : ratio
        }
    }

    /// How long the clients must have been quiet before the next idle batch.
    var quietNeeded: Duration { state.withLock { $0.quietNeeded } ?? options.idleBatchBudget }

    /// After an idle batch that ran to its end: the wait for the next one shrinks back.
    func completedIdleBatch() {
        let budget = options.idleBatchBudget
        state.withLock { state in
            guard state.idle, let needed = state.quietNeeded else { return }
            state.quietNeeded = needed / 2 <= budget ? nil : needed / 2
        }
    }

    /// After an idle batch that gave way to a client (rolled back): the next batch is a normal
    /// one, and the next idle batch waits for twice the quiet. Returns the factor by which to
    /// rescale the batch size (nil: it was normal).
    @discardableResult
    func gaveWay() -> Double? {
        let doubled = min(quietNeeded * 2, options.idleBatchBudget * 32)
        let ratio = pacing.batchBudget / options.idleBatchBudget
        return state.withLock { state in
            state.yielded += 1
            state.quietNeeded = doubled
            guard state.idle else { return nil }
            state.idle = false
            return ratio
        }
    }

    /// Whether a client call is in flight now (false when the caller cannot tell).
    var clientArrived: Bool { options.clientsActive?() ?? false }

    /// Notes the writer's `PRAGMA data_version`: a change since it last looked is a commit by
    /// another connection (another process writing the store), which counts as a client's call.
    func noteDataVersion(_ version: Int) {
        state.withLock { state in
            if let last = state.dataVersion, last != version { state.externalWrite = .now }
            state.dataVersion = version
        }
    }

    /// Idle batches begun, and those that gave way.
    var idleBatches: Int { state.withLock { $0.idleBatches } }
    var yielded: Int { state.withLock { $0.yielded } }

    // MARK: - During a unit

    /// Whether a stop interrupted a unit (the run stops).
    var fired: Bool { state.withLock { $0.fired } }

    /// Runs `body` on `db` with SQLite's progress handler asking ``shouldInterrupt()`` a few
    /// thousand instructions apart; `body` calls `disarm()` when it is about to commit (a
    /// commit is never interrupted). A stop aborts the unit (`SQLITE_INTERRUPT`, rolled back by
    /// the caller); so does running past `limit` (``Overrun``) and, during an idle batch, a
    /// client's arrival (``Yielded``).
    func guarding<T>(_ db: Database, limit: Duration? = nil, _ body: (_ disarm: () -> Void) throws -> T) throws -> T {
        let now = ContinuousClock.now
        state.withLock { state in
            state.unit = Unit(armed: true, started: now, lastCheck: now, deadline: limit.map { now + $0 }, yieldsToArrivals: state.idle && watchesClients)
        }
        let context = Unmanaged.passRetained(self)
        sqlite3_progress_handler(db.sqliteConnection, 4_000, { context in
            guard let context else { return 0 }
            return Unmanaged<StepAside>.fromOpaque(context).takeUnretainedValue().shouldInterrupt() ? 1 : 0
        }, context.toOpaque())
        defer {
            CallDeadline.install(on: db)   // the connection's own handler (calls' deadlines) again
            context.release()
            state.withLock { $0.unit.armed = false }
        }
        do {
            return try body { self.state.withLock { $0.unit.armed = false } }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT && state.withLock({ $0.unit.overran }) {
            throw Overrun()
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT && state.withLock({ $0.unit.yielded }) {
            throw Yielded()
        }
    }

    /// The check a unit makes between two of its statements. SQLite counts a statement's
    /// instructions from zero, so a unit of many short statements (the vacuum's `PRAGMA
    /// incremental_vacuum(N)` steps: a few instructions, each moving pages) may never reach
    /// the progress handler's interval; such a unit calls this between them.
    ///
    /// - Throws: `SQLITE_INTERRUPT`, as an interrupted statement would (the unit rolls back).
    func checkBetweenStatements() throws {
        guard shouldInterrupt() else { return }
        throw DatabaseError(resultCode: .SQLITE_INTERRUPT, message: "interrupted between two statements of a batch")
    }

    /// The check in flight: a client's arrival during an idle unit (at every check), the time
    /// limit, and the caller's stop (at most every millisecond).
    private func shouldInterrupt() -> Bool {
        let yields = state.withLock { $0.unit.armed && !$0.fired && !$0.unit.overran && !$0.unit.yielded && $0.unit.yieldsToArrivals }
        if yields {
            arrivals?.checked()
            if clientArrived {
                state.withLock { $0.unit.yielded = true }
                return true
            }
        }
        let due = state.withLock { state -> Bool in
            guard state.unit.armed, !state.fired, !state.unit.overran, !state.unit.yielded else { return false }
            let now = ContinuousClock.now
            if let deadline = state.unit.deadline, now > deadline {
                state.unit.overran = true
                return false
            }
            guard now - state.unit.lastCheck >= .milliseconds(1) else { return false }
            state.unit.lastCheck = now
            return true
        }
        if state.withLock({ $0.unit.overran || $0.unit.yielded }) { return true }
        guard due, stopRequested() else { return false }
        state.withLock { $0.fired = true }
        return true
    }

    /// Whether the unit in flight should end at once where it waits outside SQLite (a merge
    /// batch waiting for its read-ahead, ``SortedRunMerge/Overlap``): a stop; a client's arrival
    /// during an idle unit; a client waiting once a normal unit has used its budget.
    func unitShouldEnd() -> Bool {
        if stopRequested() { return true }
        let (idle, elapsed) = state.withLock { ($0.unit.yieldsToArrivals, ContinuousClock.now - $0.unit.started) }
        if idle { arrivals?.checked() }
        return clientArrived && (idle || elapsed >= budget)
    }

    /// Whether `error` is an interruption a stop caused.
    func caused(_ error: any Error) -> Bool {
        guard fired, let error = error as? DatabaseError else { return false }
        return error.resultCode == .SQLITE_INTERRUPT
    }
}
