import Foundation
import GRDB
import Logging
import Synchronization

/// Verifies a rewrite's shadow beside its index builds, on a thread of its own.
///
/// The check before the swap (``DeferredFinisher/verifyShadow(_:keyColumn:conflictKey:state:step:)``)
/// reads both tables in read snapshots and holds no lock; the index builds that precede it
/// leave the shadow's rows as they are (their triggers only note changed entries). So once the
/// copy is complete, the check can run while the shadow's indexes are built: the same ranges
/// (``DeferredFinisher/compare(_:keyColumn:conflictKey:after:size:bySpan:in:)``), each in one
/// snapshot of a reader, with the same cost delay after each as a batch of the finisher.
/// Measured through stratad with clients writing, the steps ran one after another on a machine
/// with a quarter to a third of its CPU idle (docs/Benchmarks.md).
///
/// Its progress — the last key checked — is kept with the shadow, in the copy's cursor table
/// (`verified`), written after each range in a transaction of its own; so a crash, a pause or
/// a close loses at most one range, and a fresh copy (after a refused swap or an abandoned
/// rewrite, which drop the cursor table) starts unverified. The checked ranges stay checked:
/// the capture triggers keep the shadow equal to the table under every write, in the write's
/// transaction. The check before the swap then begins after the last key checked here.
///
/// The verifier never refuses a swap itself: a range that does not match stops it there, and
/// the check before the swap finds the same range, names its first difference and refuses.
/// Only tables keyed by `_pk` (the shadow has the table's keys) are checked this way; a join
/// table keyed by rowid ends with one count of both tables, which the check before the swap
/// makes.
final class ShadowVerifier: Sendable {
    /// Whether `rewrite` can be verified beside its builds: keyed by one column, and its
    /// cursor table has the `verified` column (a rewrite begun by an earlier Strata has none).
    static func applies(_ rewrite: TableRewrite, keyColumn: String, conflictKey: [String], in db: Database) throws -> Bool {
        try keyColumn != "rowid" && conflictKey == [keyColumn] && keepsProgress(rewrite, in: db)
    }

    /// Whether the rewrite's cursor table exists and has the `verified` column.
    private static func keepsProgress(_ rewrite: TableRewrite, in db: Database) throws -> Bool {
        guard try db.tableExists(rewrite.copyCursorTable) else { return false }
        return try db.columns(in: rewrite.copyCursorTable).contains { $0.name == verifiedColumn }
    }

    /// The column of the cursor table that holds the last key checked (NULL: none).
    static let verifiedColumn = "verified"

    /// The last key checked beside the builds (nil: none), read from the cursor table.
    static func verifiedKey(_ rewrite: TableRewrite, in db: Database) throws -> Int64? {
        guard try keepsProgress(rewrite, in: db) else { return nil }
        return try Int64.fetchOne(db, sql: "SELECT \(verifiedColumn) FROM \(quoteIdentifier(rewrite.copyCursorTable))")
    }

    /// What the thread reports: how far it got, what it checked, and whether it stopped at a
    /// range that does not match.
    struct Outcome: Sendable {
        var verifiedKey: Int64?
        var rows: Int64 = 0
        var ranges = 0
        var mismatch = false
        var elapsed: Duration = .zero
    }

    /// What the thread needs of the finisher's options, read before each range.
    struct Pacing: Sendable {
        /// The budget and cost delay in force (``FinishOptions/livePacing`` or the options').
        var current: @Sendable () -> FinishPacing
        var shouldContinue: @Sendable () -> Bool
    }

    private let stopRequested = Atomic<Bool>(false)
    private let joined = Atomic<Bool>(false)
    private let outcome = Mutex(Outcome())
    private let done = DispatchSemaphore(value: 0)

    /// Starts checking the shadow of `rewrite` after key `lower` (nil: from the first).
    init(store: PersistentStore, rewrite: TableRewrite, keyColumn: String, after lower: Int64?, synchronous: Int, pacing: Pacing) {
        outcome.withLock { $0.verifiedKey = lower }
        let thread = Thread { [self] in
            run(store: store, rewrite: rewrite, keyColumn: keyColumn, after: lower, synchronous: synchronous, pacing: pacing)
            done.signal()
        }
        thread.name = "strata-verify"
        thread.start()
    }

