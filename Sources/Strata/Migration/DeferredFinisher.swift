import Foundation
import GRDB

/// Runs the tasks of a store's deferred ledger. (Initial offline form: each task in one
/// transaction; the online batched form replaces it.)
struct DeferredFinisher {
    let store: PersistentStore
    let options: FinishOptions
    let progress: (@Sendable (DeferredProgress) -> Void)?

    func run() async throws -> FinishReport {
        let start = ContinuousClock.now
        var report = FinishReport(tasksFinished: 0, tasksRemaining: 0, rowsProcessed: 0, batches: 0, seconds: 0, stoppedEarly: false)
        let entries = try readEntries()
        for (i, entry) in entries.enumerated() {
            if let max = options.maxTasks, report.tasksFinished >= max { break }
            if Task.isCancelled || !options.shouldContinue() { report.stoppedEarly = true; break }
            try runOffline(entry)
            report.tasksFinished += 1
            report.batches += 1
            report.rowsProcessed += entry.payload.rowsTotal
            var done = entry.task
            done.state = .done
            done.rowsDone = entry.payload.rowsTotal
            progress?(DeferredProgress(task: done, taskIndex: i, taskCount: entries.count))
        }
        report.tasksRemaining = try readEntries().count
        report.stoppedEarly = report.stoppedEarly || (report.tasksRemaining > 0 && options.maxTasks == nil)
        report.seconds = Double((ContinuousClock.now - start).components.attoseconds) / 1e18 + Double((ContinuousClock.now - start).components.seconds)
        return report
    }

    private func readEntries() throws -> [DeferredLedger.Entry] {
        try store.database.read { db in try DeferredLedger.entries(in: db) }
    }

    private func runOffline(_ entry: DeferredLedger.Entry) throws {
        let operation = entry.payload.operation
        try store.database.writeWithoutTransaction { db in
            if operation.requiresForeignKeysOff { try db.execute(sql: "PRAGMA foreign_keys = OFF") }
            defer { if operation.requiresForeignKeysOff { try? db.execute(sql: "PRAGMA foreign_keys = ON") } }
            try db.inTransaction {
                try operation.execute(in: db)
                try DeferredLedger.complete(id: entry.task.id, in: db)
                return .commit
            }
        }
    }
}
