import Synchronization

/// A synchronous yes/no that deferred batches check between batches (`FinishOptions.shouldContinue`).
/// The scheduler closes it on pause or when load returns; shutdown closes it for good.
public final class SchedulerGate: Sendable {
    private struct State {
        var open = true
        var shuttingDown = false
    }
    private let state = Mutex(State())

    /// Memberwise initializer.
    public init() {}

    /// Opens or closes the gate.
    public func set(open: Bool) { state.withLock { $0.open = open } }
    /// Closes the gate permanently (daemon shutdown): even `now` work stops at its next batch.
    public func shutDown() { state.withLock { $0.shuttingDown = true } }

    /// Whether idle-respecting work may continue.
    public var allowsIdleWork: Bool { state.withLock { $0.open && !$0.shuttingDown } }
    /// Whether work started with `now` may continue (only shutdown stops it).
    public var allowsForcedWork: Bool { state.withLock { !$0.shuttingDown } }
}