    /// Asks the thread to stop and waits for it: at most the range in flight (about two batch
    /// budgets). Returns what it did. Safe to call more than once.
    @discardableResult
    func stop() -> Outcome {
        stopRequested.store(true, ordering: .releasing)
        return wait()
    }

    /// Waits for the thread to end by itself (it checked to the end of the table, found a
    /// range that does not match, or the run may not go on), and returns what it did.
    @discardableResult
    func wait() -> Outcome {
        if !joined.exchange(true, ordering: .acquiringAndReleasing) { done.wait() }
        return outcome.withLock { $0 }
    }

    private func run(store: PersistentStore, rewrite: TableRewrite, keyColumn: String, after start: Int64?, synchronous: Int, pacing: Pacing) {
        let began = ContinuousClock.now
        defer { outcome.withLock { $0.elapsed = ContinuousClock.now - began } }
        let key = keyColumn
        let cursor = quoteIdentifier(rewrite.copyCursorTable)
        var lower = start ?? Int64.min
        var size = 1024
        var bySpan = true
        // The first range runs even if a stop came before the thread did: a range is short, and
        // the kill tests' crash point after it is then reached on every run that starts one.
        var first = true
        while first || (!stopRequested.load(ordering: .acquiring) && pacing.shouldContinue()) {
            first = false
            let budget = max(.milliseconds(1), pacing.current().batchBudget)
            let rangeStart = ContinuousClock.now
            let range: DeferredFinisher.VerifiedRange
            do {
                range = try store.database.read { db in
                    try DeferredFinisher.compare(rewrite, keyColumn: key, conflictKey: [key], after: lower, size: size, bySpan: bySpan, in: db)
                }
            } catch {
                store.logger.debug("the check beside the index builds stopped; the check before the swap takes over",
                                   metadata: ["strata.table": "\(rewrite.table)", "strata.error": "\(error)"])
                return
            }
            if range.problem != nil {
                outcome.withLock { $0.mismatch = true }
                return
            }
            if range.bySpan, range.upper != nil, range.rows < Int64(size / 2) { bySpan = false }
            // A range that ran to the end checked every key: the triggers mirror every write
            // once the copy is done, so Int64.max stands for "all".
            let upper = range.upper ?? Int64.max
            do {
                try store.database.writeWithoutTransaction { db in
                    // As a batch of the finisher: no sync of the WAL for this commit.
                    if synchronous > 1 { try db.execute(sql: "PRAGMA synchronous = NORMAL") }
                    defer { if synchronous > 1 { try? db.execute(sql: "PRAGMA synchronous = \(synchronous)") } }
                    try db.execute(sql: "UPDATE \(cursor) SET \(Self.verifiedColumn) = ?", arguments: [upper])
                }
            } catch {
                store.logger.debug("the check beside the index builds could not record its progress; the check before the swap takes over",
                                   metadata: ["strata.table": "\(rewrite.table)", "strata.error": "\(error)"])
                return
            }
            lower = upper
            outcome.withLock {
                $0.verifiedKey = upper
                $0.rows += range.rows
                $0.ranges += 1
            }
            FaultInjection.point("rewrite.verify-beside")
            if range.upper == nil { return }
            // One to two budgets a range, as the check before the swap; then the cost delay.
            let elapsed = ContinuousClock.now - rangeStart
            if elapsed < budget { size = min(size * 2, 1 << 20) } else if elapsed > budget * 2 { size = max(size / 2, 64) }
            let until = ContinuousClock.now + DeferredFinisher.costDelay(pacing.current().pauseBetweenBatches, took: elapsed, budget: budget)
            while ContinuousClock.now < until, !stopRequested.load(ordering: .acquiring) {
                Thread.sleep(forTimeInterval: min(0.002, (until - ContinuousClock.now).seconds))
            }
        }
    }
}
