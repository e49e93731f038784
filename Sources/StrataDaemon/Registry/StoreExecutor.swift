import NIOPosix

/// The threads one hosted store's blocking work runs on: SQLite calls, predicate parsing and
/// compilation, result encoding, checkpoints and backups.
///
/// Each store has its own (``Limits/storeThreads``), so a slow call — a predicate that takes
/// long to compile, a huge fetch, a backup — holds at most that store's threads: other
/// stores' calls, the event loops, Swift's cooperative pool and the watchdog loop keep
/// running. Calls beyond the thread count queue for that store only.
final class StoreExecutor: Sendable {
    private let pool: NIOThreadPool

    init(threads: Int = Limits.storeThreads) {
        pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
    }

    /// Runs `body` on one of the store's threads.
    ///
    /// - Throws: `NIOThreadPoolError.ThreadPoolInactive` after ``shutDown()``, or what `body` throws.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await pool.runIfActive(body)
    }

    /// Refuses new work; running work finishes on its own (nobody waits for it).
    func shutDown() {
        pool.shutdownGracefully { _ in }
    }
}
