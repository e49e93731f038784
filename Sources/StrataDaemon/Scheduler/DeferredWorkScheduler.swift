import Foundation
import StrataVarlink

/// What the daemon needs from the idle scheduler (see the scheduler issue): it is started
/// with the daemon, reports its state and the reason for it, can be paused and resumed, and
/// its settings can be read and changed at run time.
///
/// The scheduler decides *when* deferred work may run; ``DeferredWorkRunner`` runs it.
public protocol DeferredWorkScheduler: Actor {
    /// Runs until the task is cancelled: watches the signals and starts work when idle.
    func run() async
    /// The scheduler's state and why (`idle`, `waiting: io pressure 31% > 10%`, `paused: …`).
    func status() -> SchedulerStatus
    /// Stops starting work and makes running idle-respecting work step aside at its next batch.
    func pause(reason: String) -> SchedulerStatus
    func resume() -> SchedulerStatus
    func settings() -> SchedulerSettings
    /// Changes one setting; returns the previous value.
    func set(_ key: String, to value: String) throws(SchedulerSettingError) -> String
    /// Replaces the settings (configuration reload).
    func apply(_ settings: SchedulerSettings)
    /// Whether idle-respecting work may run now, and if not, why.
    func permission() -> (allowed: Bool, reason: String)
    /// The gate that idle-respecting batches check between batches (synchronously).
    nonisolated var gate: SchedulerGate { get }
    /// Answers when the scheduler's actor is responsive (for the watchdog).
    func heartbeat()
}

/// The scheduler's state for `Status`.
public struct SchedulerStatus: Sendable, Hashable {
    /// What the scheduler is doing: the state io.strata.Admin declares (`SchedulerInfo.state`).
    public typealias State = StrataAdmin.SchedulerInfo.State
    /// The state, in words (see the interface definition for the values).
    public var state: State
    /// Why, in words, and what to do.
    public var reason: String
    /// Whether it is paused.
    public var paused: Bool
    /// The latest reading of every enabled signal.
    public var signals: [SignalReading]
    /// Enabled signals that cannot be read here, with why.
    public var unavailable: [String]
    /// Work time used in the current maintenance window (or day).
    public var windowRuntimeSeconds: Double
    /// The store working now, if any.
    public var workingOn: String?
    /// What the scheduler did since the daemon started.
    public var statistics: SchedulerStatistics

    /// Memberwise initializer.
    public init(state: State, reason: String, paused: Bool, signals: [SignalReading] = [], unavailable: [String] = [],
                windowRuntimeSeconds: Double = 0, workingOn: String? = nil, statistics: SchedulerStatistics = SchedulerStatistics()) {
        self.state = state
        self.reason = reason
        self.paused = paused
        self.signals = signals
        self.unavailable = unavailable
        self.windowRuntimeSeconds = windowRuntimeSeconds
        self.workingOn = workingOn
        self.statistics = statistics
    }
}
