import Foundation
import Metrics
import NIOPosix
import Strata
import Synchronization

/// One configured store as the daemon hosts it: open and serving, or failed with a reason.
public final class HostedStore: Sendable {
    /// Where a hosted store is in its life.
    public enum State: Sendable, Hashable {
        case ready
        case failed(String)
        case closed
    }

    /// The store's configuration (name, path, model, options).
    public let configuration: StoreConfiguration
    /// The open store; nil when it failed to open.
    public let store: PersistentStore?
    /// The model version the store was opened with; for a failed store, the version its file
    /// is at when known (a migration at open that stopped at its last committed hop), else nil.
    public let modelVersion: String?
    /// Requests and open transactions over a sliding window (a signal of the idle scheduler).
    public let load = StoreLoad()
    /// How far the store's replica is behind (nil when the store is not replicated).
    public let replicaProbe: ReplicaLagProbe?
    /// The store's own threads for blocking work (nil when it failed to open): the query lane,
    /// and the key lane that queries never take (``Lane``).
    let executor: StoreExecutor?
    let keyExecutor: StoreExecutor?
    /// Checks the schema again when another process changed it (nil: no check).
    let schemaWatch: SchemaWatch?
    /// The progress of the run that holds the store, for `FinishDeferred --wait` to follow.
    let finishingWatch = FinishingWatch()
    /// The store's history, read once per commit for all of its `Observe` calls.
    let observerFeed = ObserverFeed()
    /// The older model versions served beside the store's, and the cleanup they hold (nil
    /// when the store failed to open).
    let versions: HostedVersions?
    private let shared: Mutex<Shared>
    /// Wakes ``close(timeout:)`` when the last call or deferred run ends.
    private let idle = IdleSignal()
    /// `strata_store_requests_total{store}`: the requests ``requestCount`` counts.
    private let requestCounter: Counter

    private struct Shared {
        var state: State
        var inFlight = 0
        /// When the last call ended (nil: none has run), for ``callsQuiet``.
        var lastCallEnded: ContinuousClock.Instant?
        var requests = 0
        var finishing: FinishingClaim?
        /// An explicit request waits for the scheduler's turn to end at its next batch; no new
        /// turn starts until the request has the store.
        var yieldRequested = false
    }

    init(configuration: StoreConfiguration, store: PersistentStore?, modelVersion: String?, state: State, schemaWatch: SchemaWatch? = nil,
         versions: HostedVersions? = nil) {
        self.configuration = configuration
        self.store = store
        self.modelVersion = modelVersion
        self.schemaWatch = schemaWatch
        self.versions = versions
        self.shared = Mutex(Shared(state: state))
        self.executor = store == nil ? nil : StoreExecutor()
        self.keyExecutor = store == nil ? nil : StoreExecutor(threads: Limits.storeKeyThreads)
        self.replicaProbe = configuration.replication.map { ReplicaLagProbe(store: configuration.name, storePath: configuration.path, configuration: $0) }
        self.requestCounter = Counter(label: "strata_store_requests_total", dimensions: [("store", configuration.name)])
        if let store, let schemaWatch {
            // Calls through a context check the schema in their own transactions (see `use`).
            let name = configuration.name
            store.transactionGate.install { [weak self, weak store] db in
                guard let store else { return }
                if case .broken(let reason) = schemaWatch.verify(store, in: db) {
                    self?.markFailed(reason)
                    throw HostingError.unavailable(store: name, reason: reason)
                }
            }
        }
    }

    /// The store's name (as configured).
    public var name: String { configuration.name }
    /// The state, in words (see the interface definition for the values).
    public var state: State { shared.withLock { $0.state } }
    /// Requests handled since the store was opened.
    public var requestCount: Int { shared.withLock { $0.requests } }
    /// Calls being served now.
    public var inFlight: Int { shared.withLock { $0.inFlight } }

    /// How long no call has been in flight: zero while one runs, the time since the last one
    /// ended otherwise (``neverCalled`` when none has run). Deferred work begins an idle batch
    /// only after a quiet spell (``FinishOptions/clientsQuiet``), so that clients calling every
    /// few milliseconds do not abort one idle batch after another.
    public var callsQuiet: Duration {
        let now = ContinuousClock.now
        return shared.withLock { shared in
            guard shared.inFlight == 0 else { return .zero }
            return shared.lastCallEnded.map { now - $0 } ?? Self.neverCalled
        }
    }

