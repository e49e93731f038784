import NIOPosix
import Synchronization

/// The threads one hosted store's blocking work runs on: SQLite calls, predicate parsing and
/// compilation, result encoding, checkpoints and backups.
///
/// Each store has its own (``Limits/storeThreads``), so a slow call — a predicate that takes
/// long to compile, a huge fetch, a backup — holds at most that store's threads: other
/// stores' calls, the event loops, Swift's cooperative pool and the watchdog keep running.
/// Calls beyond the thread count queue for that store only.
final class StoreExecutor: Sendable {
    private let pool: NIOThreadPool

    init(threads: Int = Limits.storeThreads) {
        pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
    }

    /// Runs `body` on one of the store's threads. A cancelled caller stops waiting (the work
    /// itself runs to its end, its result dropped): at the shutdown deadline, a call blocked
    /// in SQLite does not hold the daemon.
    ///
    /// - Throws: `NIOThreadPoolError.ThreadPoolInactive` after ``shutDown()``,
    ///   `CancellationError` when the caller is cancelled first, or what `body` throws.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let waiter = Mutex<Waiter<T>>(.waiting(nil))
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let cancelled = waiter.withLock { state -> Bool in
                    guard case .waiting = state else { return true }
                    state = .waiting(continuation)
                    return false
                }
                if cancelled { return continuation.resume(throwing: CancellationError()) }
                pool.submit { state in
                    let result: Result<T, any Error> = state == .active ? Result { try body() } : .failure(NIOThreadPoolError.ThreadPoolInactive())
                    Self.finish(waiter, with: result)
                }
            }
        } onCancel: {
            Self.finish(waiter, with: .failure(CancellationError()))
        }
    }

    /// Resumes the caller once: with the work's result, or with the cancellation.
    private static func finish<T>(_ waiter: borrowing Mutex<Waiter<T>>, with result: Result<T, any Error>) {
        let continuation = waiter.withLock { state -> CheckedContinuation<T, any Error>? in
            defer { state = .finished }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        continuation?.resume(with: result)
    }

    /// Refuses new work; running work finishes on its own (nobody waits for it).
    func shutDown() {
        pool.shutdownGracefully { _ in }
    }
}

/// A caller of ``StoreExecutor/run(_:)``: waiting (with its continuation once registered), or
/// already resumed.
private enum Waiter<T: Sendable>: Sendable {
    case waiting(CheckedContinuation<T, any Error>?)
    case finished
}
