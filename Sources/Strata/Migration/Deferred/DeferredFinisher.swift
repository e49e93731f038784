import Foundation
import GRDB
import Logging
import StrataUnits

/// Runs the tasks of a store's deferred ledger, online. **No step holds the store's write
/// lock for longer than about one batch budget, whatever the table size**:
///
/// - **Backups** copy the store's pages into a side file a step at a time, from read
///   snapshots, before any other task (see ``OnlineBackup``, ``BackupSideFile``).
/// - **Table rewrites** create a shadow table with the final definition and no index, the
///   copy's cursor and triggers that mirror the live table's writes into the shadow for the
///   rows the copy has passed (so concurrent writes keep flowing and are captured, by this
///   process or any other; later rows are copied with their values of that moment), copy rows
///   in key order in small batches whose size adapts to the time budget, build the shadow's
///   indexes in key order, verify the copy (beside the builds, on a thread of its own:
///   ``ShadowVerifier``), then swap in one short transaction of O(1) schema
///   changes (renames; see ``IndexRelocation``). A live index that holds the shadow's entries
///   already (same columns, same rowids) is not built on the shadow: the swap carries it over
///   (``carriedIndexes(_:keyColumn:state:in:)``). The old table becomes a batched drop.
/// - **Index builds** sort the table's entries into runs in a private sort buffer (no lock)
///   and merge them into a container table in key order a batch at a time, kept current by
///   triggers, then turn the container into the index (``IndexSortBuffer``,
///   ``SortedRunMerge``); a NULL key sends the build to a side table (the indexed columns by
///   rowid, with the index).
/// - **Index drops** turn the index into a table of its entries (or move it onto a side
///   table) and delete it in batches.
/// - **Table drops** delete rows from the end in batches, then drop the rest in one statement
///   once it fits the batch.
/// - **Incremental vacuum** frees pages in batches.
///
/// Every batch is one transaction that also records progress in the ledger, so a crash,
/// a cancellation or a pause resumes exactly where it stopped.
struct DeferredFinisher {
    let store: PersistentStore
    /// The options the run was given; ``options`` is what is in force (``FinishOptions/livePacing``).
    let requestedOptions: FinishOptions
    let progress: (@Sendable (DeferredProgress) -> Void)?
    /// The commit of the last batch, for the log of long holds.
    let lastCommit = CommitTime()

    /// How long the last batch's `COMMIT` took (writing its pages to the WAL), or nil.
    final class CommitTime {
        var value: Duration?
    }
    /// Last batch time and cost delay slept (see ``pause()``).
    let pacing = Pacing()
    /// The longest hold of the write lock by each step of the run (``writer(_:_:)``).
    let lockHolds = LockHolds()
    /// The points of the hold in flight at which a client's arrival would end it.
    let arrivals: ArrivalChecks
    /// The one place that decides whether the work goes on or gives way, and how long its
    /// next unit may hold the write lock (``StepAside``).
    let stepAside: StepAside

    final class Counters {
        var rows: Int64 = 0
        var batches = 0
        static let initialBatchSize = 200
        /// The most rows (or entries) one batch takes, whatever its budget allows. Only idle
        /// batches (and the library's own 20 ms default) reach it: a 5 ms batch takes a few
        /// thousand rows. Measured through stratad at 4M rows with nobody writing (two runs
        /// each, docs/Benchmarks.md): 200,000 rows a batch 11.5 / 11.0 s, 65,536 11.0 / 11.0 s,
        /// 32,768 11.1 / 10.9 s (the old rows' delete 2.9–3.1 s against 3.3–3.4 s, 100–200 MB
        /// less written), 8,192 15.1 / 13.5 s (every commit writes the pointer-map and
        /// freelist pages it touched again).
        static let maxBatchSize = 32_768
        var batchSize = initialBatchSize
        /// The task's last batch's own time per row it processed (nil before one did):
        /// the rate a drop's DROP TABLE at once is predicted from (``DeferredFinisher/dropSpeedup``).
        var secondsPerRow: Double?
        /// A drop's rows deleted before its rest is next checked for one `DROP TABLE`
        /// (``DeferredFinisher/restFitsOneDrop(_:deleted:step:)``).
        var dropCheckAfter: Int64 = 0
    }

