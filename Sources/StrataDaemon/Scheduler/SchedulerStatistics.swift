import Foundation

/// What the scheduler did since the daemon started (in `Status` and as metrics): time spent,
/// rows processed, and every pause with its reason and how long the work took to step aside.
public struct SchedulerStatistics: Sendable, Hashable {
    /// Work periods started (each after the machine became idle).
    public var runs = 0
    /// Time spent running deferred work (batches and the cost delay between them).
    public var workSeconds = 0.0
    /// Of which cost delay slept between batches.
    public var delaySeconds = 0.0
    /// Rows copied or deleted by the run.
    public var rowsProcessed: Int64 = 0
    /// Batches (write transactions) run.
    public var batches = 0
    /// Tasks finished by the run.
    public var tasksFinished = 0
    /// Times running work was stopped before it was done, by cause (`signal`, `paused`,
    /// `window`, `max_runtime`, …).
    public var pauses = 0
    /// Pauses, by cause.
    public var pausesByCause: [String: Int] = [:]
    /// The most recent pauses, oldest first (at most ``recentLimit``).
    public var recentPauses: [PauseRecord] = []
    /// Pause latency (first busy reading → work stopped) since the daemon started, in ms: read
    /// from the exported histogram (`strata_scheduler_pause_latency_seconds`) and gauge.
    public var pauseLatencyP50Milliseconds = 0.0
    /// 99th percentile pause latency, in milliseconds.
    public var pauseLatencyP99Milliseconds = 0.0
    /// Longest pause latency, in milliseconds.
    public var pauseLatencyMaxMilliseconds = 0.0
    /// The longest a client arriving at the worst moment could have waited for a store's
    /// write lock behind each step of deferred work (``FinishReport/longestClientWaits``),
    /// scheduler turns and runs on request alike, in milliseconds by step name.
    public var clientWaitMaxMilliseconds: [String: Double] = [:]
    /// Failed turns and the last failure.
    public var errors = 0
    /// The last error, in words.
    public var lastError: String?

    /// How many recent pauses are kept.
    public static let recentLimit = 32

    /// Memberwise initializer.
    public init() {}
}

/// One pause of running work.
public struct PauseRecord: Sendable, Hashable {
    /// `signal`, `paused`, `window`, `max_runtime`, `hysteresis`.
    public var cause: String
    /// The status reason at the first busy reading ("waiting: daemon requests 240/s > 5/s").
    public var reason: String
    /// From the first busy reading to the work having stopped.
    public var latencyMilliseconds: Double
    /// The store that was working.
    public var store: String?
    /// When the work stopped (wall clock).
    public var at: Date
}
