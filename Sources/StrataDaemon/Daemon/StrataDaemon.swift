import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import UnixSignals

/// The `stratad` service: opens the configured stores, binds (or adopts) the admin and data
/// sockets, tells systemd it is ready, serves Varlink until a graceful shutdown (SIGTERM),
/// reloads on SIGHUP, pings the watchdog, and on shutdown drains in-flight calls and closes
/// every store.
///
/// Run it in a `ServiceGroup` that maps SIGTERM / SIGINT to graceful shutdown:
///
/// ```swift
/// let daemon = StrataDaemon(configuration: configuration, loader: loader, logger: logger)
/// let group = ServiceGroup(services: [daemon], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
/// try await group.run()
/// ```
public final class StrataDaemon: Service, Sendable {
    /// Where configuration reloads come from.
    public struct ConfigurationSource: Sendable {
        public var path: String
        public var overrides: ConfigurationLoader.Overrides
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

    public init(configuration: DaemonConfiguration, source: ConfigurationSource, logger: Logger,
                notifier: SystemdNotifier = SystemdNotifier()) {
        self.logger = logger
        self.notifier = notifier
        self.registry = StoreRegistry(logger: logger, notifier: notifier)
        let gate = SchedulerGate()
        let runner = DeferredWorkRunner(gate: gate, logger: logger)
        let registry = self.registry
        self.runner = runner
        self.scheduler = IdleScheduler(settings: configuration.scheduler, gate: gate, runner: runner,
                                       stores: { await registry.all() }, logger: logger)
        self.state = DaemonState(configuration: configuration, source: source)
    }

    public func run() async throws {
        let startedAt = ContinuousClock.now
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        let configuration = await state.configuration
        notifier.status("opening \(configuration.stores.count) store\(configuration.stores.count == 1 ? "" : "s")")

        // 1. Stores (a failed store is reported, the others serve).
        await registry.reconcile(with: configuration.stores, drainTimeout: configuration.limits.shutdownTimeout)

        // 2. Sockets: passed by systemd, or bound here.
        let activation = SocketActivation.fromEnvironment()
        let control = AdminInterface.Control(startedAt: startedAt, reload: { [self] in try await self.reload() })
        let admin = AdminInterface(registry: registry, scheduler: scheduler, runner: runner, control: control)
        let store = StoreInterface(registry: registry, limits: configuration.limits)
        let servers = [
            VarlinkServer(configuration: .init(
                name: "admin", source: activation.descriptors["admin"].map { .descriptor($0) } ?? .path(configuration.adminSocket.path, mode: configuration.adminSocket.mode),
                authorization: PeerAuthorization(configuration.adminSocket), dispatcher: VarlinkDispatcher(interfaces: [admin, store]),
                limits: configuration.limits), logger: logger),
            VarlinkServer(configuration: .init(
                name: "data", source: activation.descriptors["data"].map { .descriptor($0) } ?? .path(configuration.dataSocket.path, mode: configuration.dataSocket.mode),
                authorization: PeerAuthorization(configuration.dataSocket), dispatcher: VarlinkDispatcher(interfaces: [store]),
                limits: configuration.limits), logger: logger),
        ]
        var listeners: [VarlinkServer.Listener] = []
        for server in servers {
            do {
                listeners.append(try await server.bind())
            } catch {
                logger.critical("cannot listen", metadata: ["strata.socket": "\(server.configuration.name)", "strata.error": "\(error)"])
                notifier.status("failed: cannot listen on the \(server.configuration.name) socket: \(error)")
                // Sockets already bound: refuse and close what they accepted meanwhile.
                for (bound, listener) in zip(servers, listeners) {
                    bound.beginDrain()
                    await bound.serve(listener)
                }
                await registry.closeAll(drainTimeout: .seconds(1))
                throw DaemonError.cannotListen(socket: server.configuration.name, reason: "\(error)")
            }
        }

        // 3. Ready.
        let summary = await registry.summary()
        notifier.ready(status: summary)
        logger.notice("ready", metadata: ["strata.status": "\(summary)", "strata.version": "\(StrataDaemonVersion.string)"])

        // 4. Serve until graceful shutdown.
        let (shutdown, trigger) = AsyncStream<Void>.makeStream()
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                for (server, listener) in zip(servers, listeners) {
                    group.addTask { await server.serve(listener) }
                }
                let background = Task {
                    await withDiscardingTaskGroup { background in
                        background.addTask { await self.scheduler.run() }
                        background.addTask { await self.watchdogLoop() }
                        background.addTask {
                            for await _ in hangups {
                                do { _ = try await self.reload() } catch { /* logged and reported by reload() */ }
                            }
                        }
                    }
                }
                for await _ in shutdown { break }
                let limits = await state.configuration.limits
                notifier.stopping(status: "stopping: draining \(servers.map(\.connectionCount).reduce(0, +)) connection(s)")
                logger.notice("stopping: draining connections and deferred work")
                for server in servers { server.beginDrain() }
                let forceClose = Task {
                    try await Task.sleep(for: limits.shutdownTimeout)
                    self.logger.warning("drain timeout: closing the remaining connections")
                    for server in servers { server.closeAll() }
                }
                await runner.stopAll()
                background.cancel()
                group.addTask {
                    await background.value
                }
                _ = forceClose
                group.addTask {
                    // Ends the force-close timer once everything else has drained.
                    while servers.contains(where: { $0.connectionCount > 0 }) {
                        try? await Task.sleep(for: .milliseconds(20))
                    }
                    forceClose.cancel()
                }
            }
        } onGracefulShutdown: {
            trigger.yield()
        }

