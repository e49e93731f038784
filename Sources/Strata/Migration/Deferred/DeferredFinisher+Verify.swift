import Foundation
import GRDB

extension DeferredFinisher {
    // MARK: - Verify before swap

    /// Checks, before the swap, that a rewrite's shadow holds exactly the live table's rows in
    /// the new shape, and refuses the swap otherwise (as Spirit verifies its copy by checksum
    /// before the cut-over).
    ///
    /// The check runs in batches of live keys, each in one read snapshot (no write lock: the
    /// store's writers keep going): every live row must have a shadow row with the same key
    /// and the same value in every destination column (retyped columns: presence only, since
    /// the shadow converted them), and — for tables keyed by `_pk`, where both tables use the
    /// same keys — the two must hold as many rows in the range. The capture triggers keep the
    /// two equal under every write in the same transaction, so a range checked stays checked;
    /// the last batch runs to the end of the table, covering the rows inserted since the
    /// check began. Tables keyed by rowid (join tables) end with one count of both tables in
    /// one snapshot. Progress is durable (`verifiedKey`, `verified` in the ledger): a crash or
    /// a pause loses at most one batch.
    ///
    /// On a mismatch the task's progress is reset (the next run copies afresh into a new
    /// shadow), the live table is untouched, and the run fails with
    /// ``StoreError/Code/copyMismatch`` naming the task, the table and the first differing key.
    func verifyShadow(_ rewrite: TableRewrite, keyColumn: String, conflictKey: [String],
                      state: inout DeferredLedger.Progress, step: TaskStep) async throws -> Bool {
        guard state.verified != true else { return true }
        let start = ContinuousClock.now
        // Begin after the last key checked beside the index builds (``ShadowVerifier``; none
        // for a table it does not apply to).
        if let checked = try checkedBeside(rewrite), checked > state.verifiedKey ?? Int64.min {
            state.verifiedKey = checked
        }
        var size = max(step.counters.batchSize, 64)
        // Ranges by key span while the keys are dense (see ``compare``).
        var bySpan = true
        while true {
            guard await mayContinue() else { return false }
            // Idle or not, as a write batch would be (``beginBatch(_:)``): a quiet store's
            // check runs in fewer, longer snapshots, with fewer ledger commits and cost delays.
            beginBatch(step, counted: false)
            let batchStart = ContinuousClock.now
            let lower = state.verifiedKey ?? Int64.min
            let range = try compareInSnapshot(rewrite, keyColumn: keyColumn, conflictKey: conflictKey, after: lower, size: size, bySpan: bySpan)
            // Sparse keys: a span of `size` keys held under half as many rows; count ranges
            // by rows from now on.
            if range.bySpan, range.upper != nil, range.rows < Int64(size / 2) { bySpan = false }
            if let problem = range.problem {
                try refuseSwap(rewrite, problem: problem, step: step)
            }
            var next = state
            if let upper = range.upper {
                next.verifiedKey = upper
            } else {
                next.verified = true
            }
            try batch(step.session) { db in try DeferredLedger.saveProgress(next, id: step.id, in: db) }
            state = next
            FaultInjection.point("rewrite.verify")
            // A verify batch is a read snapshot: it holds no lock a client waits for, so it is
            // sized for one to two budgets (a write batch: a half to one), and the cost delay
            // after it takes a smaller share of the check.
            let elapsed = ContinuousClock.now - batchStart
            if elapsed < currentBudget { size = min(size * 2, 1 << 20) } else if elapsed > currentBudget * 2 { size = max(size / 2, 64) }
            if state.verified == true { break }
            guard await pause() else { return false }
        }
        store.logger.info("verified the shadow of \(rewrite.table) before the swap", metadata: [
            "strata.ms": "\(Self.milliseconds(ContinuousClock.now - start))", "strata.task": "\(step.id)",
        ])
        return true
    }

    /// The last key checked beside the index builds (``ShadowVerifier``). Not async: a
    /// cancelled run stops between batches, not in this read.
    private func checkedBeside(_ rewrite: TableRewrite) throws -> Int64? {
        try store.database.read { db in try ShadowVerifier.verifiedKey(rewrite, in: db) }
    }

