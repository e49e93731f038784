import Foundation
import StrataVarlink
import Strata
import Synchronization

/// One transaction as the ``ObserverFeed`` hands it to every observer: read once from the
/// store, encoded once as an `Observe` reply.
struct ObservedTransaction: Sendable {
    /// The transaction, for observers that filter it.
    let transaction: HistoryTransaction
    /// The whole transaction as one `Observe` reply message (no NUL), for those that do not.
    let message: Data

    var token: Int64 { transaction.token }
}

/// What one `Observe` call has been handed by its store's ``ObserverFeed`` and not yet sent:
/// a queue bounded by `limits.max_observer_queue` transactions. Past the limit the queue is
/// dropped (memory stays bounded), the observer is marked overflowed, and `onOverflow` runs
/// (the daemon closes the connection after a grace period, in case the client does not read).
///
/// An observer that takes every transaction as the feed encoded it (no filter) and has caught
/// up gives the inbox a direct writer (``writeDirectly(with:)``): while nothing waits in the
/// queue and the observer is not sending, the feed's offer writes the shared bytes to the
/// connection itself, if the connection takes them now, and the observer's task is not woken
/// at all. Otherwise (a client that reads slowly fills its connection's buffer) the offer
/// queues, and the observer sends and waits as before: the order is kept, since the direct
/// write happens under the inbox's lock and only when nothing older is queued or being sent.
final class ObserverInbox: Sendable {
    /// Why an inbox takes nothing more.
    enum Ending: Sendable {
        /// More than ``limit`` transactions were waiting: the observer gets `ObserverOverflow`.
        case overflow
        /// The feed could not read the store (the error, as the observer should report it).
        case failed(any Error)
        /// The store closed.
        case closed
        /// The observer went away.
        case cancelled
        /// The daemon is shutting down, or the peer closed its connection
        /// (``VarlinkCallEnding``): the observer ends now.
        case interrupted(VarlinkCallEnding.Reason)
    }

    private struct State {
        var items: [ObservedTransaction] = []
        var ending: Ending?
        var writes = 0
        /// Writes the feed's shared bytes to the connection now, or says it cannot.
        var direct: (@Sendable (Data) -> Bool)?
        /// The observer's task holds taken items it has not finished sending.
        var sending = false
        /// The last token written directly.
        var delivered: Int64 = 0
    }

    /// Most transactions that may wait.
    let limit: Int
    /// Wakes the observer when items or an ending arrive (one wake-up stands for any number).
    let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let state = Mutex(State())
    private let onOverflow: @Sendable (ObserverInbox) -> Void

    /// - Parameter onOverflow: runs once, when the inbox overflows.
    init(limit: Int, onOverflow: @escaping @Sendable (ObserverInbox) -> Void) {
        self.limit = limit
        self.onOverflow = onOverflow
        (wakeups, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Lets the feed write to the connection itself (see the type's notes); `write` queues the
    /// bytes on the connection if it takes them now and says whether it did.
    func writeDirectly(with write: @escaping @Sendable (Data) -> Bool) {
        state.withLock { $0.direct = write }
    }

    /// Hands over `items` (`joined`: their messages joined by NUL): written directly when the
    /// observer allows it and the connection takes them now, queued otherwise; false once the
    /// inbox has ended (the feed then forgets it).
    func offer(_ items: [ObservedTransaction], joined: Data) -> Bool {
        guard let last = items.last else { return isOpen }
        enum Outcome { case ended, written, queued, overflowed }
        let outcome = state.withLock { state -> Outcome in
            guard state.ending == nil else { return .ended }
            if let direct = state.direct, state.items.isEmpty, !state.sending, direct(joined) {
                state.delivered = last.token
                state.writes += 1
                return .written
            }
            state.items += items
            guard state.items.count > limit else { return .queued }
            state.items = []
            state.ending = .overflow
            return .overflowed
        }
        switch outcome {
        case .ended: return false
        case .written: return true
        case .queued: wake.yield(); return true
        case .overflowed: onOverflow(self); wake.yield(); return false
        }
    }

    /// Ends the inbox (the first ending wins); what was queued can still be taken.
    func end(_ ending: Ending) {
        state.withLock { state in
            if state.ending == nil { state.ending = ending }
        }
        wake.yield()
        if case .cancelled = ending { wake.finish() }
    }

    /// Whether the feed should keep handing it transactions.
    var isOpen: Bool { state.withLock { $0.ending == nil } }

    /// Everything queued, and the ending once there is one; until ``sent()``, the feed queues
    /// instead of writing directly.
    func take() -> (items: [ObservedTransaction], ending: Ending?) {
        state.withLock { state in
            defer { state.items = [] }
            state.sending = !state.items.isEmpty
            return (state.items, state.ending)
        }
    }

    /// The observer has sent what it took.
    func sent() {
        state.withLock { $0.sending = false }
    }

    /// The last token the feed wrote directly (0: none).
    var delivered: Int64 { state.withLock { $0.delivered } }

    /// Counts a write the client took: an overflowed observer that still reads is given time
    /// to read its `ObserverOverflow`.
    func wrote() {
        state.withLock { $0.writes += 1 }
    }

    /// Writes the client took so far, and whether the observer has ended (its call returned).
    var progress: (writes: Int, finished: Bool) {
        state.withLock { state in
            if case .cancelled? = state.ending { return (state.writes, true) }
            return (state.writes, false)
        }
    }

    /// Whether it overflowed (checked while the observer catches up by itself).
    var overflowed: Bool {
        state.withLock { state in
            if case .overflow? = state.ending { return true }
            return false
        }
    }
}
