import Logging
import ServiceLifecycle
import Synchronization

/// The idle scheduler and the deferred work it runs, as a service of the daemon's group:
/// runs the scheduler's loop until the group shuts it down, then stops every deferred run at
/// its next batch (idle-respecting and on request alike; their progress stays in the ledgers)
/// and waits for the runs started in the background.
final class SchedulerService: Service, Sendable {
    enum State: Sendable, Hashable {
        case idle, running, stopping, stopped
    }

    let scheduler: any DeferredWorkScheduler
    let runner: DeferredWorkRunner
    private let current = Mutex(State.idle)

    init(scheduler: any DeferredWorkScheduler, runner: DeferredWorkRunner) {
        self.scheduler = scheduler
        self.runner = runner
    }

    var state: State { current.withLock { $0 } }

    func run() async {
        current.withLock { $0 = .running }
        let (scheduler, runner) = (self.scheduler, self.runner)
        await cancelWhenGracefulShutdown {
            await withTaskCancellationHandler {
                await scheduler.run()
            } onCancel: {
                // Closed before the loop notices: the running batch is the last one.
                runner.gate.shutDown()
            }
        }
        current.withLock { $0 = .stopping }
        await runner.stopAll()
        current.withLock { $0 = .stopped }
    }
}
