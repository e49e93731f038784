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
    /// `rollout.grace`: how long after its last call a model version's clients count as
    /// active (``RolloutSettings``).
    public var rolloutGrace: Duration

    /// Memberwise initializer.
    public init(
        file: String? = nil, stores: [StoreConfiguration] = [],
        adminSocket: SocketConfiguration = .defaultAdmin, dataSocket: SocketConfiguration = .defaultData,
        scheduler: SchedulerSettings = SchedulerSettings(), limits: Limits = Limits(), metrics: MetricsConfiguration = MetricsConfiguration(),
        logLevel: String = "info", rolloutGrace: Duration = RolloutSettings.defaultGrace
    ) {
        self.file = file
        self.stores = stores
        self.adminSocket = adminSocket
        self.dataSocket = dataSocket
        self.scheduler = scheduler
        self.limits = limits
        self.metrics = metrics
        self.logLevel = logLevel
        self.rolloutGrace = rolloutGrace
    }

    /// The default path of the configuration file.
    public static let defaultPath = "/etc/strata/stratad.yaml"
}
