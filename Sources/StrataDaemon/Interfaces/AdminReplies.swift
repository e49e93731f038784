import Foundation
import Strata
import StrataVarlink

// The daemon's state as the types of io.strata.Admin's replies.

extension StrataAdmin.StoreInfo {
    init(_ store: HostedStore) {
        var state = State.ready
        var error: String?
        switch store.state {
        case .ready: break
        case .failed(let reason): (state, error) = (.failed, reason)
        case .closed: state = .closed
        }
        self.init(name: store.name, path: store.configuration.path, state: state, modelVersion: store.modelVersion,
                  targetVersion: store.configuration.targetVersion, deferCleanup: store.configuration.deferCleanup,
                  pendingTasks: store.pendingTasks().count, finishing: store.isFinishing, requests: store.requestCount, error: error,
                  held: Self.held(store.heldTasks()))
    }

    /// `1 task held: 2 clients at Fleet 1, last call 14 s ago; …` (nil when none is).
    static func held(_ tasks: [Int64: String]) -> String? {
        let held = tasks.filter { $0.value.hasPrefix("held: ") }
        guard let first = held.keys.min() else { return nil }
        return "\(held.count) task\(held.count == 1 ? "" : "s") held: " + held[first]!.dropFirst("held: ".count)
    }
}

extension StrataAdmin.SchedulerInfo {
    init(_ status: SchedulerStatus) {
        let stats = status.statistics
        self.init(
            state: status.state, reason: status.reason, paused: status.paused, workingOn: status.workingOn,
            signals: status.signals.map { reading in
                StrataAdmin.SignalInfo(signal: reading.signal.rawValue, label: reading.label, value: reading.value, threshold: reading.threshold,
                                       busy: reading.isBusy, summary: reading.summary)
            },
            unavailable: status.unavailable,
            stats: StrataAdmin.SchedulerStats(
                runs: stats.runs, workSeconds: stats.workSeconds, delaySeconds: stats.delaySeconds,
                windowRuntimeSeconds: status.windowRuntimeSeconds, rowsProcessed: stats.rowsProcessed, batches: stats.batches,
                tasksFinished: stats.tasksFinished, pauses: stats.pauses, pausesByCause: stats.pausesByCause,
                pauseLatencyP50Ms: stats.pauseLatencyP50Milliseconds, pauseLatencyP99Ms: stats.pauseLatencyP99Milliseconds,
                pauseLatencyMaxMs: stats.pauseLatencyMaxMilliseconds, clientWaitMaxMs: stats.clientWaitMaxMilliseconds,
                recentPauses: stats.recentPauses.map { pause in
                    StrataAdmin.PauseInfo(cause: pause.cause, reason: pause.reason, latencyMs: pause.latencyMilliseconds, store: pause.store,
                                          at: Self.timestamp(pause.at))
                },
                errors: stats.errors, lastError: stats.lastError))
    }

    /// ISO 8601 with milliseconds (pause times are compared with clients' clocks).
    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}

extension StrataAdmin.DeferredTaskInfo {
    /// - Parameter held: why the task waits for clients of an older model version, if it does.
    init(_ task: DeferredTask, held: String? = nil) {
        let shown = ShownProgress(task)
        self.init(id: task.id, kind: Kind(task.kind), table: task.table, summary: task.summary, state: State(task.state),
                  rowsDone: shown.done, rowsTotal: shown.total, fraction: shown.fraction, held: held)
    }
}

extension StrataAdmin.DeferredTaskInfo.Kind {
    /// A new kind of task in the library does not compile here until the interface has it.
    init(_ kind: DeferredTask.Kind) {
        switch kind {
        case .rewriteTable: self = .rewriteTable
        case .dropTable: self = .dropTable
        case .createIndex: self = .createIndex
        case .dropIndex: self = .dropIndex
        case .incrementalVacuum: self = .incrementalVacuum
        case .backup: self = .backup
        }
    }
}

extension StrataAdmin.DeferredTaskInfo.State {
    init(_ state: DeferredTask.State) {
        switch state {
        case .pending: self = .pending
        case .running: self = .running
        case .done: self = .done
        }
    }
}

/// A task's progress as operators see it (`pending`, the progress bar): never more done than
/// the total, never 100% before the task is done. A copy counts the rows clients insert while
/// it runs, so its count can pass the total taken when the task was recorded: the total
/// shown grows with it, and the fraction stops at 99% until the task is done.
struct ShownProgress: Hashable {
    var done: Int64
    var total: Int64
    var fraction: Double

    init(_ task: DeferredTask) {
        done = max(0, task.rowsDone)
        total = max(task.rowsTotal, done)
        fraction = task.state == .done ? 1 : min(0.99, max(0, task.fraction))
    }
}

extension StrataAdmin.FinishProgress {
    init(_ progress: DeferredProgress, store: String) {
        self.init(store: store, taskId: progress.task.id, taskIndex: progress.taskIndex, taskCount: progress.taskCount,
                  summary: progress.task.summary, rowsDone: ShownProgress(progress.task).done, rowsTotal: ShownProgress(progress.task).total,
                  fraction: ShownProgress(progress.task).fraction)
    }
}

extension StrataAdmin.FinishResult {
    /// A store's result; a failed run reports what it finished and what the ledger still holds.
    init(_ result: DeferredWorkRunner.Result) {
        let report = result.report
        let failure = result.failure
        self.init(store: result.store, tasksFinished: report?.tasksFinished ?? failure?.tasksFinished ?? 0,
                  tasksRemaining: report?.tasksRemaining ?? failure?.tasksRemaining ?? result.pendingTasks,
                  rowsProcessed: report?.rowsProcessed ?? failure?.rowsProcessed ?? 0, batches: report?.batches ?? failure?.batches ?? 0,
                  seconds: report?.seconds ?? failure?.seconds ?? 0, stoppedEarly: report?.stoppedEarly ?? (result.error != nil),
                  error: result.error, reclaimLeft: report?.spaceReclaimLeft == true ? true : nil, freePages: result.freePages,
                  replicaLag: result.replicaLag)
    }
}

extension StrataAdmin.Setting {
    init(key: String, _ settings: SchedulerSettings) {
        self.init(key: key, value: settings.value(of: key) ?? "", description: SchedulerSettings.descriptions[key] ?? "")
    }
}
