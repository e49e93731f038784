import Foundation

/// Time as the scheduler sees it: a monotonic instant for hysteresis and latencies, the local
/// wall-clock time for maintenance windows, and sleeping. Tests inject a fake one.
public protocol SchedulerClock: Sendable {
    var now: ContinuousClock.Instant { get }
    var local: LocalTime { get }
    func sleep(for duration: Duration) async throws
}

/// The real clocks.
public struct SystemSchedulerClock: SchedulerClock {
    /// Memberwise initializer.
    public init() {}
    /// Run even when the scheduler is paused or the machine busy.
    public var now: ContinuousClock.Instant { .now }
    /// The local wall-clock time now.
    public var local: LocalTime { .now }
    /// Sleeps on the continuous clock.
    public func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
}
