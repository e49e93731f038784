import Synchronization
import StrataUnits

/// One store's request load over a sliding window: requests started and the time-averaged
/// number of open transactions, kept in 100 ms buckets over the last five minutes.
///
/// ``HostedStore/use(_:)`` calls ``begin(at:)`` and ``end(at:)`` around every request (each
/// runs in one transaction); the idle scheduler reads ``snapshot(window:at:)``. Deferred work
/// does not go through `use`, so it never counts as load.
public final class StoreLoad: Sendable {
    /// Width of one bucket.
    public static let bucket: Duration = .milliseconds(100)
    /// The short window whose rate counts when it is higher than `load_window`'s: load that
    /// returns is seen within a couple of requests.
    public static let burstWindow: Duration = .milliseconds(250)
    /// The longest window that can be asked for.
    public static let horizon: Duration = .seconds(300)
    static let capacity = 3000

    /// The load over one window.
    public struct Snapshot: Sendable, Hashable {
        /// Requests started per second.
        public var requestsPerSecond: Double
        /// Mean number of open transactions (the share of the window a transaction was open,
        /// summed over concurrent ones).
        public var openTransactions: Double
        /// Transactions open right now.
        public var openNow: Int
    }

    private struct Bucket {
        var index: Int64 = -1
        var requests = 0
        var openNanoseconds: Int64 = 0
    }

    private struct State {
        var buckets = [Bucket](repeating: Bucket(), count: StoreLoad.capacity)
        var open = 0
        var lastChange: ContinuousClock.Instant
        var total = 0
    }

    private let origin: ContinuousClock.Instant
    private let state: Mutex<State>

    /// - Parameter origin: the start of bucket 0 (tests pass their fake clock's origin).
    public init(origin: ContinuousClock.Instant = .now) {
        self.origin = origin
        state = Mutex(State(lastChange: origin))
    }

    /// A request (and its transaction) starts.
    public func begin(at now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            accumulate(&state, to: now)
            state.open += 1
            state.total += 1
            let index = bucketIndex(now)
            let slot = Int(index % Int64(Self.capacity))
            if state.buckets[slot].index != index { state.buckets[slot] = Bucket(index: index) }
            state.buckets[slot].requests += 1
        }
    }

    /// The request ends.
    public func end(at now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            accumulate(&state, to: now)
            state.open = max(0, state.open - 1)
        }
    }

    /// Requests since the store was opened.
    public var totalRequests: Int { state.withLock { $0.total } }

    /// The load over the last `window` (at most ``horizon``), ending at `now`.
    public func snapshot(window: Duration, at now: ContinuousClock.Instant = .now) -> Snapshot {
        state.withLock { state in
            accumulate(&state, to: now)
            let current = bucketIndex(now)
            let count = Int64(max(1, min(Self.capacity, Int((window / Self.bucket).rounded(.up)))))
            var requests = 0
            var open: Int64 = 0
            for index in max(0, current - count + 1)...current {
                let bucket = state.buckets[Int(index % Int64(Self.capacity))]
                guard bucket.index == index else { continue }
                requests += bucket.requests
                open += bucket.openNanoseconds
            }
            // The window: whole buckets before the current one, plus the current one so far.
            let bucketNanos = Self.bucket.nanoseconds
            let intoCurrent = max(0, (now - origin).nanoseconds - current * bucketNanos)
            let span = Double(min(count - 1, current) * bucketNanos + max(intoCurrent, 1_000_000)) / 1e9
            return Snapshot(requestsPerSecond: Double(requests) / span, openTransactions: Double(open) / 1e9 / span, openNow: state.open)
        }
    }

    // MARK: - Buckets

    private func bucketIndex(_ instant: ContinuousClock.Instant) -> Int64 {
        max(0, (instant - origin).nanoseconds / Self.bucket.nanoseconds)
    }

    /// Adds the open transactions' time since the last change to the buckets it spans.
    private func accumulate(_ state: inout State, to now: ContinuousClock.Instant) {
        defer { if now > state.lastChange { state.lastChange = now } }
        guard state.open > 0, now > state.lastChange else { return }
        let bucketNanos = Self.bucket.nanoseconds
        var t = max((state.lastChange - origin).nanoseconds, (now - origin).nanoseconds - Self.horizon.nanoseconds)
        let end = (now - origin).nanoseconds
        while t < end {
            let index = max(0, t / bucketNanos)
            let segmentEnd = min(end, (index + 1) * bucketNanos)
            let slot = Int(index % Int64(Self.capacity))
            if state.buckets[slot].index != index { state.buckets[slot] = Bucket(index: index) }
            state.buckets[slot].openNanoseconds += Int64(state.open) * (segmentEnd - t)
            t = segmentEnd
        }
    }
}