        // 5. Close the stores.
        await registry.closeAll(drainTimeout: await state.configuration.limits.shutdownTimeout)
        notifier.status("stopped")
        logger.notice("stopped")
    }

    // MARK: - Reload

    /// Re-reads the configuration (SIGHUP or `Reload`): opens added stores, closes removed or
    /// changed ones, applies scheduler settings. Socket changes need a restart.
    func reload() async throws -> (status: String, opened: [String], closed: [String]) {
        let source = state.source
        notifier.reloading(status: "reloading \(source.path)")
        logger.notice("reloading the configuration", metadata: ["strata.config": "\(source.path)"])
        let configuration: DaemonConfiguration
        do {
            configuration = try ConfigurationLoader().load(path: source.path, overrides: source.overrides)
        } catch {
            logger.error("reload refused: the configuration is invalid; still serving the previous one", metadata: ["strata.error": "\(error)"])
            notifier.ready(status: "\(await registry.summary()); reload failed: \(error)")
            throw VarlinkError("io.strata.Admin.ReloadFailed", ["file": .string(error.file), "key": .string(error.key), "reason": .string(error.description)])
        }
        let previous = await state.replace(with: configuration)
        if previous.adminSocket != configuration.adminSocket || previous.dataSocket != configuration.dataSocket || previous.limits != configuration.limits {
            logger.warning("socket and limit changes take effect at the next restart")
        }
        let changes = await registry.reconcile(with: configuration.stores, drainTimeout: configuration.limits.shutdownTimeout)
        await scheduler.apply(configuration.scheduler)
        let summary = await registry.summary()
        notifier.ready(status: summary)
        logger.notice("reloaded", metadata: ["strata.status": "\(summary)", "strata.opened": "\(changes.opened)", "strata.closed": "\(changes.closed)"])
        return (summary, changes.opened, changes.closed)
    }

    // MARK: - Watchdog and status

    /// Pings the watchdog only after the parts that serve answered: the registry and
    /// scheduler actors, every event loop, and Swift's cooperative pool (this loop runs on
    /// it). A frozen daemon stops pinging and systemd restarts it. Blocking work runs on each
    /// store's own threads (``StoreExecutor``), which the loop deliberately does not wait
    /// for: a slow call on one store is not a frozen daemon. Also refreshes `STATUS=`.
    func watchdogLoop() async {
        let interval = notifier.watchdogInterval
        let tick: Duration = interval.map { min($0 / 3, .seconds(10)) } ?? .seconds(10)
        if let interval { logger.info("watchdog enabled", metadata: ["strata.interval_ms": "\(Int(interval.seconds * 1000))"]) }
        var lastStatus = ""
        while !Task.isCancelled {
            do {
                await registry.heartbeat()
                await scheduler.heartbeat()
                for loop in MultiThreadedEventLoopGroup.singleton.makeIterator() {
                    try await loop.submit {}.get()
                }
                if interval != nil { notifier.watchdogPing() }
                let status = await registry.summary()
                if status != lastStatus {
                    notifier.status(status)
                    lastStatus = status
                }
                try await Task.sleep(for: tick)
            } catch {
                return
            }
        }
    }
}

/// The configuration in force (replaced by reloads).
actor DaemonState {
    private(set) var configuration: DaemonConfiguration
    nonisolated let source: StrataDaemon.ConfigurationSource

    init(configuration: DaemonConfiguration, source: StrataDaemon.ConfigurationSource) {
        self.configuration = configuration
        self.source = source
    }

    func replace(with configuration: DaemonConfiguration) -> DaemonConfiguration {
        defer { self.configuration = configuration }
        return self.configuration
    }
}

/// Failures that stop the daemon.
public enum DaemonError: Error, CustomStringConvertible {
    case cannotListen(socket: String, reason: String)

    public var description: String {
        switch self {
        case .cannotListen(let socket, let reason): "cannot listen on the \(socket) socket: \(reason)"
        }
    }
}
