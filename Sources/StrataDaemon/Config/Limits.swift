import Foundation
import StrataVarlink

/// Protocol limits that protect the daemon from misbehaving clients (see docs/Security.md).
public struct Limits: Sendable, Hashable {
    /// Largest accepted Varlink message in bytes; a larger one gets an error and a disconnect.
    public var maxMessageSize: Int
    /// A client that sends nothing for this long (while no call of its own runs) is disconnected.
    public var idleTimeout: Duration
    /// A message must be complete within this long of its first byte; a client that trickles
    /// bytes is disconnected (`MessageTimeout`).
    public var messageTimeout: Duration
    /// Longest wait for in-flight calls on shutdown.
    public var shutdownTimeout: Duration
    /// Most concurrent client connections per socket (authorized peers only: refused peers
    /// never hold a slot).
    public var maxConnections: Int
    /// Most objects one `Fetch` returns (`limit` above it, or more matches without a
    /// `limit`, get `LimitExceeded`).
    public var maxFetchObjects: Int
    /// Most operations in one `Batch`.
    public var maxBatchOperations: Int
    /// Most transactions an `Observe` call may fall behind (committed, not yet delivered)
    /// before it gets `ObserverOverflow` and its connection is closed.
    public var maxObserverQueue: Int
    /// How long an overflowed observer may go without taking a write before its connection
    /// is closed (and how long it stays open after its `ObserverOverflow`): a client that still
    /// reads gets the error; one that reads nothing is cut off.
    public var observerGrace: Duration
    /// How long one `io.strata.Store` call may run in SQLite (statements and `MATCHES`
    /// patterns); past it the call stops with `io.strata.Varlink.CallTimeout`, nothing
    /// written. A store's `call_timeout` overrides it.
    public var callTimeout: Duration

    /// Deepest nesting of arrays and objects in a message (Foundation refuses past 512 with
    /// a generic error; this bound names itself).
    public static let maxJSONDepth = VarlinkCall.defaultMaxDepth
    /// Blocking calls that run at once on one store's query lane (its own threads: a slow call
    /// on one store never delays another store, the event loops or the watchdog).
    public static let storeThreads = 2
    /// Calls that run at once on one store's key lane: writes and lookups by key, which no
    /// query of the store can hold up (docs/Security.md, "Lanes").
    public static let storeKeyThreads = 2

    /// Memberwise initializer.
    public init(maxMessageSize: Int = 1 << 20, idleTimeout: Duration = .seconds(60), messageTimeout: Duration = .seconds(10),
                shutdownTimeout: Duration = .seconds(10), maxConnections: Int = 256, maxFetchObjects: Int = 10_000,
                maxBatchOperations: Int = 10_000, maxObserverQueue: Int = 1_000, observerGrace: Duration = .seconds(1),
                callTimeout: Duration = .seconds(5)) {
        self.maxObserverQueue = maxObserverQueue
        self.observerGrace = observerGrace
        self.callTimeout = callTimeout
        self.maxMessageSize = maxMessageSize
        self.idleTimeout = idleTimeout
        self.messageTimeout = messageTimeout
        self.shutdownTimeout = shutdownTimeout
        self.maxConnections = maxConnections
        self.maxFetchObjects = maxFetchObjects
        self.maxBatchOperations = maxBatchOperations
    }
}