    /// The library's pacing state for one run (the one place that paces).
    final class Pacing {
        /// How long the last batch took: it scales the cost delay after it.
        var lastBatch: Duration = .zero
        /// Cost delay slept so far.
        var paused: Duration = .zero
        /// Pages one `PRAGMA incremental_vacuum(N)` step moves (see ``vacuumStepPages(after:pages:target:)``).
        var vacuumStep = DeferredFinisher.firstVacuumStep
        /// Pages the last vacuum batch moved, and its commit's time per page
        /// (``vacuumPagesFittingACommit``).
        var vacuumPagesMoved = 0
        var vacuumCommitPerPage: Duration?
        /// How long the batch in flight waited for the writer connection (a client's call
        /// before it in the writer's queue): not the batch's work, not counted in its time.
        var writerWait: Duration = .zero
        /// The run's totals: time holding the writer connection (batches and every other
        /// step on it), and waiting for it behind other calls. With ``paused``, where a run's
        /// time went (``FinishReport/lockHeldSeconds``).
        var totalHeld: Duration = .zero
        var totalWriterWait: Duration = .zero
        /// The work's thread waiting for a core (``CoreWaitMeter``), over the run: nil where
        /// the kernel does not say.
        var coreWait = CoreWaitMeter()
        var totalCoreWait: Duration? { coreWait.total }
    }

    /// Connection settings changed for the run, restored at its end.
    final class Session {
        var cacheSize = -2000
        var synchronous = 2
        var checkpointer: WALCheckpointer?
        /// Whether the run finished the last task of the ledger (its WAL may then be given back).
        var completed = false
        /// The next batch runs without a time limit (the last one overran at the smallest size:
        /// it must make progress).
        var unlimitedNext = false
    }

    func run() async throws -> FinishReport {
        let start = ContinuousClock.now
        let session = try beginSession()
        defer { endSession(session) }
        var report = FinishReport(tasksFinished: 0, tasksRemaining: 0, rowsProcessed: 0, batches: 0, seconds: 0, stoppedEarly: false)
        let counters = Counters()
        var index = 0
        while true {
            if let max = options.maxTasks, report.tasksFinished >= max { break }
            // Re-read each time: a rewrite's swap adds the drop of the old rows to the ledger.
            let entries = try readEntries().filter { inThisRun($0) && !isHeld($0) }
            guard let entry = entries.first else { break }
            let total = index + entries.count
            guard await mayContinue() else { report.stoppedEarly = true; break }
            let taskStart = ContinuousClock.now
            let batchesBefore = counters.batches, rowsBefore = counters.rows
            let heldBefore = pacing.totalHeld, waitBefore = pacing.totalWriterWait, pausedBefore = pacing.paused
            pacing.coreWait.mark()
            let coreWaitBefore = pacing.totalCoreWait
            let finished: Bool
            do {
                finished = try await runTask(entry, index: index, of: total, counters: counters, session: session)
            } catch where stepAside.caused(error) {
                // A stop interrupted a batch: it was rolled back; the ledger has the progress before it.
                finished = false
            }
            let took = ContinuousClock.now - taskStart
            // The task's wait for a core, where its readings were of one thread (``CoreWaitMeter``).
            pacing.coreWait.mark()
            let coreWait = pacing.totalCoreWait.map { $0 - (coreWaitBefore ?? .zero) }
            var metadata = timeSpentMetadata(held: pacing.totalHeld - heldBefore, writerWait: pacing.totalWriterWait - waitBefore,
                                             paused: pacing.paused - pausedBefore, coreWait: coreWait)
            metadata.merge([
                "strata.task": "\(entry.task.id)", "strata.kind": "\(entry.task.kind.rawValue)",
                "strata.ms": "\(Self.milliseconds(took))",
                "strata.batches": "\(counters.batches - batchesBefore)", "strata.rows": "\(counters.rows - rowsBefore)",
            ]) { $1 }
            store.logger.log(level: finished ? .notice : .info, "\(finished ? "finished" : "paused") deferred task #\(entry.task.id): \(entry.task.summary)",
                             metadata: metadata)
            if !finished { report.stoppedEarly = true; break }
            report.tasksFinished += 1
            index += 1
        }
        report.rowsProcessed = counters.rows
        report.batches = counters.batches
        let remaining = try readEntries()
        report.tasksRemaining = remaining.count
        // The vacuum left on purpose (reclaimSpace false) is not unfinished work of this run.
        let unfinished = remaining.filter(inThisRun).count
        // Said only once the change is complete: the vacuum is then all that is left.
        report.spaceReclaimLeft = unfinished == 0 && !remaining.isEmpty
        report.seconds = (ContinuousClock.now - start).seconds
        report.pauseSeconds = pacing.paused.seconds
        report.lockHeldSeconds = pacing.totalHeld.seconds
        report.writerWaitSeconds = pacing.totalWriterWait.seconds
        report.coreWaitSeconds = pacing.totalCoreWait?.seconds
        logTimeSpent(report)
        report.batchesYielded = stepAside.yielded
        report.idleBatches = stepAside.idleBatches
        report.longestLockHolds = lockHolds.milliseconds
        report.longestClientWaits = lockHolds.waitMilliseconds
        logLockHolds()
        if unfinished > 0 && options.maxTasks == nil { report.stoppedEarly = true }
        if report.tasksFinished > 0 && unfinished == 0 {
            try recordFinished(report)
            session.completed = true
        }
        return report
    }