    /// ``callsQuiet`` of a store no call has reached yet: longer than any quiet spell asked for.
    public static let neverCalled = Duration.seconds(1 << 40)

    /// Pending deferred tasks (empty when failed or unreadable).
    public func pendingTasks() -> [DeferredTask] {
        guard let store = self.store, case .ready = state else { return [] }
        return (try? store.pendingDeferredWork()) ?? []
    }

    /// The pending tasks held for clients of an older model version, with why (empty when
    /// none is: ``HostedVersions``).
    public func heldTasks() -> [Int64: String] {
        guard let store, let versions, case .ready = state else { return [:] }
        return versions.heldTasks(store: store)
    }

    /// Whether deferred work can run now: a pending task that is not held for clients of an
    /// older model version (the idle scheduler's turns take only such stores).
    public var hasRunnableWork: Bool {
        let pending = pendingTasks()
        guard !pending.isEmpty else { return false }
        let held = heldTasks()
        return pending.contains { held[$0.id] == nil }
    }

    /// Runs `body` with the open store, counting it as in flight. When another process changed
    /// the store's schema since the last call, the schema is checked first (``SchemaWatch``);
    /// if the model no longer matches it, the store turns failed.
    ///
    /// With `schemaCheckedByContexts`, `body` reaches the store only through `ObjectContext`s,
    /// which check the schema at the start of each of their transactions, inside it (the
    /// store's `TransactionGate`): the separate read transaction is skipped.
    ///
    /// - Throws: `StoreUnavailable` when the store failed (now or before) or was closed.
    public func use<T>(schemaCheckedByContexts: Bool = false, _ body: (PersistentStore) throws -> T) throws -> T {
        let store = try shared.withLock { shared throws(HostingError) -> PersistentStore in
            switch shared.state {
            case .ready: break
            case .failed(let reason): throw HostingError.unavailable(store: name, reason: reason)
            case .closed: throw HostingError.unavailable(store: name, reason: HostingError.closedReason)
            }
            guard let open = self.store else { throw HostingError.unavailable(store: name, reason: "not open") }
            shared.inFlight += 1
            shared.requests += 1
            return open
        }
        requestCounter.increment()
        load.begin()
        defer {
            load.end()
            let now = ContinuousClock.now
            shared.withLock {
                $0.inFlight -= 1
                $0.lastCallEnded = now
            }
            idle.notify()
        }
        if !schemaCheckedByContexts, let schemaWatch, case .broken(let reason) = schemaWatch.verify(store) {
            markFailed(reason)
            throw HostingError.unavailable(store: name, reason: reason)
        }
        return try body(store)
    }

    /// Which of the store's threads a call runs on (docs/Security.md, "Lanes").
    public enum Lane: String, Sendable {
        /// Writes and lookups by key: bounded work, never queued behind a query.
        case key
        /// Everything else: predicates, sorts, history, observers, the daemon's own upkeep.
        case query
    }

    /// Runs blocking work with the open store on the store's own threads of `lane`
    /// (``StoreExecutor``), counting it as in flight. `schemaCheckedByContexts`: see
    /// ``use(schemaCheckedByContexts:_:)``.
    ///
    /// - Throws: `StoreUnavailable` when the store failed or was closed, or what `body` throws.
    public func perform<T: Sendable>(lane: Lane = .query, schemaCheckedByContexts: Bool = false,
                                     _ body: @escaping @Sendable (PersistentStore) throws -> T) async throws -> T {
        guard let executor = lane == .key ? keyExecutor : executor else { return try use(schemaCheckedByContexts: schemaCheckedByContexts, body) }
        do {
            return try await executor.run { try self.use(schemaCheckedByContexts: schemaCheckedByContexts, body) }
        } catch is NIOThreadPoolError.ThreadPoolInactive {
            throw HostingError.unavailable(store: name, reason: HostingError.closedReason)
        }
    }

