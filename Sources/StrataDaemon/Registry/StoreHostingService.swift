import Logging
import ServiceLifecycle
import Synchronization

/// The hosted stores as a service of the daemon's group: the first started and the last shut
/// down. The stores are opened before the group runs (readiness waits for them); at its turn
/// in the shutdown this closes every store, after its in-flight calls (up to
/// `limits.shutdown_timeout`, none once the group's deadline has passed).
final class StoreHostingService: Service, Sendable {
    enum State: Sendable, Hashable {
        case serving, closing, closed
    }

    let registry: StoreRegistry
    let drainTimeout: @Sendable () async -> Duration
    private let current = Mutex(State.serving)

    init(registry: StoreRegistry, drainTimeout: @escaping @Sendable () async -> Duration) {
        self.registry = registry
        self.drainTimeout = drainTimeout
    }

    var state: State { current.withLock { $0 } }

    func run() async {
        try? await gracefulShutdown()
        current.withLock { $0 = .closing }
        await registry.closeAll(drainTimeout: await drainTimeout())
        current.withLock { $0 = .closed }
    }
}