    /// One verified range: its upper key (nil: it ran to the end of the table), the live rows
    /// it held, whether it was a key span, and the first difference found, if any.
    struct VerifiedRange {
        var upper: Int64?
        var rows: Int64 = 0
        var bySpan = false
        var problem: String?
    }

    /// ``compare(_:keyColumn:conflictKey:after:size:bySpan:in:)`` on a reader, in one snapshot.
    private func compareInSnapshot(_ rewrite: TableRewrite, keyColumn: String, conflictKey: [String], after lower: Int64, size: Int,
                                   bySpan: Bool) throws -> VerifiedRange {
        try store.database.read { db in
            try Self.compare(rewrite, keyColumn: keyColumn, conflictKey: conflictKey, after: lower, size: size, bySpan: bySpan, in: db)
        }
    }

    /// Compares the live rows with keys in `(after, upper]` (or to the end) with the shadow.
    ///
    /// The range holds `size` live rows (`upper`: the `size`-th key after `after`, read by
    /// stepping over the rows before it), or — `bySpan`, for tables keyed by a unique integer
    /// key — the keys from the first one after `after` to `size - 1` beyond it: at most `size`
    /// rows, whose count comes with the join's, so that the range's rows are read once instead
    /// of twice (the step over them was about 13 % of the verification). The caller turns
    /// `bySpan` off when the keys prove sparse.
    static func compare(_ rewrite: TableRewrite, keyColumn: String, conflictKey: [String], after lower: Int64, size: Int,
                        bySpan: Bool = false, in db: Database) throws -> VerifiedRange {
        let t = quoteIdentifier(rewrite.table), s = quoteIdentifier(rewrite.shadowTable)
        let key = keyColumn == "rowid" ? "rowid" : quoteIdentifier(keyColumn)
        let keyed = keyColumn != "rowid" && conflictKey == [keyColumn]
        let spans = bySpan && keyed
        let upper = try rangeEnd(of: t, key: key, after: lower, size: size, bySpan: spans, in: db)
        let bound = upper.map { "AND l.\(key) <= \($0)" } ?? ""
        let compared = rewrite.columns.filter { !rewrite.retypedColumns.contains($0) && !conflictKey.contains($0) }
        // The live rows of the range: `size` when it ends at the size-th key (same snapshot);
        // counted when it runs to the end or is a span.
        var live: Int64? = upper != nil && !spans ? Int64(size) : nil
        if keyed {
            // Both tables keyed by the same unique key: the range matches when every live row
            // has a shadow row with its key and values (one join, about a third cheaper than a
            // correlated `NOT EXISTS` per row) and both hold as many rows. Only a range that
            // does not is looked at row by row below, to name its first difference.
            let equal = compared.map { " AND s.\(quoteIdentifier($0)) IS l.\(quoteIdentifier($0))" }.joined()
            let counts = try Row.fetchOne(db, sql: "SELECT count(*), count(s.\(key)) FROM \(t) l LEFT JOIN \(s) s ON s.\(key) = l.\(key)\(equal) WHERE l.\(key) > ? \(bound)",
                                          arguments: [lower])
            let rows: Int64 = counts?[0] ?? 0, matched: Int64 = counts?[1] ?? 0
            if live == nil { live = rows }
            let shadow = try Int64.fetchOne(db, sql: "SELECT count(*) FROM \(s) WHERE \(key) > ? \(upper.map { "AND \(key) <= \($0)" } ?? "")", arguments: [lower]) ?? 0
            if matched == live, shadow == live { return VerifiedRange(upper: upper, rows: rows, bySpan: spans, problem: nil) }
        }
        let match = (conflictKey.map { "s.\(quoteIdentifier($0)) = l.\(quoteIdentifier($0))" }
            + compared.map { "s.\(quoteIdentifier($0)) IS l.\(quoteIdentifier($0))" }).joined(separator: " AND ")
        if let missing = try Row.fetchOne(db, sql: """
            SELECT \(conflictKey.map { "l.\(quoteIdentifier($0))" }.joined(separator: ", ")) FROM \(t) l
            WHERE l.\(key) > ? \(bound) AND NOT EXISTS (SELECT 1 FROM \(s) s WHERE \(match)) LIMIT 1
            """, arguments: [lower]) {
            let keys = conflictKey.map { "\($0) \(missing[$0] as DatabaseValue)" }.joined(separator: ", ")
            return VerifiedRange(upper: upper, problem: "the row with \(keys) is missing from the shadow or differs there")
        }
        if keyColumn != "rowid" {
            // (Reached for these tables only when the join above found a difference.)
            let upperBound = upper.map { "AND \(key) <= \($0)" } ?? ""
            let live = try live ?? Int64.fetchOne(db, sql: "SELECT count(*) FROM \(t) WHERE \(key) > ?", arguments: [lower]) ?? 0
            let shadow = try Int64.fetchOne(db, sql: "SELECT count(*) FROM \(s) WHERE \(key) > ? \(upperBound)", arguments: [lower]) ?? 0
            let range = "keys \(lower == Int64.min ? "from the first" : "after \(lower)") \(upper.map { "to \($0)" } ?? "to the last")"
            if live != shadow {
                return VerifiedRange(upper: upper, problem: "\(range): \(live) rows in the table, \(shadow) in the shadow")
            }
            if conflictKey == [keyColumn] {
                return VerifiedRange(upper: upper, problem: "\(range): the table's rows and the shadow's do not match one for one")
            }
        } else if upper == nil {
            let live = try Int64.fetchOne(db, sql: "SELECT count(*) FROM \(t)") ?? 0
            let shadow = try Int64.fetchOne(db, sql: "SELECT count(*) FROM \(s)") ?? 0
            if live != shadow { return VerifiedRange(upper: nil, problem: "\(live) rows in the table, \(shadow) in the shadow") }
        }
        return VerifiedRange(upper: upper, problem: nil)
    }

