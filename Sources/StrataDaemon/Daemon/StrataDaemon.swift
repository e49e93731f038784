import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import StrataVarlink
import Synchronization
import UnixSignals

/// The `stratad` service: opens the configured stores, binds (or adopts) the admin and data
/// sockets, then runs the daemon's parts as services of one `ServiceGroup`, started in this
/// order and shut down in the reverse one:
///
/// | service | runs | on graceful shutdown |
/// |---|---|---|
/// | ``StoreHostingService`` | (the stores are open) | closes every store, after its calls |
/// | ``WatchdogService`` | `WATCHDOG=1`, `STATUS=` | stops pinging |
/// | ``MetricsTextfileService`` (with `metrics.textfile`) | writes the textfile | writes it a last time |
/// | ``VarlinkServerService`` admin, data | serve Varlink | wait for their connections to end |
/// | ``SchedulerService`` | the idle scheduler | stops deferred work at its next batch |
/// | ``RolloutWatch`` | logs older model versions going quiet | stops looking |
/// | ``ReloadService`` | SIGHUP → ``reload()`` | stops listening for SIGHUP |
/// | ``SystemdLifecycleService`` | `READY=1` | `STOPPING=1`, quiesces both sockets |
///
/// The group's graceful shutdown has `limits.shutdown_timeout`: past it the group cancels
/// what still runs, which closes the remaining connections, then the stores. Run the daemon
/// in a group that maps SIGTERM / SIGINT to graceful shutdown (its own group follows it):
///
/// ```swift
/// let daemon = StrataDaemon(configuration: configuration, source: source, logger: logger)
/// let group = ServiceGroup(services: [daemon], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
/// try await group.run()
/// ```
public final class StrataDaemon: Service, Sendable {
    /// Where configuration reloads come from.
    public struct ConfigurationSource: Sendable {
        /// The configuration file's path.
        public var path: String
        /// Settings given on the command line.
        public var overrides: ConfigurationLoader.Overrides
        /// Memberwise initializer.
        public init(path: String, overrides: ConfigurationLoader.Overrides) {
            self.path = path
            self.overrides = overrides
        }
    }

    let logger: Logger
    let notifier: SystemdNotifier
    let registry: StoreRegistry
    let scheduler: any DeferredWorkScheduler
    let runner: DeferredWorkRunner
    let state: DaemonState
    /// The daemon's metrics (Prometheus registry and swift-metrics factory).
    public let metrics: DaemonMetrics
    /// The bound servers (for the connection gauges).
    private let sockets = Mutex<[VarlinkServer]>([])

    /// - Parameter metrics: the daemon's metrics registry; `stratad` bootstraps its
    ///   ``DaemonMetrics/factory`` as the swift-metrics backend.
    public init(configuration: DaemonConfiguration, source: ConfigurationSource, logger: Logger,
                notifier: SystemdNotifier = SystemdNotifier(), metrics: DaemonMetrics = DaemonMetrics()) {
        self.logger = logger
        self.notifier = notifier
        self.metrics = metrics
        self.registry = StoreRegistry(logger: logger, notifier: notifier, clients: ClientVersions(grace: configuration.rolloutGrace))
        let gate = SchedulerGate()
        let runner = DeferredWorkRunner(gate: gate, logger: logger)
        let registry = self.registry
        self.runner = runner
        self.scheduler = IdleScheduler(settings: configuration.scheduler, gate: gate, runner: runner,
                                       stores: { await registry.all() }, metrics: metrics.scheduler, logger: logger)
        self.state = DaemonState(configuration: configuration, source: source)
    }

    /// Runs the daemon until it is told to stop: opens the stores, serves, schedules, and shuts down gracefully.
    public func run() async throws {
        let startedAt = ContinuousClock.now
        // Trapped before the (possibly long) opening: a SIGHUP meanwhile waits for the group.
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        let configuration = await state.configuration
        notifier.status("opening \(configuration.stores.count) store\(configuration.stores.count == 1 ? "" : "s")")

        // 1. Stores (a failed store is reported, the others serve).
        await registry.reconcile(with: configuration.stores, drainTimeout: configuration.limits.shutdownTimeout)

        // 2. Sockets: passed by systemd, or bound here.
        let servers = try await bind(configuration, startedAt: startedAt)

        // 3. The services: READY=1 when they start, until a graceful shutdown.
        let lifecycle = SystemdLifecycleService(notifier: notifier, registry: registry, servers: servers, logger: logger)
        var services: [any Service] = [
            StoreHostingService(registry: registry, drainTimeout: { [state] in await state.configuration.limits.shutdownTimeout }),
            WatchdogService(notifier: notifier, registry: registry, scheduler: scheduler, lifecycle: lifecycle, logger: logger),
        ]
        if let textfile = configuration.metrics.textfile {
            services.append(MetricsTextfileService(path: textfile, interval: configuration.metrics.interval, logger: logger) { [self] in
                await self.metricsText()
            })
        }
        services += servers.map { VarlinkServerService(server: $0) } as [any Service]
        services += [
            SchedulerService(scheduler: scheduler, runner: runner),
            RolloutWatch(registry: registry, logger: logger),
            ReloadService(hangups: hangups) { [self] in try await self.reload() },
            lifecycle,
        ]
        var group = ServiceGroupConfiguration(
            services: services.map { .init(service: $0, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup) },
            logger: logger)
        group.maximumGracefulShutdownDuration = configuration.limits.shutdownTimeout
        try await ServiceGroup(configuration: group).run()
        notifier.status("stopped")
        logger.notice("stopped")
    }

