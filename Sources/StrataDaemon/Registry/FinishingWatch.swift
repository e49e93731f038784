import Foundation
import Strata
import Synchronization

/// What the run of deferred work that holds a store is doing, for whoever follows it: the
/// runner publishes each batch's progress and the run's end; `FinishDeferred --wait` follows
/// a run already going (a scheduler turn, or an earlier request whose client detached with
/// Ctrl-C) to its end with the same progress as a run of its own.
final class FinishingWatch: Sendable {
    /// One thing a follower sees.
    enum Event: Sendable {
        /// A batch committed (the latest progress comes first, when there is one).
        case progress(DeferredProgress)
        /// The run ended, with what it did.
        case ended(DeferredWorkRunner.Result)
    }

    private struct State {
        var running = false
        var latest: DeferredProgress?
        var followers: [UUID: AsyncStream<Event>.Continuation] = [:]
    }

    private let state = Mutex(State())

    /// A run claimed the store.
    func began() {
        state.withLock { $0.running = true; $0.latest = nil }
    }

    /// A batch of the run committed.
    func publish(_ progress: DeferredProgress) {
        let followers = state.withLock { state -> [AsyncStream<Event>.Continuation] in
            state.latest = progress
            return Array(state.followers.values)
        }
        for follower in followers { follower.yield(.progress(progress)) }
    }

    /// The run ended: every follower gets its result, and its stream ends.
    func ended(_ result: DeferredWorkRunner.Result) {
        let followers = state.withLock { state -> [AsyncStream<Event>.Continuation] in
            defer { state = State() }
            return Array(state.followers.values)
        }
        for follower in followers {
            follower.yield(.ended(result))
            follower.finish()
        }
    }

    /// Follows the run that holds the store: its latest progress, every batch after, and its
    /// end. Nil when no run holds it (it ended in between: the caller runs the work itself).
    func follow() -> AsyncStream<Event>? {
        let id = UUID()
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let latest = state.withLock { state -> DeferredProgress?? in
            guard state.running else { return .none }
            state.followers[id] = continuation
            return .some(state.latest)
        }
        guard let latest else { return nil }
        if let latest { continuation.yield(.progress(latest)) }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.followers.removeValue(forKey: id) }
        }
        return stream
    }
}
