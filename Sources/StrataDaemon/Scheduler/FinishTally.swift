import Strata
import Synchronization

/// What a deferred-work run did so far, from the ledger before it and its progress reports:
/// the account of a run that failed part-way (the library throws and returns no report), so
/// that a failure never reads as "finished, 0 remaining".
final class FinishTally: Sendable {
    /// A failed run's account.
    struct Summary: Sendable, Hashable {
        var tasksFinished: Int
        var tasksRemaining: Int
        var rowsProcessed: Int64
        var batches: Int
        var seconds: Double
    }

    private struct State {
        var before: [Int64: Int64] = [:]
        var rowsDone: [Int64: Int64] = [:]
        var batches = 0
    }

    private let state = Mutex(State())

    /// The ledger's pending tasks before the run.
    func start(with pending: [DeferredTask]) {
        state.withLock { state in
            state.before = Dictionary(pending.map { ($0.id, $0.rowsDone) }, uniquingKeysWith: { first, _ in first })
        }
    }

    /// One committed batch.
    func record(_ progress: DeferredProgress) {
        state.withLock { state in
            state.batches += 1
            state.rowsDone[progress.task.id] = max(state.rowsDone[progress.task.id] ?? 0, progress.task.rowsDone)
        }
    }

    /// The run's account given the ledger's pending tasks now: tasks pending before and gone
    /// now finished; rows are those of committed batches.
    func summary(remaining: [DeferredTask], seconds: Double) -> Summary {
        state.withLock { state in
            let left = Set(remaining.map(\.id))
            let finished = state.before.keys.filter { !left.contains($0) }.count
            let rows = state.rowsDone.reduce(Int64(0)) { sum, entry in sum + max(0, entry.value - (state.before[entry.key] ?? 0)) }
            return Summary(tasksFinished: finished, tasksRemaining: remaining.count, rowsProcessed: rows,
                           batches: state.batches, seconds: seconds)
        }
    }
}
