import Foundation

// The named types of io.strata.Admin (`type …` in the IDL).

extension StrataAdmin {
    /// A hosted store. `state`: `ready`, `failed` or `closed`.
    public struct StoreInfo: Codable, Sendable, Hashable {
        public var name: String
        public var path: String
        public var state: String
        public var modelVersion: String?
        public var targetVersion: String?
        public var deferCleanup: Bool
        public var pendingTasks: Int
        public var finishing: Bool
        public var requests: Int
        public var error: String?

        public init(name: String, path: String, state: String, modelVersion: String?, targetVersion: String?, deferCleanup: Bool,
                    pendingTasks: Int, finishing: Bool, requests: Int, error: String?) {
            self.name = name
            self.path = path
            self.state = state
            self.modelVersion = modelVersion
            self.targetVersion = targetVersion
            self.deferCleanup = deferCleanup
            self.pendingTasks = pendingTasks
            self.finishing = finishing
            self.requests = requests
            self.error = error
        }
    }

    /// The idle scheduler: state (`idle`, `waiting`, `running`, `paused`, `disabled`) and the
    /// reason for it, the latest signal readings, and what it did.
    public struct SchedulerInfo: Codable, Sendable, Hashable {
        public var state: String
        public var reason: String
        public var paused: Bool
        public var workingOn: String?
        public var signals: [SignalInfo]?
        public var unavailable: [String]?
        public var stats: SchedulerStats?

        public init(state: String, reason: String, paused: Bool, workingOn: String?, signals: [SignalInfo]?, unavailable: [String]?,
                    stats: SchedulerStats?) {
            self.state = state
            self.reason = reason
            self.paused = paused
            self.workingOn = workingOn
            self.signals = signals
            self.unavailable = unavailable
            self.stats = stats
        }
    }

    /// One signal's latest reading against its threshold.
    public struct SignalInfo: Codable, Sendable, Hashable {
        public var signal: String
        public var label: String
        public var value: Double
        public var threshold: Double
        public var busy: Bool
        public var summary: String

        public init(signal: String, label: String, value: Double, threshold: Double, busy: Bool, summary: String) {
            self.signal = signal
            self.label = label
            self.value = value
            self.threshold = threshold
            self.busy = busy
            self.summary = summary
        }
    }

    /// A pause of running deferred work: its cause and reason, and the time from the first
    /// busy reading to the work having stopped. `at`: ISO 8601 with milliseconds.
    public struct PauseInfo: Codable, Sendable, Hashable {
        public var cause: String
        public var reason: String
        public var latencyMs: Double
        public var store: String?
        public var at: String

        public init(cause: String, reason: String, latencyMs: Double, store: String?, at: String) {
            self.cause = cause
            self.reason = reason
            self.latencyMs = latencyMs
            self.store = store
            self.at = at
        }
    }

    /// What the scheduler did since the daemon started.
    public struct SchedulerStats: Codable, Sendable, Hashable {
        public var runs: Int
        public var workSeconds: Double
        public var delaySeconds: Double
        public var windowRuntimeSeconds: Double
        public var rowsProcessed: Int64
        public var batches: Int
        public var tasksFinished: Int
        public var pauses: Int
        public var pausesByCause: [String: Int]
        public var pauseLatencyP50Ms: Double
        public var pauseLatencyP99Ms: Double
        public var pauseLatencyMaxMs: Double
        public var recentPauses: [PauseInfo]
        public var errors: Int
        public var lastError: String?

        public init(runs: Int, workSeconds: Double, delaySeconds: Double, windowRuntimeSeconds: Double, rowsProcessed: Int64, batches: Int,
                    tasksFinished: Int, pauses: Int, pausesByCause: [String: Int], pauseLatencyP50Ms: Double, pauseLatencyP99Ms: Double,
                    pauseLatencyMaxMs: Double, recentPauses: [PauseInfo], errors: Int, lastError: String?) {
            self.runs = runs
            self.workSeconds = workSeconds
            self.delaySeconds = delaySeconds
            self.windowRuntimeSeconds = windowRuntimeSeconds
            self.rowsProcessed = rowsProcessed
            self.batches = batches
            self.tasksFinished = tasksFinished
            self.pauses = pauses
            self.pausesByCause = pausesByCause
            self.pauseLatencyP50Ms = pauseLatencyP50Ms
            self.pauseLatencyP99Ms = pauseLatencyP99Ms
            self.pauseLatencyMaxMs = pauseLatencyMaxMs
            self.recentPauses = recentPauses
            self.errors = errors
            self.lastError = lastError
        }
    }

    /// One task of a store's deferred ledger.
    public struct DeferredTaskInfo: Codable, Sendable, Hashable {
        public var id: Int64
        public var kind: String
        public var table: String?
        public var summary: String
        public var state: String
        public var rowsDone: Int64
        public var rowsTotal: Int64
        public var fraction: Double

        public init(id: Int64, kind: String, table: String?, summary: String, state: String, rowsDone: Int64, rowsTotal: Int64,
                    fraction: Double) {
            self.id = id
            self.kind = kind
            self.table = table
            self.summary = summary
            self.state = state
            self.rowsDone = rowsDone
            self.rowsTotal = rowsTotal
            self.fraction = fraction
        }
    }

    public struct StorePending: Codable, Sendable, Hashable {
        public var store: String
        public var tasks: [DeferredTaskInfo]

        public init(store: String, tasks: [DeferredTaskInfo]) {
            self.store = store
            self.tasks = tasks
        }
    }

    /// Progress of a `FinishDeferred` run, after a batch.
    public struct FinishProgress: Codable, Sendable, Hashable {
        public var store: String
        public var taskId: Int64
        public var taskIndex: Int
        public var taskCount: Int
        public var summary: String
        public var rowsDone: Int64
        public var rowsTotal: Int64
        public var fraction: Double

        public init(store: String, taskId: Int64, taskIndex: Int, taskCount: Int, summary: String, rowsDone: Int64, rowsTotal: Int64,
                    fraction: Double) {
            self.store = store
            self.taskId = taskId
            self.taskIndex = taskIndex
            self.taskCount = taskCount
            self.summary = summary
            self.rowsDone = rowsDone
            self.rowsTotal = rowsTotal
            self.fraction = fraction
        }
    }

    /// What a `FinishDeferred` run did on one store. `tasksRemaining` is read from the ledger
    /// after the run, also when it failed (`error` is set).
    public struct FinishResult: Codable, Sendable, Hashable {
        public var store: String
        public var tasksFinished: Int
        public var tasksRemaining: Int
        public var rowsProcessed: Int64
        public var batches: Int
        public var seconds: Double
        public var stoppedEarly: Bool
        public var error: String?

        public init(store: String, tasksFinished: Int, tasksRemaining: Int, rowsProcessed: Int64, batches: Int, seconds: Double,
                    stoppedEarly: Bool, error: String?) {
            self.store = store
            self.tasksFinished = tasksFinished
            self.tasksRemaining = tasksRemaining
            self.rowsProcessed = rowsProcessed
            self.batches = batches
            self.seconds = seconds
            self.stoppedEarly = stoppedEarly
            self.error = error
        }
    }

    /// A scheduler setting, gh-ost style: key, value and what it means.
    public struct Setting: Codable, Sendable, Hashable {
        public var key: String
        public var value: String
        public var description: String

        public init(key: String, value: String, description: String) {
            self.key = key
            self.value = value
            self.description = description
        }
    }
}
