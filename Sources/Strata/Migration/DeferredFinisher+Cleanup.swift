import Foundation
import GRDB

extension DeferredFinisher {
    // MARK: - Table drop

    /// Deletes a table's rows in batches (its indexes shrink with them), then drops the empty
    /// table — an O(1) statement by then.
    func runDrop(_ step: TaskStep, table: String) async throws -> Bool {
        var state = step.entry.progress
        while true {
            guard await mayContinue() else { return false }
            let batchStart = ContinuousClock.now
            let before = state.rowsDone
            let remaining = try dropBatch(table, size: step.counters.batchSize, state: &state, step: step)
            finishedBatch(step, started: batchStart, rows: state.rowsDone - before, rowsDone: state.rowsDone, done: !remaining)
            if !remaining { return true }
            guard await pause() else { return false }
        }
    }

    /// Deletes one batch of rows (foreign keys off: the table is going away); drops the table
    /// once empty. Returns whether rows remain.
    private func dropBatch(_ table: String, size: Int, state: inout DeferredLedger.Progress, step: TaskStep) throws -> Bool {
        let t = quoteIdentifier(table)
        var next = state
        let more: Bool = try store.database.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            defer { try? db.execute(sql: "PRAGMA foreign_keys = ON") }
            return try batchInTransaction(step.session, db) {
                guard try db.tableExists(table) else {
                    try DeferredLedger.complete(id: step.id, in: db)
                    return false
                }
                // A rowid range from the start of the table: leaf pages empty in order and are freed.
                let upper = try Int64.fetchOne(db, sql: "SELECT rowid FROM \(t) ORDER BY rowid LIMIT 1 OFFSET ?", arguments: [size - 1])
                if let upper {
                    try db.execute(sql: "DELETE FROM \(t) WHERE rowid <= ?", arguments: [upper])
                } else {
                    try db.execute(sql: "DELETE FROM \(t)")
                }
                let deleted = Int64(db.changesCount)
                next.rowsDone += deleted
                FaultInjection.point("drop.mid-batch")
                if deleted < size {
                    try db.execute(sql: "DROP TABLE \(t)")
                    try DeferredLedger.complete(id: step.id, in: db)
                    return false
                }
                try DeferredLedger.saveProgress(next, id: step.id, in: db)
                return true
            }
        }
        step.session.checkpointer?.checkpointIfDue()
        state = next
        return more
    }

    /// One transaction on `db` (already on the writer), committed like ``batch(_:_:)``.
    private func batchInTransaction<T>(_ session: Session, _ db: Database, _ body: () throws -> T) throws -> T {
        if session.synchronous > 1 { try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        defer { if session.synchronous > 1 { try? db.execute(sql: "PRAGMA synchronous = \(session.synchronous)") } }
        var result: T?
        try db.inTransaction {
            result = try body()
            return .commit
        }
        return result!
    }

    // MARK: - Incremental vacuum

    /// Frees pages in batches (each `PRAGMA incremental_vacuum(N)` moves up to N pages from the
    /// end of the file into free slots and truncates it).
    func runVacuum(_ step: TaskStep) async throws -> Bool {
        step.counters.batchSize = 128   // pages
        while true {
            guard await mayContinue() else { return false }
            let batchStart = ContinuousClock.now
            let more = try vacuumBatch(pages: step.counters.batchSize, step: step)
            finishedBatch(step, started: batchStart, rows: 0, rowsDone: 0, done: !more, limit: 65_536)
            if !more { return true }
            FaultInjection.point("vacuum.between-batches")
            guard await pause() else { return false }
        }
    }

    /// Frees up to `pages` pages; returns whether free pages remain.
    private func vacuumBatch(pages: Int, step: TaskStep) throws -> Bool {
        let synchronous = step.session.synchronous, id = step.id
        let more = try store.database.writeWithoutTransaction { db in
            if synchronous > 1 { try db.execute(sql: "PRAGMA synchronous = NORMAL") }
            defer { if synchronous > 1 { try? db.execute(sql: "PRAGMA synchronous = \(synchronous)") } }
            try db.execute(sql: "PRAGMA incremental_vacuum(\(pages))")
            let free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
            if free == 0 { try DeferredLedger.complete(id: id, in: db) }
            return free > 0
        }
        step.session.checkpointer?.checkpointIfDue()
        return more
    }
}
