import Logging
import ServiceLifecycle
import StrataVarlink
import Synchronization

/// Tells systemd where the daemon is in its life: `READY=1` with the status line when the
/// group starts (the stores are open and the sockets bound by then), and at the start of a
/// graceful shutdown `STOPPING=1` — the last service of the group, so the first one shut
/// down — after which it quiesces every Varlink server at once: no socket accepts any more,
/// idle connections close, busy ones after their running call.
final class SystemdLifecycleService: Service, Sendable {
    enum State: Sendable, Hashable {
        case starting, ready, stopping
    }

    let notifier: SystemdNotifier
    let registry: StoreRegistry
    let servers: [VarlinkServer]
    let logger: Logger
    private let current = Mutex(State.starting)

    init(notifier: SystemdNotifier, registry: StoreRegistry, servers: [VarlinkServer], logger: Logger) {
        self.notifier = notifier
        self.registry = registry
        self.servers = servers
        self.logger = logger
    }

    /// `ready` while serving: the watchdog refreshes `STATUS=` only then.
    var state: State { current.withLock { $0 } }

    func run() async {
        let summary = await registry.summary()
        notifier.ready(status: summary)
        current.withLock { $0 = .ready }
        logger.notice("ready", metadata: ["strata.status": "\(summary)", "strata.version": "\(StrataDaemonVersion.string)"])
        try? await gracefulShutdown()
        current.withLock { $0 = .stopping }
        notifier.stopping(status: "stopping: draining \(servers.map(\.connectionCount).reduce(0, +)) connection(s)")
        logger.notice("stopping: draining connections and deferred work")
        for server in servers { server.quiesce() }
    }
}
