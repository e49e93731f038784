import Foundation
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
    }

    private struct State {
        var items: [ObservedTransaction] = []
        var ending: Ending?
        var writes = 0
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

    /// Queues `items`; false once the inbox has ended (the feed then forgets it).
    func offer(_ items: [ObservedTransaction]) -> Bool {
        guard !items.isEmpty else { return isOpen }
        let (accepted, overflowed) = state.withLock { state -> (Bool, Bool) in
            guard state.ending == nil else { return (false, false) }
            state.items += items
            guard state.items.count > limit else { return (true, false) }
            state.items = []
            state.ending = .overflow
            return (false, true)
        }
        if overflowed { onOverflow(self) }
        if accepted || overflowed { wake.yield() }
        return accepted
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

    /// Everything queued, and the ending once there is one.
    func take() -> (items: [ObservedTransaction], ending: Ending?) {
        state.withLock { state in
            defer { state.items = [] }
            return (state.items, state.ending)
        }
    }

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
