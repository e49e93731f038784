import Foundation
import StrataVarlink

/// Everything `stratad` reads from its configuration file (and environment / command-line
/// overrides): the stores it hosts, its sockets, the scheduler's settings and its limits.
///
/// Relative paths are resolved against the daemon's working directory. Every field has a
/// default except the stores' name, path and model directory.
public struct DaemonConfiguration: Sendable, Hashable {
    /// The file the configuration was read from (for messages); nil when built in code.
    public var file: String?
    /// The stores, in configuration order.
    public var stores: [StoreConfiguration]
    /// The admin socket.
    public var adminSocket: SocketConfiguration
    /// The data socket, if any.
    public var dataSocket: SocketConfiguration
    /// The idle scheduler's state and statistics.
    public var scheduler: SchedulerSettings
    /// Bounds on input from outside.
    public var limits: Limits
    /// Where metrics are exported (`metrics:`).
    public var metrics: MetricsConfiguration
    /// The log level.
    public var logLevel: String

    /// Memberwise initializer.
    public init(
        file: String? = nil, stores: [StoreConfiguration] = [],
        adminSocket: SocketConfiguration = .defaultAdmin, dataSocket: SocketConfiguration = .defaultData,
        scheduler: SchedulerSettings = SchedulerSettings(), limits: Limits = Limits(), metrics: MetricsConfiguration = MetricsConfiguration(),
        logLevel: String = "info"
    ) {
        self.file = file
        self.stores = stores
        self.adminSocket = adminSocket
        self.dataSocket = dataSocket
        self.scheduler = scheduler
        self.limits = limits
        self.metrics = metrics
        self.logLevel = logLevel
    }

    /// The default path of the configuration file.
    public static let defaultPath = "/etc/strata/stratad.yaml"
}

/// One hosted store.
public struct StoreConfiguration: Sendable, Hashable {
    /// The name clients use (`[A-Za-z0-9_.-]+`).
    public var name: String
    /// The store file.
    public var path: String
    /// A model directory (with a `versions.yaml` manifest).
    public var modelDirectory: String
    /// The model version the store is opened (and migrated) to; nil for the directory's current.
    public var targetVersion: String?
    /// Record expensive migration cleanup in the deferred ledger instead of running it at open.
    public var deferCleanup: Bool
    /// Copy the store file aside before a migration at open.
    public var backupBeforeMigration: Bool
    /// How long to wait for a lock held by another process.
    public var busyTimeout: Duration
    /// Allow a migration at open that drops every entity of the store (all its data);
    /// `allow_dropping_all_entities`, off by default.
    public var allowsDroppingAllEntities: Bool
    /// Allow a migration at open that discards stored data (values of removed attributes, rows
    /// of removed entities); `allow_discards`, on by default. Off, such a migration is refused
    /// before any write, with what it would discard (``MigrationOptions/allowsDiscards``).
    public var allowsDiscards = true
    /// A stage file (`MigrationStageFile`, the SQL stages `stratactl migrate --stages` reads)
    /// whose custom stages the migration at open runs where a hop of the version graph needs
    /// one; `stages`, none by default.
    public var stagesFile: String?
    /// Change history: whether saves record it, and how long it is kept (`history`).
    public var history: HistoryRetention = HistoryRetention()
    /// Replication by Litestream (`replication:`); nil when the store is not replicated.
    public var replication: ReplicationConfiguration?
    /// How long one call may run in SQLite on this store (`call_timeout`); nil for
    /// ``Limits/callTimeout``.
    public var callTimeout: Duration?

    /// Memberwise initializer.
    public init(name: String, path: String, modelDirectory: String, targetVersion: String? = nil, deferCleanup: Bool = true,
                backupBeforeMigration: Bool = true, busyTimeout: Duration = .seconds(5), allowsDroppingAllEntities: Bool = false,
                stagesFile: String? = nil, replication: ReplicationConfiguration? = nil,
                callTimeout: Duration? = nil) {
        self.replication = replication
        self.callTimeout = callTimeout
        self.allowsDroppingAllEntities = allowsDroppingAllEntities
        self.stagesFile = stagesFile
        self.name = name
        self.path = path
        self.modelDirectory = modelDirectory
        self.targetVersion = targetVersion
        self.deferCleanup = deferCleanup
        self.backupBeforeMigration = backupBeforeMigration
        self.busyTimeout = busyTimeout
    }
}

/// A listening socket and who may talk to it.
public struct SocketConfiguration: Sendable, Hashable {
    /// The socket file (ignored when systemd passes the socket).
    public var path: String
    /// File mode of a socket the daemon binds itself.
    public var mode: UInt16
    /// Peers accepted besides the daemon's own user: user ids resolved from names or numbers.
    public var users: [UInt32]
    /// Peers whose primary or supplementary groups include one of these are accepted.
    public var groups: [UInt32]
    /// When true (and both lists are empty) any peer that can open the socket file is accepted.
    public var allowAnyPeer: Bool

    /// Memberwise initializer.
    public init(path: String, mode: UInt16, users: [UInt32] = [], groups: [UInt32] = [], allowAnyPeer: Bool = false) {
        self.path = path
        self.mode = mode
        self.users = users
        self.groups = groups
        self.allowAnyPeer = allowAnyPeer
    }

    /// `/run/strata/admin.sock`, mode 0660.
    public static let defaultAdmin = SocketConfiguration(path: "/run/strata/admin.sock", mode: 0o660, users: [0])
    /// `/run/strata/data.sock`, mode 0660.
    public static let defaultData = SocketConfiguration(path: "/run/strata/data.sock", mode: 0o660, users: [0])
}

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
    /// Blocking calls that run at once on one store (its own threads: a slow call on one
    /// store never delays another store, the event loops or the watchdog).
    public static let storeThreads = 2

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

/// Where the daemon writes its metrics for node_exporter's textfile collector (the unit has
/// no network, so nothing scrapes it): `metrics.textfile` and `metrics.interval`.
public struct MetricsConfiguration: Sendable, Hashable {
    /// The file (`*.prom`) rewritten atomically every ``interval``; nil writes none.
    public var textfile: String?
    /// How often the textfile is rewritten.
    public var interval: Duration

    /// The range of ``interval``.
    public static let intervalRange: ClosedRange<Duration> = .seconds(1) ... .seconds(3600)

    /// Memberwise initializer.
    public init(textfile: String? = nil, interval: Duration = .seconds(15)) {
        self.textfile = textfile
        self.interval = interval
    }
}
