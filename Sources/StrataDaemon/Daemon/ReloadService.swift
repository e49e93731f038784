import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Re-reads the configuration on SIGHUP (``StrataDaemon/reload()``, which sends
/// `RELOADING=1` and then `READY=1`). The signal is trapped from the daemon's start, before
/// the stores open: a SIGHUP then is handled once the group runs, never fatal.
final class ReloadService: Service, Sendable {
    enum State: Sendable, Hashable {
        case idle, waiting, reloading, stopped
    }

    let hangups: UnixSignalsSequence
    let reload: @Sendable () async throws -> ReloadOutcome
    private let current = Mutex(State.idle)

    init(hangups: UnixSignalsSequence, reload: @escaping @Sendable () async throws -> ReloadOutcome) {
        self.hangups = hangups
        self.reload = reload
    }

    var state: State { current.withLock { $0 } }

    func run() async {
        current.withLock { $0 = .waiting }
        await cancelWhenGracefulShutdown { [self] in
            for await _ in hangups {
                current.withLock { $0 = .reloading }
                // A refused configuration is logged and reported by reload(); the daemon serves on.
                _ = try? await reload()
                current.withLock { $0 = .waiting }
            }
        }
        current.withLock { $0 = .stopped }
    }
}