    /// Whether `entry` waits for a later run (``FinishOptions/holds``): counted as unfinished.
    private func isHeld(_ entry: DeferredLedger.Entry) -> Bool {
        options.holds?(entry.task, entry.payload.operation) ?? false
    }

    /// Whether this run takes `entry` on: every task, or all but the vacuum when the run
    /// leaves the free pages for later (``FinishOptions/reclaimSpace`` false).
    private func inThisRun(_ entry: DeferredLedger.Entry) -> Bool {
        options.reclaimSpace || entry.task.kind != .incrementalVacuum
    }

    // MARK: - Session

    /// The writer's page cache while deferred work runs (`PRAGMA cache_size` in KiB), and
    /// checkpoints moved off the writer (``WALCheckpointer``), for the run.
    ///
    /// The cache bounds what a batch's commit writes — a commit cannot be interrupted, so a
    /// client that arrives during it waits for all of it (``StepAside``). A batch that dirties
    /// more pages than the cache holds spills the oldest to the WAL as it goes (inside its
    /// statements, between two checks), and its commit writes only what is left: with 2 MiB,
    /// an idle copy batch of 32,768 rows commits in 1.7–2.0 ms, with the 64 MiB of earlier
    /// releases in 7.4–8.9 ms (10–47 ms through stratad at 1M and 4M rows), with no loss of
    /// speed (docs/Benchmarks.md, issue 44). It is SQLite's default size.
    static let cacheKiB = 2048

    private func beginSession() throws -> Session {
        let session = Session()
        try store.database.writeWithoutTransaction { db in
            session.cacheSize = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2000
            session.synchronous = try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? 2
            try db.execute(sql: "PRAGMA cache_size = -\(Self.cacheKiB)")
        }
        // A replicated store's checkpoints are its replicator's (WALCheckpointing.external).
        if store.options.walCheckpointing == .strata { session.checkpointer = try? WALCheckpointer(store: store) }
        removeStaleSortBuffers()
        return session
    }

