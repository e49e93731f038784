import Foundation
import Metrics
import StrataVarlink
import Synchronization

/// Who calls each store at which model version: one entry per store, version and data-socket
/// connection, with the peer, the number of calls and the last one. A version with a call
/// within `rollout.grace` is *active*: the deferred cleanup that would destroy what it still
/// uses waits for it (``HostedVersions``). Kept across reloads (a store's clients outlive its
/// reopening at a new version: that is when their version becomes the older one).
///
/// Each call costs one lock and a dictionary update; `strata_client_calls_total{store,version}`
/// counts them.
public final class ClientVersions: Sendable {
    /// One connection's calls to a store at one version.
    public struct Entry: Sendable {
        public var store: String
        public var version: String
        /// Whether the calls named the version (otherwise: the store's version when they came).
        public var named: Bool
        public var connection: UInt64
        public var peer: PeerIdentity?
        /// The peer's user name, looked up once.
        public var user: String?
        public var calls: Int
        public var last: ContinuousClock.Instant
        public var lastDate: Date
        /// Whether the connection is still open.
        let open: @Sendable () -> Bool
        /// Whether the connection is still open now.
        public var isOpen: Bool { open() }
    }

    private struct Key: Hashable {
        var store: String
        var version: String
        var connection: UInt64
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        /// The newest call per store and version.
        var latest: [String: [String: ContinuousClock.Instant]] = [:]
        var counters: [String: [String: Counter]] = [:]
        /// Bumped when a version of a store that had no call within the grace gets one: a run
        /// of deferred work that started before re-reads what it may destroy.
        var generations: [String: Int] = [:]
    }

    private let state = Mutex(State())
    /// How long a version counts as active after its last call (`rollout.grace`).
    let grace: Mutex<Duration>
    /// Entries quiet for longer than this (and longer than the grace) are forgotten.
    static let memory: Duration = .seconds(86_400)
    /// The most connections remembered: past it, the connections that closed are forgotten,
    /// least recent first, down to half (clients that connect for each call would otherwise
    /// leave a day's worth of entries). Which versions are active is kept apart and never
    /// forgotten this way.
    static let maxEntries = 4096

    /// A tracker with `grace` (default: ``RolloutSettings/defaultGrace``).
    public init(grace: Duration = RolloutSettings.defaultGrace) {
        self.grace = Mutex(grace)
    }

    /// Records a call to `store` at `version` on the call's connection; returns whether the
    /// version became active with it (it had no call within the grace).
    @discardableResult
    public func record(store: String, version: String, named: Bool, context: VarlinkCallContext, now: ContinuousClock.Instant = .now) -> Bool {
        let grace = self.grace.withLock { $0 }
        let key = Key(store: store, version: version, connection: context.connection)
        let (counter, becameActive) = state.withLock { state -> (Counter, Bool) in
            let previous = state.latest[store]?[version]
            let becameActive = previous.map { now - $0 > grace } ?? true
            state.latest[store, default: [:]][version] = now
            if becameActive { state.generations[store, default: 0] += 1 }
            if var entry = state.entries[key] {
                entry.calls += 1
                entry.last = now
                entry.lastDate = Date()
                entry.named = entry.named || named
                state.entries[key] = entry
            } else {
                if state.entries.count >= Self.maxEntries { Self.forgetClosed(&state.entries) }
                state.entries[key] = Entry(store: store, version: version, named: named, connection: context.connection, peer: context.peer,
                                           user: nil, calls: 1, last: now, lastDate: Date(), open: context.connectionOpen)
            }
            if let counter = state.counters[store]?[version] { return (counter, becameActive) }
            let counter = Counter(label: "strata_client_calls_total", dimensions: [("store", store), ("version", version)])
            state.counters[store, default: [:]][version] = counter
            return (counter, becameActive)
        }
        counter.increment()
        return becameActive
    }

    /// Forgets closed connections, least recent first, until at most half of
    /// ``maxEntries`` remain (open ones are kept).
    private static func forgetClosed(_ entries: inout [Key: Entry]) {
        let closed = entries.filter { !$0.value.isOpen }.sorted { $0.value.last < $1.value.last }
        for (key, _) in closed.prefix(max(0, entries.count - maxEntries / 2)) { entries[key] = nil }
    }

    /// Bumped whenever a version of `store` becomes active (``record(store:version:named:context:now:)``).
    public func generation(of store: String) -> Int { state.withLock { $0.generations[store] ?? 0 } }

    /// The versions of `store` with a call within the grace: version → when the last came.
    public func activeVersions(of store: String, now: ContinuousClock.Instant = .now) -> [String: ContinuousClock.Instant] {
        let grace = self.grace.withLock { $0 }
        return state.withLock { $0.latest[store] ?? [:] }.filter { now - $0.value <= grace }
    }

    /// The newest call per version of `store`, active or not.
    public func lastCalls(of store: String) -> [String: ContinuousClock.Instant] {
        state.withLock { $0.latest[store] ?? [:] }
    }

    /// The connections of `store` (all stores when nil) with a call at `version` (any when
    /// nil) within `within` (the grace when nil), most recent first; forgets entries quiet for
    /// longer than a day.
    public func entries(store: String? = nil, version: String? = nil, within: Duration? = nil, now: ContinuousClock.Instant = .now) -> [Entry] {
        let limit = within ?? .seconds(Int64.max / 2)
        let forget = max(Self.memory, grace.withLock { $0 })
        var list = state.withLock { state -> [Entry] in
            state.entries = state.entries.filter { now - $0.value.last <= forget }
            return state.entries.values.filter { entry in
                (store == nil || entry.store == store) && (version == nil || entry.version == version) && now - entry.last <= limit
            }
        }
        list.sort { $0.last > $1.last }
        for index in list.indices where list[index].user == nil {
            list[index].user = list[index].peer.flatMap { Self.userName($0.uid) }
        }
        return list
    }

    /// `2 clients at Fleet 1, last call 14 s ago`: the client processes (peers by pid; a
    /// connection without credentials counts alone) with a call within the grace, and their
    /// connections when there are more (`1 client (3 connections) at Fleet 1, …`).
    public func summary(store: String, version: String, now: ContinuousClock.Instant = .now) -> String {
        let active = entries(store: store, version: version, within: grace.withLock { $0 }, now: now)
        let last = active.map(\.last).max().map { Self.ago(now - $0) } ?? "no call"
        let processes = Set(active.map { entry in entry.peer.map { "pid \($0.pid)" } ?? "connection \(entry.connection)" }).count
        let connections = active.count > processes ? " (\(active.count) connections)" : ""
        return "\(processes) client\(processes == 1 ? "" : "s")\(connections) at \(version), last call \(last)"
    }

    /// `14 s ago`, `3 min ago`.
    static func ago(_ duration: Duration) -> String {
        let seconds = max(0, Int(duration.seconds.rounded()))
        if seconds < 120 { return "\(seconds) s ago" }
        if seconds < 7200 { return "\(seconds / 60) min ago" }
        return "\(seconds / 3600) h ago"
    }

    static func userName(_ uid: UInt32) -> String? {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return nil }
        return String(cString: name)
    }
}
