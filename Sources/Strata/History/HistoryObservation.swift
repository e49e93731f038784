import Foundation

/// The transactions of a store as they commit (``PersistentStore/changes(since:entities:)``):
/// first those after the `since` token, then each new one. Each iterator reads the store
/// page by page and keeps at most one page in memory, so a slow consumer costs nothing but
/// its own lag. Iteration ends when the task is cancelled or the store closes.
public struct HistoryObservation: AsyncSequence, Sendable {
    /// What the sequence yields.
    public typealias Element = HistoryTransaction

    let store: PersistentStore
    let since: Int64?
    let entities: Set<String>?

    /// An iterator, subscribed to the store's commits from this moment (a nil `since` is
    /// resolved to the latest token now).
    public func makeAsyncIterator() -> Iterator {
        Iterator(store: store, since: since, entities: entities)
    }

    /// Reads pages of history as the store's commits wake it.
    public struct Iterator: AsyncIteratorProtocol {
        private let store: PersistentStore
        private let entities: Set<String>?
        private var cursor: Int64?
        private var buffer: [HistoryTransaction] = []
        private let subscription: Subscription
        private var wakeups: AsyncStream<Int64>.Iterator

        init(store: PersistentStore, since: Int64?, entities: Set<String>?) {
            self.store = store
            self.entities = entities
            // "From now on" means from when the iterator was made, not from its first next().
            self.cursor = since ?? (try? store.latestHistoryToken())
            let (id, stream) = store.historyState.subscribe()
            self.subscription = Subscription(state: store.historyState, id: id)
            self.wakeups = stream.makeAsyncIterator()
        }

        /// The next transaction; nil once the task is cancelled or the store closed.
        ///
        /// - Throws: ``HistoryError`` (an expired or invalid `since`, an unknown entity, a store failure).
        public mutating func next() async throws -> HistoryTransaction? {
            while true {
                if Task.isCancelled { return nil }
                if !buffer.isEmpty { return buffer.removeFirst() }
                if cursor == nil { cursor = try store.latestHistoryToken() }
                let page = try store.history(since: cursor!, entities: entities, limit: 100)
                cursor = page.next
                buffer = page.transactions
                if buffer.isEmpty, page.next >= page.latest {
                    guard await wakeups.next() != nil else { return nil }
                }
            }
        }
    }

    /// Ends the subscription when the last copy of an iterator goes away.
    final class Subscription: Sendable {
        let state: HistoryState
        let id: UInt64
        init(state: HistoryState, id: UInt64) {
            self.state = state
            self.id = id
        }
        deinit { state.unsubscribe(id) }
    }
}
