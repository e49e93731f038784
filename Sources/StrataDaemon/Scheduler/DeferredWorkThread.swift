import Foundation

/// A dedicated thread that runs deferred migration work, as a `TaskExecutor`.
///
/// Finishing deferred work makes blocking SQLite calls (a batch holds its thread for about
/// `batch_budget`); on this thread they take no thread from Swift's cooperative pool (two
/// threads on a two-core machine), which serves the clients' requests. The library's cost
/// delay between batches is a suspension (`Task.sleep`), resumed on this thread.
///
/// ```swift
/// let report = await withTaskExecutorPreference(DeferredWorkThread.shared) {
///     try await store.finishDeferredMigration(options)
/// }
/// ```
public final class DeferredWorkThread: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs` is only touched with `condition` locked.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    /// The daemon's one deferred-work thread.
    public static let shared = DeferredWorkThread(name: "strata-deferred")

    /// Memberwise initializer.
    public init(name: String) {
        let thread = Thread { [unowned self] in self.loop() }
        thread.name = name
        thread.start()
    }

    /// Runs `job` on the thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