    /// The last key of the range of `table` after `lower` (nil: the range runs to the end),
    /// for the copy and its verification: the `size`-th key after `lower`, found by stepping
    /// over the rows before it (`OFFSET`); or, `bySpan` (a unique integer key), `size - 1`
    /// beyond the first key after `lower`, so that the range holds at most `size` rows and its
    /// rows are read once.
    static func rangeEnd(of table: String, key: String, after lower: Int64, size: Int, bySpan: Bool, in db: Database) throws -> Int64? {
        guard bySpan else {
            return try Int64.fetchOne(db.cachedStatement(sql: "SELECT \(key) FROM \(table) WHERE \(key) > ? ORDER BY \(key) LIMIT 1 OFFSET ?"), arguments: [lower, size - 1])
        }
        let first = try Int64.fetchOne(db.cachedStatement(sql: "SELECT \(key) FROM \(table) WHERE \(key) > ? ORDER BY \(key) LIMIT 1"), arguments: [lower])
        let last = try Int64.fetchOne(db.cachedStatement(sql: "SELECT \(key) FROM \(table) ORDER BY \(key) DESC LIMIT 1"))
        let (end, overflow) = (first ?? lower).addingReportingOverflow(Int64(size - 1))
        return first == nil || overflow || last.map({ end >= $0 }) ?? true ? nil : end
    }

    /// Resets the task (its next run copies into a fresh shadow) and throws the refusal.
    private func refuseSwap(_ rewrite: TableRewrite, problem: String, step: TaskStep) throws -> Never {
        try batch(step.session) { db in
            try dropCapture(rewrite, in: db)
            try DeferredLedger.saveProgress(DeferredLedger.Progress(lastKey: nil, rowsDone: 0, started: false), id: step.id, state: .pending, in: db)
        }
        store.logger.error("refused to swap in the rewrite of \(rewrite.table): its copy does not match", metadata: [
            "strata.task": "\(step.id)", "strata.table": "\(rewrite.table)", "strata.problem": "\(problem)",
        ])
        throw StoreError(.copyMismatch, path: store.path, """
            deferred task \(step.id) (rewrite of table \(rewrite.table)): the copy in \(rewrite.shadowTable) does not match the table \
            (\(problem)); the swap was refused and \(rewrite.table) is unchanged. The task starts over with a fresh copy on the next \
            run (stratactl deferred finish); if this repeats, check the disk and run `stratactl inspect --check`
            """)
    }
}
