import Foundation

/// Runs blocking work — socket reads and writes, waiting for a process — on a thread of its
/// own. Blocking on one of Swift's cooperative threads (two on a two-core machine) would
/// stall every other test of the process, including their timeouts.
func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// ``offThread(_:)`` for work that cannot fail.
func offThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}

/// ``runCommand(_:_:environment:)`` off the cooperative pool.
@discardableResult
func runCommandOffThread(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) async throws -> (status: Int32, output: String) {
    try await offThread { try runCommand(executable, arguments, environment: environment) }
}
