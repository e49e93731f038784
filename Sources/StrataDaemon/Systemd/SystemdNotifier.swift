import CSystemd
import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Tells the service manager about the daemon's state through `sd_notify(3)`: readiness,
/// status text, reloads, shutdown, start-up extensions and watchdog pings.
///
/// Without `NOTIFY_SOCKET` (not run by systemd) every call is a cheap no-op.
public struct SystemdNotifier: Sendable {
    /// Memberwise initializer.
    public init() {}

    /// Whether a service manager listens (`NOTIFY_SOCKET` is set).
    public var isEnabled: Bool { getenv("NOTIFY_SOCKET") != nil }

    /// Sends raw assignments (`READY=1\nSTATUS=…`). Returns false when nothing listens or
    /// sending failed.
    @discardableResult
    public func notify(_ assignments: [String]) -> Bool {
        let text = assignments.joined(separator: "\n")
        return sd_notify(0, text) > 0
    }

    /// `READY=1` with a `STATUS=` line.
    public func ready(status: String) {
        notify(["READY=1", "STATUS=\(status)", "MAINPID=\(getpid())"])
    }

    /// A `STATUS=` line.
    public func status(_ text: String) {
        notify(["STATUS=\(text)"])
    }

    /// `RELOADING=1` with the `MONOTONIC_USEC` systemd needs to match it to `READY=1`.
    public func reloading(status: String) {
        notify(["RELOADING=1", "STATUS=\(status)", "MONOTONIC_USEC=\(Self.monotonicMicroseconds())"])
    }

    /// `STOPPING=1` with a `STATUS=` line.
    public func stopping(status: String) {
        notify(["STOPPING=1", "STATUS=\(status)"])
    }

    /// Asks for more start-up (or shutdown) time: `EXTEND_TIMEOUT_USEC`.
    public func extendTimeout(by duration: Duration) {
        notify(["EXTEND_TIMEOUT_USEC=\(Int64(duration.seconds * 1_000_000))"])
    }

    /// `WATCHDOG=1`.
    public func watchdogPing() {
        notify(["WATCHDOG=1"])
    }

    /// The watchdog interval systemd expects pings within (`WATCHDOG_USEC`), nil when off.
    public var watchdogInterval: Duration? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return .microseconds(Int64(usec))
    }

    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
    }
}
