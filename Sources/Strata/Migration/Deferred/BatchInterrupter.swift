import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// Lets a stop interrupt a batch in flight instead of waiting for its end.
///
/// While a batch runs on the store's writer connection, a progress handler asks
/// ``FinishOptions/interruptRequested`` about every millisecond; when it answers true, SQLite
/// aborts the statement (`SQLITE_INTERRUPT`), the batch's transaction rolls back — its progress
/// with it — and the run stops: a pause takes a millisecond or two, whatever the batch. The
/// handler is installed inside the batch's exclusive use of the writer connection and removed
/// before the connection serves anyone else, and it never fires once the batch is committing.
final class BatchInterrupter: Sendable {
    private let check: @Sendable () -> Bool
    private let arrivals: ArrivalChecks?
    private let state = Mutex<State>(State())

    private struct State {
        var armed = false
        var lastCheck = ContinuousClock.now
        var fired = false
        var deadline: ContinuousClock.Instant?
        var overran = false
        var yieldIf: (@Sendable () -> Bool)?
        var yielded = false
    }

    /// A batch that ran past its deadline: rolled back; run a smaller one.
    struct Overrun: Error {}

    /// An idle batch (one that may run past the normal budget while no client call is in
    /// flight) that gave way to a client's arrival: rolled back; run one of the normal size.
    struct Yielded: Error {}

    /// - Parameter arrivals: told of every check at which a client's arrival ends the batch
    ///   (an idle batch's), for the longest wait a client can meet (``LockHolds``).
    init(_ check: @escaping @Sendable () -> Bool, arrivals: ArrivalChecks? = nil) {
        self.check = check
        self.arrivals = arrivals
    }

    /// Whether a batch was interrupted (the run stops).
    var fired: Bool { state.withLock { $0.fired } }

    /// Runs `body` on `db` with the handler installed; `body` calls `disarm()` when it is about
    /// to commit. A batch still running after `limit` is aborted too, and ``Overrun`` thrown:
    /// a slow disk or a descheduled thread then costs one rolled-back batch, not a long hold of
    /// the write lock. With `yieldIf` (an idle batch), the batch is aborted too as soon as
    /// `yieldIf` answers true — checked at every progress callback, a few thousand SQLite
    /// instructions apart — and ``Yielded`` thrown: a client that arrives waits for the
    /// rollback, not for the rest of a long batch.
    func guarding<T>(_ db: Database, limit: Duration? = nil, yieldIf: (@Sendable () -> Bool)? = nil,
                     _ body: (_ disarm: () -> Void) throws -> T) throws -> T {
        let now = ContinuousClock.now
        state.withLock {
            $0.armed = true; $0.lastCheck = now; $0.deadline = limit.map { now + $0 }; $0.overran = false
            $0.yieldIf = yieldIf; $0.yielded = false
        }
        let context = Unmanaged.passRetained(self)
        sqlite3_progress_handler(db.sqliteConnection, 4_000, { context in
            guard let context else { return 0 }
            return Unmanaged<BatchInterrupter>.fromOpaque(context).takeUnretainedValue().shouldInterrupt() ? 1 : 0
        }, context.toOpaque())
        defer {
            CallDeadline.install(on: db)   // the connection's own handler (calls' deadlines) again
            context.release()
            state.withLock { $0.armed = false; $0.yieldIf = nil }
        }
        do {
            return try body { self.state.withLock { $0.armed = false } }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT && state.withLock({ $0.overran }) {
            throw Overrun()
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT && state.withLock({ $0.yielded }) {
            throw Yielded()
        }
    }

    /// The progress handler's check, made by a batch between two of its statements. SQLite
    /// counts a statement's instructions from zero, so a batch of many short statements (the
    /// vacuum's `PRAGMA incremental_vacuum(64)` steps: a few instructions, each moving pages)
    /// may never reach the handler's interval; such a batch calls this between them.
    ///
    /// - Throws: `SQLITE_INTERRUPT`, as an interrupted statement would (the batch rolls back).
    func checkBetweenStatements() throws {
        guard shouldInterrupt() else { return }
        throw DatabaseError(resultCode: .SQLITE_INTERRUPT, message: "interrupted between two statements of a batch")
    }

    private func shouldInterrupt() -> Bool {
        let yieldIf = state.withLock { state in state.armed && !state.fired && !state.overran && !state.yielded ? state.yieldIf : nil }
        if let yieldIf {
            arrivals?.checked()
            if yieldIf() {
                state.withLock { $0.yielded = true }
                return true
            }
        }
        let due = state.withLock { state -> Bool in
            guard state.armed, !state.fired, !state.overran, !state.yielded else { return false }
            let now = ContinuousClock.now
            if let deadline = state.deadline, now > deadline {
                state.overran = true
                return false
            }
            guard now - state.lastCheck >= .milliseconds(1) else { return false }
            state.lastCheck = now
            return true
        }
        if state.withLock({ $0.overran || $0.yielded }) { return true }
        guard due, check() else { return false }
        state.withLock { $0.fired = true }
        return true
    }

    /// Whether `error` is an interruption this interrupter caused.
    func caused(_ error: any Error) -> Bool {
        guard fired, let error = error as? DatabaseError else { return false }
        return error.resultCode == .SQLITE_INTERRUPT
    }
}