    /// Runs the daemon's own upkeep (history gaps and retention, ``HistoryPurger``) on the
    /// store's threads. Not a client request: it does not count as load for the idle
    /// scheduler, and it does not check the schema (client calls do).
    func performUpkeep<T: Sendable>(_ body: @escaping @Sendable (PersistentStore) throws -> T) async throws -> T {
        guard let store, case .ready = state else { throw HostingError.unavailable(store: name, reason: "not open") }
        guard let executor else { return try body(store) }
        do {
            return try await executor.run { try body(store) }
        } catch is NIOThreadPoolError.ThreadPoolInactive {
            throw HostingError.unavailable(store: name, reason: HostingError.closedReason)
        }
    }

    /// Turns a serving store failed: calls are refused with `reason` until a reload reopens it.
    func markFailed(_ reason: String) {
        shared.withLock { shared in
            if case .ready = shared.state { shared.state = .failed(reason) }
        }
    }

    /// Whether the store failed (to open, or since).
    public var isFailed: Bool {
        if case .failed = state { return true }
        return false
    }

    /// Who runs deferred work on the store.
    public enum FinishingClaim: Sendable, Hashable {
        /// The idle scheduler's turn: gives way to an explicit request.
        case scheduler
        /// `FinishDeferred` (`stratactl finish-deferred`, the maintenance timer).
        case request
    }

    /// Claims the store for a deferred-work run; false when one already runs (or, for a
    /// scheduler turn, when a request waits for the store).
    func beginFinishing(_ claim: FinishingClaim = .request) -> Bool {
        shared.withLock { shared in
            guard shared.finishing == nil, !(claim == .scheduler && shared.yieldRequested) else { return false }
            shared.finishing = claim
            if claim == .request { shared.yieldRequested = false }
            return true
        }
    }

    /// Claims the store for a run on request. A scheduler turn that holds it is asked to stop
    /// at its next batch (its progress stays in the ledger) and the request takes over; false
    /// when another request runs, or the turn did not end within `timeout`.
    func takeOverFinishing(timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (claimed, schedulerHolds) = shared.withLock { shared -> (Bool, Bool) in
                switch shared.finishing {
                case nil:
                    shared.finishing = .request
                    shared.yieldRequested = false
                    return (true, false)
                case .scheduler?:
                    shared.yieldRequested = true
                    return (false, true)
                case .request?:
                    return (false, false)
                }
            }
            if claimed { return true }
            guard schedulerHolds, ContinuousClock.now < deadline else {
                if schedulerHolds { shared.withLock { $0.yieldRequested = false } }   // gave up: turns may start again
                return false
            }
            // Woken when the turn ends (endFinishing), not polled.
            await idle.wait(timeout: deadline - ContinuousClock.now) { self.shared.withLock { $0.finishing != .scheduler } }
        }
    }

    /// Whether a scheduler turn must end at its next batch (a request takes over).
    var yieldRequested: Bool { shared.withLock { $0.yieldRequested } }

    func endFinishing() {
        shared.withLock { $0.finishing = nil }
        idle.notify()
    }
    /// Whether a run holds the store, or a request waits to take it over from a scheduler turn.
    public var isFinishing: Bool { shared.withLock { $0.finishing != nil || $0.yieldRequested } }
    /// Whether a run on request (not a scheduler turn) holds the store.
    public var isFinishingOnRequest: Bool { shared.withLock { $0.finishing == .request } }

    /// Marks the store closed (new requests are refused), waits for in-flight requests and a
    /// deferred run up to `timeout` (not at all when the task is cancelled: the shutdown
    /// deadline passed), and closes its connections. Calls still running then hold SQLite's
    /// connections (a write waiting for another process's lock, say): closing would wait for
    /// them, so the store closes on a thread of its own once they end (at the latest when the
    /// process exits), and this returns false.
    @discardableResult
    func close(timeout: Duration) async -> Bool {
        shared.withLock { $0.state = .closed }
        await idle.wait(timeout: timeout) { self.inFlight == 0 && !self.isFinishing }
        executor?.shutDown()
        keyExecutor?.shutDown()
        guard let store else { return true }
        store.transactionGate.install(nil)
        guard inFlight == 0, !isFinishing else {
            Thread.detachNewThread { try? store.close() }
            return false
        }
        try? store.close()
        return true
    }
}
