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
    public init() {}
    public var now: ContinuousClock.Instant { .now }
    public var local: LocalTime { .now }
    public func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
}
