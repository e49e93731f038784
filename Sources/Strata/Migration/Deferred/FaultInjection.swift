import Foundation

/// Crash points for the kill tests: when the environment variable `STRATA_FAULT_POINT` names a
/// point (optionally `name@N` for its N-th hit), the process kills itself with SIGKILL there,
/// exactly as an OOM kill or power loss would stop it. Unset in production: one dictionary
/// lookup per batch.
enum FaultInjection {
    private static let target: (name: String, hit: Int)? = {
        guard let spec = ProcessInfo.processInfo.environment["STRATA_FAULT_POINT"], !spec.isEmpty else { return nil }
        let parts = spec.split(separator: "@")
        return (String(parts[0]), parts.count > 1 ? Int(parts[1]) ?? 1 : 1)
    }()
    nonisolated(unsafe) private static var hits = 0
    private static let lock = NSLock()

    /// Kills the process if `name` is the configured crash point (at its configured hit).
    static func point(_ name: String) {
        guard let target, target.name == name else { return }
        lock.lock()
        hits += 1
        let now = hits
        lock.unlock()
        if now >= target.hit { kill(getpid(), SIGKILL) }
    }
}