    /// Sort buffers (`STORE-_strata_sorted_<index>.sort`) that neither this store object holds
    /// nor a build in the ledger names are left over by an abandoned build: removed. A build's
    /// own buffer is kept through a crash or a close: the build resumes from it.
    private func removeStaleSortBuffers() {
        let directory = store.url.deletingLastPathComponent()
        let prefix = store.url.lastPathComponent + "-_strata_sorted_"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        let building = ((try? readEntries()) ?? []).compactMap { $0.progress.build.map { sortBufferPath($0.container) } }
        let kept = store.indexBuffers.withLock { Set($0.values.map(\.path)) }.union(building)
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".sort") {
            let path = directory.appendingPathComponent(name).path
            if !kept.contains(path) { try? FileManager.default.removeItem(atPath: path) }
        }
    }

    /// Restores the connection settings. Never waits for a WAL checkpoint (see
    /// ``WALCheckpointer/stop(store:truncating:)``): a pause ends within the batch in flight.
    private func endSession(_ session: Session) {
        let start = ContinuousClock.now
        // The WAL is given back when the work is all done and no client call is in flight (a
        // pause never truncates: the load that paused the run would wait for it).
        session.checkpointer?.stop(store: store, truncating: session.completed && !(options.clientsActive?() ?? false),
                                   budget: options.batchBudget, pause: options.pauseBetweenBatches, clientsActive: options.clientsActive)
        _ = try? store.database.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA cache_size = \(session.cacheSize)")
        }
        let took = ContinuousClock.now - start
        if took > options.batchBudget * 2 {
            store.logger.info("ending the deferred work run took longer than its budget", metadata: ["strata.ms": "\(Self.milliseconds(took))"])
        }
    }

    /// Runs `body` as one batch: one transaction on the writer connection, committed without
    /// waiting for the disk (`synchronous = NORMAL`: a batch lost to a power failure is redone
    /// from the ledger, which is in the same transaction; the next client commit with the
    /// store's own setting syncs it).
    ///
    /// An `interruptible` batch is aborted (rolled back) when ``StepAside`` says so while it
    /// runs (a stop, its time limit, a client's arrival during an idle batch); the steps that
    /// change the schema are not.
    func batch<T>(_ session: Session, interruptible: Bool = false, _ label: String = #function, _ body: (Database) throws -> T) throws -> T {
        try writer(label) { db in
            try inBatchTransaction(session, db, interruptible: interruptible) { try body(db) }
        }
    }

    /// One batch transaction on `db` (already the writer, outside a transaction).
    ///
    /// An interruptible batch runs until 1.5 budgets (``currentBudget``) unless `limit` says
    /// otherwise.
    func inBatchTransaction<T>(_ session: Session, _ db: Database, interruptible: Bool, limit: Duration? = nil,
                               _ body: () throws -> T) throws -> T {
        noteExternalWrites(db)
        if session.synchronous > 1 { try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        defer { if session.synchronous > 1 { try? db.execute(sql: "PRAGMA synchronous = \(session.synchronous)") } }
        lastCommit.value = nil
        func run(_ disarm: () -> Void) throws -> T {
            try db.beginTransaction()
            let result: T
            do {
                result = try body()
                disarm()
            } catch {
                if !db.isInsideTransaction { throw error }   // SQLite rolled back already
                try? db.rollback()
                throw error
            }
            let commitStart = ContinuousClock.now
            do {
                try db.commit()
            } catch {
                try? db.rollback()
                throw error
            }
            lastCommit.value = ContinuousClock.now - commitStart
            return result
        }
        if interruptible {
            return try stepAside.guarding(db, limit: session.unlimitedNext ? nil : limit ?? currentBudget * 1.5) { disarm in try run(disarm) }
        }
        return try run {}
    }

    /// Notes a commit to the store by another connection since the writer last looked:
    /// another process writing it, whose calls ``FinishOptions/clientsActive`` cannot see. Its
    /// writes can only fall between two batches, and `PRAGMA data_version` on the writer
    /// changes exactly then. Looked at before a batch would begin idle (``beginBatch(_:)``)
    /// and at the start of every batch; idle batches wait for the same quiet spell after
    /// another process's commit as after a client's call.
    func noteExternalWrites(_ db: Database) {
        guard stepAside.watchesClients,
              let version = try? Int.fetchOne(db.cachedStatement(sql: "PRAGMA main.data_version")) else { return }
        stepAside.noteDataVersion(version)
    }

    /// Runs `body` on the store's writer connection, noting in the log any hold of the write
    /// lock over twice the batch budget (with the step that took it): none is expected.
    func writer<T>(_ label: String = #function, _ body: (Database) throws -> T) throws -> T {
        var held = Duration.zero
        var stretch = ArrivalChecks.Stretch(wait: .zero, from: .zero, to: .zero, checks: 0)
        lastCommit.value = nil
        let step = Self.stepName(label)
        // Recorded on a throw too: a batch rolled back after its time limit held the lock as long.
        defer { lockHolds.record(held, wait: stretch.wait, step: step) }
        let requested = ContinuousClock.now
        // The body runs on this thread (a serial queue's `sync`): both readings are of it.
        pacing.coreWait.mark()
        defer { pacing.coreWait.mark() }
        let result = try store.database.writeWithoutTransaction { db in
            let start = ContinuousClock.now
            arrivals.begin(at: start)
            pacing.writerWait += start - requested
            pacing.totalWriterWait += start - requested
            defer {
                let end = ContinuousClock.now
                held = end - start
                stretch = arrivals.end(at: end)
                pacing.totalHeld += held
            }
            return try body(db)
        }
        if stretch.wait > stepAside.pacing.batchBudget * 2 {
            // The promise (StepAside): a client waits about one batch budget behind any step.
            var metadata: Logger.Metadata = [
                "strata.step": "\(step)", "strata.wait_ms": "\(String(format: "%.1f", stretch.wait.milliseconds))",
                "strata.from_ms": "\(String(format: "%.1f", stretch.from.milliseconds))", "strata.to_ms": "\(String(format: "%.1f", stretch.to.milliseconds))",
                "strata.held_ms": "\(String(format: "%.1f", held.milliseconds))", "strata.checks": "\(stretch.checks)",
                "strata.budget_ms": "\(Int(stepAside.pacing.batchBudget.milliseconds))",
            ]
            if let commit = lastCommit.value { metadata["strata.commit_ms"] = "\(String(format: "%.1f", commit.milliseconds))" }
            LogThrottle.deferredWork.log(store.logger, level: .info, "a client arriving at the worst moment would have waited longer than the batch budget",
                                         key: "\(store.url.path)|wait|\(step)", metadata: metadata)
        }
        if held > currentBudget * 2 {
            var metadata: Logger.Metadata = [
                "strata.step": "\(step)", "strata.ms": "\(String(format: "%.1f", held.milliseconds))",
                "strata.budget_ms": "\(Int(currentBudget.milliseconds))",
            ]
            // The commit's share: writing the batch's pages to the WAL is not interruptible.
            if let commit = lastCommit.value { metadata["strata.commit_ms"] = "\(String(format: "%.1f", commit.milliseconds))" }
            // One line per step and store every 30 s, with how many were left out.
            LogThrottle.deferredWork.log(store.logger, level: held > currentBudget * 5 ? .notice : .info,
                                         "deferred work held the write lock longer than its budget",
                                         key: "\(store.url.path)|\(step)", metadata: metadata)
        }
        return result
    }

    // MARK: - Scheduling

    /// Whether the work goes on (``StepAside/mayGoOn()``), with the pacing in force refreshed.
    func mayContinue() async -> Bool {
        refreshPacing()
        return stepAside.mayGoOn()
    }

    /// The cost delay after a batch, in the manner of PostgreSQL's autovacuum:
    /// `pauseBetweenBatches × (the batch's time ÷ batchBudget)`, at most ten times
    /// `pauseBetweenBatches`, so that a batch that overran its budget (a slow disk, a contended
    /// lock) buys a longer pause and the work's share of the machine stays near
    /// `budget / (budget + pause)`. Slept in slices of at most 2 ms with ``mayContinue()``
    /// asked between them: a pause never delays stopping. Returns whether to go on.
    /// After an idle batch the delay scales with the idle budget: the work's share of the
    /// machine stays what the operator set (``FinishOptions/pauseBetweenBatches``).
    func pause() async -> Bool {
        guard options.pauseBetweenBatches > .zero else {
            await Task.yield()
            return await mayContinue()
        }
        let clock = ContinuousClock()
        let started = clock.now
        defer { pacing.paused += clock.now - started }
        let until = started + Self.costDelay(options.pauseBetweenBatches, took: pacing.lastBatch, budget: currentBudget)
        while clock.now < until {
            guard await mayContinue() else { return false }
            try? await Task.sleep(for: min(.milliseconds(2), until - clock.now))
        }
        return await mayContinue()
    }

    /// The cost delay after a step that took `took` of a `budget`: `pause` scaled by that
    /// share, at most ten times `pause` (see ``pause()``).
    static func costDelay(_ pause: Duration, took: Duration, budget: Duration) -> Duration {
        pause * min(10, max(0, took / budget))
    }

    /// Scales the next batch so that it takes about the budget. Growth is capped at 1.5x per
    /// batch and the target is 60% of the budget: an overrun delays writers (a client that
    /// arrives during a batch waits for the rest of it), a short batch only costs a little
    /// throughput.
    func adapt(_ counters: Counters, elapsed: Duration, limit: Int = Counters.maxBatchSize) {
        pacing.lastBatch = elapsed
        let budget = 0.6 * currentBudget.seconds
        let took = max(1e-5, elapsed.seconds)
        let scaled = Double(counters.batchSize) * min(1.5, max(0.25, budget / took))
        counters.batchSize = Int(min(Double(limit), max(16, scaled)))
    }

    func report(_ entry: DeferredLedger.Entry, rowsDone: Int64, state: DeferredTask.State, index: Int, of total: Int) {
        var task = entry.task
        task.rowsDone = rowsDone
        task.state = state
        progress?(DeferredProgress(task: task, taskIndex: index, taskCount: total))
    }

    // MARK: - Tasks

    /// Runs one task; returns false when stopped before it was done.
    private func runTask(_ entry: DeferredLedger.Entry, index: Int, of total: Int, counters: Counters, session: Session) async throws -> Bool {
        // Rows of different tasks cost differently: each task adapts its batch size afresh.
        counters.batchSize = Counters.initialBatchSize
        counters.secondsPerRow = nil
        counters.dropCheckAfter = 0
        let step = TaskStep(entry: entry, index: index, total: total, counters: counters, session: session)
        switch entry.payload.operation.kind {
        case .rewriteTable(let rewrite):
            return try await runRewrite(step, rewrite, keyColumn: StorageLayout.primaryKeyColumn, conflictKey: [StorageLayout.primaryKeyColumn])
        case .rewriteJoinTable(let rewrite):
            return try await runRewrite(step, rewrite, keyColumn: "rowid", conflictKey: ["source_id", "target_id"])
        case .dropTable(let table):
            return try await runDrop(step, table: table)
        case .incrementalVacuum:
            return try await runVacuum(step)
        case .createIndex(let spec):
            return try await runIndexBuild(step, spec)
        case .dropIndex(let name, let table):
            return try await runIndexDrop(step, name: name, table: table)
        case .backup(let destination):
            return try await runBackup(step, destination: URL(fileURLWithPath: destination))
        default:
            // Not produced by the ledger (synchronous kinds); run in one step.
            try batch(session) { db in
                try entry.payload.operation.execute(in: db)
                try DeferredLedger.complete(id: entry.task.id, in: db)
            }
            counters.batches += 1
            report(entry, rowsDone: entry.payload.rowsTotal, state: .done, index: index, of: total)
            return true
        }
    }

    /// The task being run and the run's state, handed to each kind's runner.
    struct TaskStep {
        let entry: DeferredLedger.Entry
        let index: Int
        let total: Int
        let counters: Counters
        let session: Session
        var id: Int64 { entry.task.id }
    }

    /// After a batch that overran its time limit (rolled back): a quarter of the size next.
    func overran(_ step: TaskStep) {
        if step.counters.batchSize <= 16 { step.session.unlimitedNext = true }
        step.counters.batchSize = max(16, step.counters.batchSize / 4)
        store.logger.debug("a batch overran its time limit and was rolled back; the next is smaller", metadata: ["strata.task": "\(step.id)"])
    }

    /// The start of a batch's time (``finishedBatch(_:started:rows:rowsDone:done:limit:)``):
    /// now, with no wait for the writer counted yet (``Pacing/writerWait``).
    func batchClockStarts() -> ContinuousClock.Instant {
        pacing.writerWait = .zero
        return ContinuousClock.now
    }

    /// Records one batch: counters, the adapted size, progress; starts a WAL checkpoint when due.
    func finishedBatch(_ step: TaskStep, started: ContinuousClock.Instant, rows: Int64, rowsDone: Int64, done: Bool, limit: Int = Counters.maxBatchSize) {
        step.counters.batches += 1
        step.counters.rows += rows
        step.session.unlimitedNext = false
        // The batch's own time: the writer's queue (clients' calls ahead of it) is not its
        // work, and counting it would shrink batches exactly when clients are busy.
        let elapsed = ContinuousClock.now - started - pacing.writerWait
        if rows > 0 { step.counters.secondsPerRow = max(.zero, elapsed).seconds / Double(rows) }
        adapt(step.counters, elapsed: max(.zero, elapsed), limit: limit)
        step.session.checkpointer?.checkpointIfDue()
        trimWALIfDue(step.session)
        report(step.entry, rowsDone: rowsDone, state: done ? .done : .running, index: step.index, of: step.total)
    }

    /// Between two batches: one step of cutting back a WAL that restarted after growing
    /// (``WALTrimmer``), when the file has a tail to cut. It holds the write lock for about
    /// half the normal batch budget (the log's "trim WAL" step), idle batch or not.
    func trimWALIfDue(_ session: Session) {
        guard session.checkpointer != nil, store.walTrimmer.hasTail else { return }
        do {
            // An ftruncate cannot be interrupted: sized for the normal budget, idle batch or not.
            _ = try writer("trim WAL") { db in try store.walTrimmer.step(db, budget: stepAside.pacing.batchBudget, restart: false) }
        } catch {
            store.logger.debug("cutting the WAL back failed; tried again after the next batch", metadata: ["strata.error": "\(error)"])
        }
    }

    // MARK: - Ledger

    private func readEntries() throws -> [DeferredLedger.Entry] {
        try store.database.read { db in try DeferredLedger.entries(in: db) }
    }

    private func recordFinished(_ report: FinishReport) throws {
        let model = store.model
        try store.database.write { db in
            try MetadataSchema.appendHistory(.init(
                at: Date(), kind: "deferred-finished", fromVersion: model.version, fromChecksum: model.checksum,
                toVersion: model.version, toChecksum: model.checksum,
                detail: "\(report.tasksFinished) deferred task(s) finished, \(report.rowsProcessed) rows, \(report.batches) batches"), in: db)
        }
    }

    // MARK: - Offline

    /// Runs every ledger task at once, each in one transaction (migration without deferral).
    /// `db` must be outside a transaction.
    static func runAllOffline(in db: Database, layout: StorageLayout, storePath: String) throws {
        for entry in try DeferredLedger.entries(in: db) {
            let operation = entry.payload.operation
            switch operation.kind {
            case .incrementalVacuum:
                try db.execute(sql: "PRAGMA incremental_vacuum")
                try DeferredLedger.complete(id: entry.task.id, in: db)
                continue
            case .backup(let destination):
                let url = URL(fileURLWithPath: destination)
                if !FileManager.default.fileExists(atPath: url.path) {
                    _ = try OnlineBackup.copyNow(from: db, storePath: storePath, to: url)
                }
                try DeferredLedger.complete(id: entry.task.id, in: db)
                continue
            default:
                break
            }
            let needsForeignKeysOff = operation.requiresForeignKeysOff || { if case .dropTable = operation.kind { return true } else { return false } }()
            try db.withForeignKeysOff(when: needsForeignKeysOff) {
                try db.inTransaction {
                    try operation.execute(in: db)
                    try DeferredLedger.complete(id: entry.task.id, in: db)
                    return .commit
                }
            }
        }
    }
}
