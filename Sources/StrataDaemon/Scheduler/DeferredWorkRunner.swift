import Foundation
import Logging
import Strata
import Synchronization

/// Runs deferred migration work on hosted stores on request (`FinishDeferred`), in budgeted
/// batches, stepping aside at the next batch when the scheduler closes its gate (for
/// idle-respecting runs) or the daemon stops.
public final class DeferredWorkRunner: Sendable {
    /// What one store's run did.
    public struct Result: Sendable {
        public var store: String
        public var report: FinishReport?
        public var error: String?
    }

    private let gate: SchedulerGate
    private let logger: Logger
    private let background = Mutex<[UUID: Task<Void, Never>]>([:])

    public init(gate: SchedulerGate, logger: Logger) {
        self.gate = gate
        self.logger = logger
    }

    /// Finishes the deferred work of `stores` one after the other.
    ///
    /// - Parameters:
    ///   - now: run even when the scheduler is paused or the machine busy (only shutdown stops it).
    ///   - progress: called after each batch.
    public func finish(_ stores: [HostedStore], now: Bool, settings: SchedulerSettings,
                       progress: @escaping @Sendable (String, DeferredProgress) -> Void) async -> [Result] {
        var results: [Result] = []
        for hosted in stores {
            guard let store = hosted.store, hosted.state == .ready else {
                results.append(Result(store: hosted.name, report: nil, error: "the store is not open"))
                continue
            }
            guard hosted.beginFinishing() else {
                results.append(Result(store: hosted.name, report: nil, error: "deferred work already runs on this store"))
                continue
            }
            defer { hosted.endFinishing() }
            let gate = self.gate
            let options = FinishOptions(batchBudget: settings.batchBudget, pauseBetweenBatches: settings.pauseBetweenBatches,
                                        shouldContinue: { now ? gate.allowsForcedWork : gate.allowsIdleWork })
            let name = hosted.name
            logger.info("finishing deferred work", metadata: ["strata.store": "\(name)", "strata.now": "\(now)"])
            do {
                let report = try await store.finishDeferredMigration(options) { progress(name, $0) }
                logger.info("deferred work run ended", metadata: [
                    "strata.store": "\(name)", "strata.tasks_finished": "\(report.tasksFinished)",
                    "strata.tasks_remaining": "\(report.tasksRemaining)", "strata.rows": "\(report.rowsProcessed)",
                    "strata.stopped_early": "\(report.stoppedEarly)",
                ])
                results.append(Result(store: name, report: report, error: nil))
            } catch {
                logger.error("deferred work failed", metadata: ["strata.store": "\(name)", "strata.error": "\(error)"])
                results.append(Result(store: name, report: nil, error: "\(error)"))
            }
        }
        return results
    }

    /// Starts ``finish(_:now:settings:progress:)`` in the background.
    public func start(_ stores: [HostedStore], now: Bool, settings: SchedulerSettings) {
        let id = UUID()
        let task = Task {
            _ = await self.finish(stores, now: now, settings: settings) { _, _ in }
            _ = self.background.withLock { $0.removeValue(forKey: id) }
        }
        background.withLock { $0[id] = task }
    }

    /// Stops every run at its next batch and waits for them (shutdown).
    public func stopAll() async {
        gate.shutDown()
        let tasks = background.withLock { Array($0.values) }
        for task in tasks { await task.value }
    }
}
