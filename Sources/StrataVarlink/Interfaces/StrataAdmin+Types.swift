import Foundation

// Generated from varlink/io.strata.Admin.varlink and varlink/io.strata.Admin.swift.json:
// the named types (`type …` in the IDL). Do not edit: change those files and run
// scripts/generate-varlink-definitions.sh (InterfaceDefinitionTests checks it was run).

extension StrataAdmin {
    /// A hosted store: ready, failed (`error` says why) or closed.
    public struct StoreInfo: Codable, Sendable, Hashable {
        /// Where a hosted store is.
        public enum State: String, VarlinkStringEnum {
            case ready, failed, closed
        }

        /// The store's name (as configured).
        public var name: String
        /// The store file's path.
        public var path: String
        /// Ready, failed or closed.
        public var state: State
        /// The model version the store is open with.
        public var modelVersion: String?
        /// The version to reach.
        public var targetVersion: String?
        /// Whether migration cleanup is deferred to the ledger.
        public var deferCleanup: Bool
        /// Pending deferred tasks.
        public var pendingTasks: Int
        /// Whether deferred work runs on it now.
        public var finishing: Bool
        /// Calls served.
        public var requests: Int
        /// The error, in words, when it failed.
        public var error: String?

        /// Memberwise initializer.
        public init(name: String, path: String, state: State, modelVersion: String?, targetVersion: String?, deferCleanup: Bool,
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

    /// The idle scheduler: its state and the reason for it, the latest signal readings, and what it did.
    public struct SchedulerInfo: Codable, Sendable, Hashable {
        /// What the idle scheduler does.
        public enum State: String, VarlinkStringEnum {
            case idle, waiting, running, paused, disabled
        }

        /// Idle, waiting, running, paused or disabled.
        public var state: State
        /// Why, in words, and what to do.
        public var reason: String
        /// Whether it is paused.
        public var paused: Bool
        /// The store deferred work runs on now, if any.
        public var workingOn: String?
        /// The latest signal readings.
        public var signals: [SignalInfo]?
        /// Stores that are configured but not usable.
        public var unavailable: [String]?
        /// What the scheduler did since the daemon started.
        public var stats: SchedulerStats?

        /// Memberwise initializer.
        public init(state: State, reason: String, paused: Bool, workingOn: String?, signals: [SignalInfo]?, unavailable: [String]?,
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
        /// The signal's name: `cpu`, `io`, `requests`, …
        public var signal: String
        /// What the reading is, in words: `cpu pressure avg10`.
        public var label: String
        /// The latest reading.
        public var value: Double
        /// The threshold above which it counts as busy.
        public var threshold: Double
        /// Whether the signal is above its threshold.
        public var busy: Bool
        /// What the task does and why, in words.
        public var summary: String

        /// Memberwise initializer.
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
        /// The signal (or request) that caused it.
        public var cause: String
        /// Why, in words, and what to do.
        public var reason: String
        /// Time from the first busy reading to the work having stopped, in milliseconds.
        public var latencyMs: Double
        /// The store's name (as configured).
        public var store: String?
        /// When it happened.
        public var at: String

        /// Memberwise initializer.
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
        /// Runs of deferred work.
        public var runs: Int
        /// Time spent running deferred work, in seconds.
        public var workSeconds: Double
        /// Cost delay slept between batches, in seconds.
        public var delaySeconds: Double
        /// Work time used in the current maintenance window, in seconds.
        public var windowRuntimeSeconds: Double
        /// Rows copied or deleted by the run.
        public var rowsProcessed: Int64
        /// Batches (write transactions) run.
        public var batches: Int
        /// Tasks finished by the run.
        public var tasksFinished: Int
        /// Times running work stepped aside.
        public var pauses: Int
        /// Pauses, by cause.
        public var pausesByCause: [String: Int]
        /// Median pause latency, in milliseconds.
        public var pauseLatencyP50Ms: Double
        /// 99th percentile pause latency, in milliseconds.
        public var pauseLatencyP99Ms: Double
        /// Longest pause latency, in milliseconds.
        public var pauseLatencyMaxMs: Double
        /// The most recent pauses, newest last.
        public var recentPauses: [PauseInfo]
        /// Failed runs on this store.
        public var errors: Int
        /// The last error, in words.
        public var lastError: String?

        /// Memberwise initializer.
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
        /// What a deferred task does.
        public enum Kind: String, VarlinkStringEnum {
            case rewriteTable, dropTable, createIndex, dropIndex, incrementalVacuum, backup
        }

        /// Where a deferred task is.
        public enum State: String, VarlinkStringEnum {
            case pending, running, done
        }

        /// The task's id in the ledger.
        public var id: Int64
        /// What the task does.
        public var kind: Kind
        /// The table the task works on, if it has one.
        public var table: String?
        /// What the task does and why, in words.
        public var summary: String
        /// Pending, running or done.
        public var state: State
        /// Rows processed so far.
        public var rowsDone: Int64
        /// Rows to process, estimated when the task was recorded.
        public var rowsTotal: Int64
        /// Progress in 0...1.
        public var fraction: Double

        /// Memberwise initializer.
        public init(id: Int64, kind: Kind, table: String?, summary: String, state: State, rowsDone: Int64, rowsTotal: Int64,
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

    /// The pending deferred tasks of one store.
    public struct StorePending: Codable, Sendable, Hashable {
        /// The store's name (as configured).
        public var store: String
        /// The pending tasks.
        public var tasks: [DeferredTaskInfo]

        /// Memberwise initializer.
        public init(store: String, tasks: [DeferredTaskInfo]) {
            self.store = store
            self.tasks = tasks
        }
    }

    /// Progress of a `FinishDeferred` run, after a batch.
    public struct FinishProgress: Codable, Sendable, Hashable {
        /// The store's name (as configured).
        public var store: String
        /// The task's id in the ledger.
        public var taskId: Int64
        /// Index of the task among those of the run (0-based).
        public var taskIndex: Int
        /// Tasks of the run.
        public var taskCount: Int
        /// What the task does and why, in words.
        public var summary: String
        /// Rows processed so far.
        public var rowsDone: Int64
        /// Rows to process, estimated when the task was recorded.
        public var rowsTotal: Int64
        /// Progress in 0...1.
        public var fraction: Double

        /// Memberwise initializer.
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
        /// The store's name (as configured).
        public var store: String
        /// Tasks finished by the run.
        public var tasksFinished: Int
        /// Tasks left in the ledger after the run.
        public var tasksRemaining: Int
        /// Rows copied or deleted by the run.
        public var rowsProcessed: Int64
        /// Batches (write transactions) run.
        public var batches: Int
        /// Wall-clock time of the run, in seconds.
        public var seconds: Double
        /// Whether the run stopped before the ledger was empty.
        public var stoppedEarly: Bool
        /// The error, in words, when it failed.
        public var error: String?

        /// Memberwise initializer.
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
        /// The setting's key.
        public var key: String
        /// The setting's current value, as text.
        public var value: String
        /// A description in words.
        public var description: String

        /// Memberwise initializer.
        public init(key: String, value: String, description: String) {
            self.key = key
            self.value = value
            self.description = description
        }
    }
}