    /// Binds (or adopts) both sockets. When one cannot be, those already bound refuse and
    /// close what they accepted, the stores close, and it throws.
    private func bind(_ configuration: DaemonConfiguration, startedAt: ContinuousClock.Instant) async throws -> [VarlinkServer] {
        let control = AdminInterface.Control(startedAt: startedAt, reload: { [self] in try await self.reload() },
                                             metrics: { [self] in await self.metricsText() })
        let admin = AdminInterface(registry: registry, scheduler: scheduler, runner: runner, control: control)
        let store = StoreInterface(registry: registry, limits: configuration.limits)
        let servers = VarlinkSockets.servers(configuration, activation: SocketActivation.fromEnvironment(), admin: admin, store: store, logger: logger)
        for (index, server) in servers.enumerated() {
            do {
                try await server.bind()
            } catch {
                logger.critical("cannot listen", metadata: ["strata.socket": "\(server.configuration.name)", "strata.error": "\(error)"])
                notifier.status("failed: cannot listen on the \(server.configuration.name) socket: \(error)")
                for bound in servers[..<index] {
                    bound.quiesce()
                    await bound.serve()
                }
                await registry.closeAll(drainTimeout: .seconds(1))
                throw DaemonError.cannotListen(socket: server.configuration.name, reason: "\(error)")
            }
        }
        sockets.withLock { $0 = servers }
        return servers
    }

    // MARK: - Metrics

    /// The metrics in the Prometheus text format, with the stores' and sockets' gauges updated.
    func metricsText() async -> String {
        metrics.exposition(stores: await registry.all(), servers: sockets.withLock { $0 })
    }

    // MARK: - Reload

    /// Re-reads the configuration (SIGHUP or `Reload`): opens added stores, closes removed or
    /// changed ones, applies scheduler settings. Socket, limit and metrics changes need a restart.
    ///
    /// - Throws: ``ConfigurationError`` when the file is refused (the previous one stays).
    func reload() async throws -> ReloadOutcome {
        let source = state.source
        notifier.reloading(status: "reloading \(source.path)")
        logger.notice("reloading the configuration", metadata: ["strata.config": "\(source.path)"])
        let configuration: DaemonConfiguration
        do {
            configuration = try ConfigurationLoader().load(path: source.path, overrides: source.overrides)
        } catch {
            logger.error("reload refused: the configuration is invalid; still serving the previous one", metadata: ["strata.error": "\(error)"])
            notifier.ready(status: "\(await registry.summary()); reload failed: \(error)")
            throw error
        }
        let previous = await state.replace(with: configuration)
        if previous.adminSocket != configuration.adminSocket || previous.dataSocket != configuration.dataSocket || previous.limits != configuration.limits {
            logger.warning("socket and limit changes take effect at the next restart")
        }
        if previous.metrics != configuration.metrics {
            logger.warning("metrics changes take effect at the next restart")
        }
        let changes = await registry.reconcile(with: configuration.stores, drainTimeout: configuration.limits.shutdownTimeout)
        await scheduler.apply(configuration.scheduler)
        registry.clients.grace.withLock { $0 = configuration.rolloutGrace }
        let summary = await registry.summary()
        notifier.ready(status: summary)
        logger.notice("reloaded", metadata: ["strata.status": "\(summary)", "strata.opened": "\(changes.opened)", "strata.closed": "\(changes.closed)"])
        return ReloadOutcome(status: summary, opened: changes.opened, closed: changes.closed)
    }
}

/// Failures that stop the daemon.
public enum DaemonError: Error, CustomStringConvertible {
    case cannotListen(socket: String, reason: String)

    /// A description in words.
    public var description: String {
        switch self {
        case .cannotListen(let socket, let reason): "cannot listen on the \(socket) socket: \(reason)"
        }
    }
}
