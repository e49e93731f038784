import Foundation
import Synchronization

/// What one open store keeps in memory about its change history: the writer connection's last
/// `PRAGMA data_version` and token (to tell another process's writes apart), the name ids
/// already known, and the in-process observers to wake when a transaction commits.
final class HistoryState: Sendable {
    struct NameKey: Hashable, Sendable {
        var entity: String
        var property: String
    }

    struct Tracking: Sendable {
        /// The writer's `PRAGMA data_version` after its last recorded commit (nil before the first).
        var dataVersion: Int64?
        /// The latest token the writer saw.
        var latestToken: Int64 = 0
        /// The purge horizon the writer last saw (``HistorySchema/purgedThroughKey``): another
        /// Strata process's purge moves it, and is not a gap.
        var purgedThrough: Int64 = 0
        /// Name ids, by name.
        var names: [NameKey: Int64] = [:]
        /// Whether the store has the history tables (created at a writable open).
        var tablesExist = false
    }

    let tracking = Mutex(Tracking())
    private let observers = Mutex<[UInt64: AsyncStream<Int64>.Continuation]>([:])
    private let nextObserver = Atomic<UInt64>(0)

    /// Wakes every observer: `token` committed.
    func publish(_ token: Int64) {
        for continuation in observers.withLock({ Array($0.values) }) { continuation.yield(token) }
    }

    /// A stream of committed tokens (only the newest kept while the observer is busy: it reads
    /// the store for what it missed), and the id to end it with.
    func subscribe() -> (id: UInt64, tokens: AsyncStream<Int64>) {
        let id = nextObserver.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream<Int64>.makeStream(bufferingPolicy: .bufferingNewest(1))
        observers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        return (id, stream)
    }

    func unsubscribe(_ id: UInt64) {
        let continuation = observers.withLock { $0.removeValue(forKey: id) }
        continuation?.finish()
    }

    /// Ends every observation (the store closes).
    func finishAll() {
        for continuation in observers.withLock({ observers in defer { observers = [:] }; return Array(observers.values) }) {
            continuation.finish()
        }
    }

    /// How many in-process observers are subscribed.
    var observerCount: Int { observers.withLock { $0.count } }
}
