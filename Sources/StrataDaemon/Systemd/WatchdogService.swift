import Logging
import NIOPosix
import ServiceLifecycle
import Synchronization

/// Pings the systemd watchdog (`WATCHDOG=1`, every third of `WATCHDOG_USEC`, at most every
/// 10 s) only after the parts that serve answered: the registry and scheduler actors, every
/// event loop, and Swift's cooperative pool (this service runs on it). A frozen daemon stops
/// pinging and systemd restarts it. Blocking work runs on each store's own threads
/// (``StoreExecutor``), which it deliberately does not wait for: a slow call on one store is
/// not a frozen daemon. While the daemon is ready it also refreshes `STATUS=`.
final class WatchdogService: Service, Sendable {
    enum State: Sendable, Hashable {
        case idle
        /// Pinging every `tick` (or only refreshing the status when systemd wants no pings).
        case running(tick: Duration, pings: Bool)
        case stopped
    }

    let notifier: SystemdNotifier
    let registry: StoreRegistry
    let scheduler: any DeferredWorkScheduler
    let lifecycle: SystemdLifecycleService
    let logger: Logger
    private let current = Mutex(State.idle)

    init(notifier: SystemdNotifier, registry: StoreRegistry, scheduler: any DeferredWorkScheduler, lifecycle: SystemdLifecycleService, logger: Logger) {
        self.notifier = notifier
        self.registry = registry
        self.scheduler = scheduler
        self.lifecycle = lifecycle
        self.logger = logger
    }

    var state: State { current.withLock { $0 } }

    func run() async {
        let interval = notifier.watchdogInterval
        let tick: Duration = interval.map { min($0 / 3, .seconds(10)) } ?? .seconds(10)
        if let interval { logger.info("watchdog enabled", metadata: ["strata.interval_ms": "\(Int(interval.seconds * 1000))"]) }
        current.withLock { $0 = .running(tick: tick, pings: interval != nil) }
        let (notifier, registry, scheduler, lifecycle) = (self.notifier, self.registry, self.scheduler, self.lifecycle)
        await cancelWhenGracefulShutdown {
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
                    if status != lastStatus, lifecycle.state == .ready {
                        notifier.status(status)
                        lastStatus = status
                    }
                    try await Task.sleep(for: tick)
                } catch {
                    return
                }
            }
        }
        current.withLock { $0 = .stopped }
    }
}
