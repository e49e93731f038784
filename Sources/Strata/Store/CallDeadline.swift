import Foundation
import GRDB
import GRDBSQLite
import StrataUnits

/// A time limit on one call's work in SQLite: statements and the `MATCHES` regular
/// expressions they evaluate stop once it has passed.
///
/// Set it on an ``ObjectContext`` (``ObjectContext/deadline``); every fetch, count and save of
/// that context then runs under it. SQLite checks it through a progress handler every
/// ``progressInterval`` virtual-machine steps (installed on every Strata connection), ICU every
/// few thousand backtracking steps of a `MATCHES` pattern (`strata_matches`). Past the
/// deadline the statement is interrupted (a write transaction rolls back: nothing is
/// written) and the call throws ``StoreError`` with code ``StoreError/Code/callTimeout``. The
/// connection stays usable: the next call starts afresh.
///
/// ```swift
/// let context = ObjectContext(store: store)
/// context.deadline = CallDeadline(timeout: .seconds(5), limit: "limits.call_timeout")
/// let slow = try context.fetch("Item", where: "name MATCHES %@", "(a+)+b")   // throws callTimeout after 5s
/// ```
public struct CallDeadline: Sendable, Hashable {
    /// How long the call may run.
    public let timeout: Duration
    /// When it must stop.
    public let instant: ContinuousClock.Instant
    /// The name of the setting that chose ``timeout`` (for messages), e.g. `limits.call_timeout`.
    public let limit: String

    /// A deadline `timeout` from now.
    public init(timeout: Duration, limit: String = "call_timeout") {
        self.timeout = timeout
        self.instant = ContinuousClock.now + timeout
        self.limit = limit
    }

    /// SQLite virtual-machine steps between two checks of the clock.
    public static let progressInterval: Int32 = 1000

    /// Runs `body` (on the connection's thread, inside a GRDB access closure) under `deadline`:
    /// SQLite and ICU on this thread stop once it passes. Errors thrown after the deadline
    /// stopped the work become ``StoreError/Code/callTimeout`` for `path`; others pass through.
    static func enforce<T>(_ deadline: CallDeadline?, path: String, _ body: () throws -> T) throws -> T {
        guard let deadline else { return try body() }
        let watch = DeadlineWatch(deadline.instant)
        let previous = pthread_getspecific(watchKey)
        pthread_setspecific(watchKey, Unmanaged.passUnretained(watch).toOpaque())
        defer { pthread_setspecific(watchKey, previous) }
        do {
            return try withExtendedLifetime(watch) { try body() }
        } catch {
            guard watch.expired else { throw error }
            throw deadline.error(path: path)
        }
    }

    /// The error a call stopped by this deadline throws.
    func error(path: String) -> StoreError {
        StoreError(.callTimeout, path: path, "the call ran longer than \(limit) (\(Self.text(timeout))) and was stopped; nothing it would have written was kept. "
            + "Narrow the predicate (an indexed attribute, a shorter MATCHES pattern without nested repetition), page with a limit, or raise \(limit)")
    }

    /// `500ms`, `5s`.
    static func text(_ duration: Duration) -> String {
        let milliseconds = duration.wholeMilliseconds
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000)s" : "\(milliseconds)ms"
    }

    // MARK: - Checks on the connection's thread

    /// Whether a deadline is set on this thread.
    static var isSetOnThisThread: Bool { pthread_getspecific(watchKey) != nil }

    /// Whether the deadline set on this thread (if any) has passed; marks it expired when so.
    static func hasExpiredOnThisThread() -> Bool {
        guard let raw = pthread_getspecific(watchKey) else { return false }
        return Unmanaged<DeadlineWatch>.fromOpaque(raw).takeUnretainedValue().check()
    }

    /// Installs the progress handler on a connection (``StoreConnection/prepare(_:)``).
    static func install(on db: Database) {
        sqlite3_progress_handler(db.sqliteConnection, progressInterval, { _ in
            CallDeadline.hasExpiredOnThisThread() ? 1 : 0
        }, nil)
    }
}

/// The deadline of the call running on one thread, and whether it fired.
///
/// Only ever touched by the thread that set it (``CallDeadline/enforce(_:path:_:)``), so no lock.
private final class DeadlineWatch {
    let instant: ContinuousClock.Instant
    private(set) var expired = false

    init(_ instant: ContinuousClock.Instant) { self.instant = instant }

    func check() -> Bool {
        if !expired, ContinuousClock.now >= instant { expired = true }
        return expired
    }
}

/// The thread-specific slot holding the running call's ``DeadlineWatch`` (unretained: the
/// frame of ``CallDeadline/enforce(_:path:_:)`` keeps it alive while it is set).
private let watchKey: pthread_key_t = {
    var key = pthread_key_t()
    precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
    return key
}()
