import Foundation
import Logging
import Metrics
import Strata
import Synchronization

/// Runs deferred migration work on hosted stores: the idle scheduler's turns, and runs on
/// request (`FinishDeferred`). Work runs on the ``DeferredWorkThread`` in budgeted batches with
/// the library's cost delay after each (`pause_between_batches`), and steps aside at the next batch when the
/// scheduler closes its gate (idle-respecting runs) or the daemon stops.
public final class DeferredWorkRunner: Sendable {
    /// What one store's run did.
    public struct Result: Sendable {
        /// The store's name (as configured).
        public var store: String
        /// What the run did.
        public var report: FinishReport?
        /// The error, in words, when it failed.
        public var error: String?
        /// What a failed run did and left (``report`` is nil then).
        var failure: FinishTally.Summary?
        /// Pending tasks when the run could not start (the store was busy finishing).
        var pendingTasks = 0
        /// The run ended because the gate closed (load returned, pause, shutdown).
        public var stoppedByGate = false
        /// The interrupt check saw load before a batch: its reason and when.
        public var interruptedBy: Interruption?
        /// Cost delay slept between batches.
        public var delayed: Duration = .zero
        /// Free pages in the file after a run that left the vacuum on purpose
        /// (``FinishReport/spaceReclaimLeft``): the scheduler's idle turns give them back.
        public var freePages: Int?
        /// A forced run's backlog check stopped it: the replica was too far behind (the runner
        /// waits and goes on).
        var stoppedByBacklog: Interruption?
        /// What a forced run on a replicated store did about the replica's lag, in words:
        /// paced by it (how long it waited), or told to ignore it (nil: not replicated).
        public var replicaLag: String?
    }

    let gate: SchedulerGate
    private let logger: Logger
    /// Where deferred work runs.
    let executor: DeferredWorkThread
    private let background = Mutex<[UUID: Task<Void, Never>]>([:])
    /// The pacing that `set` and reloads last gave (``updatePacing(_:)``), with a count of
    /// changes: a run takes it at its next batch once it changed after the run started.
    /// A forced run (`now`) takes `forcedPause` as its cost delay.
    private let pacingChange = Mutex<(generation: Int, pacing: FinishPacing?, forcedPause: Duration)>((0, nil, .zero))
    /// The longest client wait behind each step since the daemon started (``FinishReport/longestClientWaits``).
    private let clientWaits = Mutex<[String: Double]>([:])

    /// Memberwise initializer.
    public init(gate: SchedulerGate, logger: Logger, executor: DeferredWorkThread = .shared) {
        self.gate = gate
        self.logger = logger
        self.executor = executor
    }

    /// Runs one store's deferred work until it is done, the gate closes, or `deadline` passes.
    ///
    /// - Parameters:
    ///   - now: run even when the scheduler is paused or the machine busy (only shutdown stops it).
    ///   - deadline: the end of the store's turn (nil: until done or stopped).
    ///   - clock: the clock of `deadline`.
    ///   - interrupt: checked before every batch; a reason stops the work (see ``RunGate``).
    ///   - backlog: checked before every batch of a scheduler's run (never a forced one), never
    ///     during one: the replica's lag (see ``RunGate``).
    ///   - claim: a scheduler turn gives way at its next batch when a request (`FinishDeferred`)
    ///     asks for the store; a request takes the store over from a scheduler turn.
    ///   - reclaim: run the incremental vacuum too (``FinishOptions/reclaimSpace``); false ends
    ///     the run when only the vacuum is left, for the scheduler's idle turns.
    public func run(_ hosted: HostedStore, now: Bool, reclaim: Bool = true, settings: SchedulerSettings, deadline: ContinuousClock.Instant? = nil,
                    clock: any SchedulerClock = SystemSchedulerClock(), interrupt: (@Sendable () -> Interruption?)? = nil,
                    backlog: (@Sendable () -> Interruption?)? = nil, claim: HostedStore.FinishingClaim = .request,
                    progress: @escaping @Sendable (String, DeferredProgress) -> Void = { _, _ in }) async -> Result {
        let name = hosted.name
        guard let store = hosted.store, hosted.state == .ready else {
            return Result(store: name, report: nil, error: "the store is not open")
        }
        // A schema another process broke fails the store here too, rather than the cleanup
        // failing on SQL errors (``SchemaWatch``).
        if let watch = hosted.schemaWatch, case .broken(let reason) = watch.verify(store) {
            hosted.markFailed(reason)
            return Result(store: name, report: nil, error: reason)
        }
        let claimed = claim == .request ? await hosted.takeOverFinishing() : hosted.beginFinishing(.scheduler)
        guard claimed else {
            // A scheduler turn that finds a request's run on the store has nothing to do: not a failure.
            if claim == .scheduler { return Result(store: name, report: nil, error: nil) }
            var result = Result(store: name, report: nil, error: Self.alreadyRunsReason)
            result.pendingTasks = hosted.pendingTasks().count
            return result
        }
        hosted.finishingWatch.began()
        let result = await runClaimed(hosted, store: store, now: now, reclaim: reclaim, settings: settings, deadline: deadline, clock: clock,
                                      interrupt: interrupt, backlog: backlog, claim: claim, progress: progress)
        // Released first: a follower that comes after the end runs the work itself.
        hosted.endFinishing()
        hosted.finishingWatch.ended(result)
        return result
    }

    /// ``run(_:now:reclaim:settings:deadline:clock:interrupt:backlog:claim:progress:)`` once the store is claimed.
    private func runClaimed(_ hosted: HostedStore, store: PersistentStore, now: Bool, reclaim: Bool, settings: SchedulerSettings,
                            deadline: ContinuousClock.Instant?, clock: any SchedulerClock, interrupt: (@Sendable () -> Interruption?)?,
                            backlog: (@Sendable () -> Interruption?)?, claim: HostedStore.FinishingClaim, progress: @escaping @Sendable (String, DeferredProgress) -> Void) async -> Result {
        let name = hosted.name
        // One check says whether to go on (RunGate); the library paces (the cost delay).
        var yieldRequested: (@Sendable () -> Bool)?
        if claim == .scheduler { yieldRequested = { @Sendable in hosted.yieldRequested } }
        let runGate = RunGate(gate: gate, forced: now, deadline: deadline, interrupt: interrupt, backlog: backlog,
                              yieldRequested: yieldRequested, now: { clock.now })
        // With `idle_batch_budget` above `batch_budget`: once no call has been in flight for the
        // store for a while (one idle budget at first; the library lengthens the wait when idle
        // batches give way), batches may run that long (idle batches); a call's arrival aborts
        // the batch in flight so that it waits about one batch_budget.
        // An operator's forced run takes its own cost delay (none shipped: a manual VACUUM's).
        var options = FinishOptions(batchBudget: settings.batchBudget, pauseBetweenBatches: Self.pause(of: settings, forced: now),
                                    shouldContinue: runGate.shouldContinue, interruptRequested: runGate.interruptRequested)
        if settings.idleBatchBudget > settings.batchBudget {
            options.clientsActive = { hosted.inFlight > 0 }
            options.clientsQuiet = { hosted.callsQuiet }
            options.idleBatchBudget = settings.idleBatchBudget
        }
        options.livePacing = livePacing(from: settings, forced: now)
        options.reclaimSpace = reclaim
        // Cleanup that would drop what active clients of an older model version still use
        // waits for them (Rollout/HostedVersions.swift); a run forced with `now` was
        // confirmed (FinishDeferred's force). A version that becomes active ends the run at
        // its next batch, and the next run holds what it needs.
        if !now, let versions = hosted.versions {
            options.holds = versions.holdCheck(store: store)
            let generation = versions.clients.generation(of: name)
            let proceed = options.shouldContinue
            options.shouldContinue = { proceed() && versions.clients.generation(of: name) == generation }
        }
        logger.debug("deferred work turn", metadata: ["strata.store": "\(name)", "strata.now": "\(now)"])
        let tally = FinishTally()
        let started = ContinuousClock.now
        do {
            let report = try await withTaskExecutorPreference(executor) {
                tally.start(with: (try? store.pendingDeferredWork()) ?? [])
                return try await store.finishDeferredMigration(options) { update in
                    tally.record(update)
                    hosted.finishingWatch.publish(update)
                    progress(name, update)
                }
            }
            logger.debug("deferred work turn ended", metadata: [
                "strata.store": "\(name)", "strata.tasks_finished": "\(report.tasksFinished)",
                "strata.tasks_remaining": "\(report.tasksRemaining)", "strata.rows": "\(report.rowsProcessed)",
                "strata.stopped_early": "\(report.stoppedEarly)",
            ])
            noteClientWaits(report.longestClientWaits)
            var result = Self.result(name, report, nil, runGate)
            if report.spaceReclaimLeft {
                result.freePages = await withTaskExecutorPreference(executor) { try? store.fileStatistics().freelistCount }
                logger.notice("deferred change complete; its free pages are given back when the store is idle", metadata: [
                    "strata.store": "\(name)", "strata.free_pages": "\(result.freePages.map(String.init) ?? "?")",
                ])
            }
            return result
        } catch {
            // The failed batch rolled back; say what this run did finish and what is left.
            let remaining = await withTaskExecutorPreference(executor) { (try? store.pendingDeferredWork()) ?? [] }
            let failure = tally.summary(remaining: remaining, seconds: (ContinuousClock.now - started).seconds)
            logger.error("deferred work failed", metadata: [
                "strata.store": "\(name)", "strata.error": "\(error)", "strata.tasks_remaining": "\(failure.tasksRemaining)",
            ])
            var result = Self.result(name, nil, "\(error)", runGate)
            result.failure = failure
            return result
        }
    }

    private static func result(_ name: String, _ report: FinishReport?, _ error: String?, _ runGate: RunGate) -> Result {
        var result = Result(store: name, report: report, error: error, delayed: .milliseconds(Int64(((report?.pauseSeconds ?? 0) * 1000).rounded())))
        switch runGate.stoppedBy {
        case .gate: result.stoppedByGate = true
        case .load(let interruption): result.stoppedByGate = true; result.interruptedBy = interruption
        case .backlog(let interruption): result.stoppedByBacklog = interruption
        case .turnOver, nil: break
        }
        return result
    }

    /// Finishes the deferred work of `stores` one after the other (`FinishDeferred`).
    ///
    /// - Parameters:
    ///   - now: run even when the scheduler is paused or the machine busy (only shutdown stops it).
    ///   - reclaim: give the free pages back in this run too (the incremental vacuum); false
    ///     leaves them to the scheduler's idle turns once the change is complete.
    ///   - progress: called after each batch.
    ///   - ignoreLag: a forced run (`now`) on a replicated store goes on whatever the replica's
    ///     lag; without it the run is paced by `replication.max_lag` as the scheduler's turns
    ///     are (``runPacedByTheReplica(_:reclaim:settings:progress:)``).
    public func finish(_ stores: [HostedStore], now: Bool, reclaim: Bool = true, ignoreLag: Bool = false, settings: SchedulerSettings,
                       progress: @escaping @Sendable (String, DeferredProgress) -> Void) async -> [Result] {
        var results: [Result] = []
        for hosted in stores {
            if hosted.isFinishingOnRequest, let followed = await follow(hosted, progress: progress) {
                results.append(followed)
                continue
            }
            logger.info("finishing deferred work on request", metadata: ["strata.store": "\(hosted.name)", "strata.now": "\(now)"])
            var result: Result
            if now, hosted.replicaProbe != nil {
                if ignoreLag {
                    logger.notice("finishing deferred work on request, ignoring the replica's lag (ignore_lag)", metadata: ["strata.store": "\(hosted.name)"])
                    result = await run(hosted, now: now, reclaim: reclaim, settings: settings, progress: progress)
                    result.replicaLag = "ignored: the run did not wait for the replica (ignore lag)"
                } else {
                    result = await runPacedByTheReplica(hosted, reclaim: reclaim, settings: settings, progress: progress)
                }
            } else {
                result = await run(hosted, now: now, reclaim: reclaim, settings: settings, progress: progress)
            }
            // Another request claimed the store in between: follow its run instead.
            if result.error == Self.alreadyRunsReason, let followed = await follow(hosted, progress: progress) {
                results.append(followed)
                continue
            }
            if let report = result.report {
                logger.info("deferred work run ended", metadata: [
                    "strata.store": "\(hosted.name)", "strata.tasks_finished": "\(report.tasksFinished)",
                    "strata.tasks_remaining": "\(report.tasksRemaining)", "strata.rows": "\(report.rowsProcessed)",
                    "strata.stopped_early": "\(report.stoppedEarly)", "strata.batches": "\(report.batches)",
                    "strata.idle_batches": "\(report.idleBatches)", "strata.batches_yielded": "\(report.batchesYielded)",
                ])
            }
            results.append(result)
        }
        return results
    }

    /// What a run that cannot claim the store says.
    static let alreadyRunsReason = "deferred work already runs on this store"

    /// How often a forced run that waits for its replica reads the lag again.
    static let replicaPoll = Duration.milliseconds(25)

    /// A forced run on a replicated store, paced by its replica as the scheduler's turns are
    /// (docs/Fleet.md): before every batch the replica's lag is read live, and when the next
    /// batch would take it past `replication.max_lag` the run stops there, waits until the
    /// replica has caught up (read every ``replicaPoll``), and goes on from where it stopped —
    /// the shutdown ends the wait. The result says how long it waited.
    private func runPacedByTheReplica(_ hosted: HostedStore, reclaim: Bool, settings: SchedulerSettings,
                                      progress: @escaping @Sendable (String, DeferredProgress) -> Void) async -> Result {
        guard let probe = hosted.replicaProbe else { return await run(hosted, now: true, reclaim: reclaim, settings: settings, progress: progress) }
        let logger = self.logger
        let backlog: @Sendable () -> Interruption? = {
            let reading = probe.reading(now: .now, logger: logger, at: .beforeBatch)
            return reading.isBusy ? Interruption(reason: "waiting: " + reading.summary, at: .now) : nil
        }
        var waited = Duration.zero
        var waits = 0
        var rows: Int64 = 0, batches = 0, tasks = 0
        let started = ContinuousClock.now
        while true {
            var result = await run(hosted, now: true, reclaim: reclaim, settings: settings, backlog: backlog, progress: progress)
            if let report = result.report {
                rows += report.rowsProcessed
                batches += report.batches
                tasks += report.tasksFinished
            }
            guard let held = result.stoppedByBacklog, result.error == nil, gate.allowsForcedWork else {
                // The last run's report, with the rows, batches and tasks of every run before it.
                if var report = result.report {
                    report.rowsProcessed = rows
                    report.batches = batches
                    report.tasksFinished = tasks
                    report.seconds = (ContinuousClock.now - started).seconds
                    result.report = report
                }
                result.replicaLag = waits == 0
                    ? "paced by the replica's lag (replication.max_lag): it never had to wait"
                    : "paced by the replica's lag (replication.max_lag): waited \(DurationText.format(waited)) in \(waits) pause\(waits == 1 ? "" : "s") for it to catch up"
                return result
            }
            waits += 1
            if waits == 1 {
                logger.notice("deferred work on request waits for the replica (replication.max_lag); finish-deferred --ignore-lag would not", metadata: [
                    "strata.store": "\(hosted.name)", "strata.reason": "\(held.reason)",
                ])
            }
            let waitStarted = ContinuousClock.now
            while gate.allowsForcedWork, backlog() != nil {
                try? await Task.sleep(for: Self.replicaPoll)
            }
            waited += ContinuousClock.now - waitStarted
        }
    }

    /// Follows the request's run that holds `hosted` to its end, passing on its progress
    /// (``FinishingWatch``); nil when it ended before it could be followed.
    private func follow(_ hosted: HostedStore, progress: @escaping @Sendable (String, DeferredProgress) -> Void) async -> Result? {
        guard let events = hosted.finishingWatch.follow() else { return nil }
        logger.info("following deferred work already running on request", metadata: ["strata.store": "\(hosted.name)"])
        for await event in events {
            switch event {
            case .progress(let update): progress(hosted.name, update)
            case .ended(let result): return result
            }
        }
        return nil
    }

    /// Starts ``finish(_:now:reclaim:settings:progress:)`` in the background.
    public func start(_ stores: [HostedStore], now: Bool, reclaim: Bool = true, ignoreLag: Bool = false, settings: SchedulerSettings) {
        let id = UUID()
        let task = Task {
            _ = await self.finish(stores, now: now, reclaim: reclaim, ignoreLag: ignoreLag, settings: settings) { _, _ in }
            _ = self.background.withLock { $0.removeValue(forKey: id) }
        }
        background.withLock { $0[id] = task }
    }

    // MARK: - Client waits

    /// The longest a client arriving at the worst moment could have waited behind each step of
    /// deferred work since the daemon started, in milliseconds by step (in `Status`).
    public var clientWaitMaxMilliseconds: [String: Double] { clientWaits.withLock { $0 } }

    /// Keeps the longest wait of each step, and exports it:
    /// `strata_deferred_client_wait_max_seconds{step}`.
    private func noteClientWaits(_ waits: [String: Double]) {
        let longer = clientWaits.withLock { known in
            waits.filter { step, ms in
                guard ms > known[step, default: 0] else { return false }
                known[step] = ms
                return true
            }
        }
        for (step, ms) in longer {
            Gauge(label: "strata_deferred_client_wait_max_seconds", dimensions: [("step", step)]).record(ms / 1000)
        }
    }

    // MARK: - Pacing of work in flight

    /// Makes running work take `settings`' batch budget and cost delay at its next batch
    /// (`stratactl set`, a reload); the store's log shows the new values when a run takes them.
    public func updatePacing(_ settings: SchedulerSettings) {
        let pacing = FinishPacing(batchBudget: settings.batchBudget, pauseBetweenBatches: settings.pauseBetweenBatches)
        pacingChange.withLock { change in
            guard change.pacing != pacing || change.forcedPause != settings.forcedPauseBetweenBatches else { return }
            change = (change.generation + 1, pacing, settings.forcedPauseBetweenBatches)
        }
    }

    /// The cost delay of a run: `forced_pause_between_batches` for a run an operator forces
    /// (`now`), `pause_between_batches` otherwise.
    static func pause(of settings: SchedulerSettings, forced: Bool) -> Duration {
        forced ? settings.forcedPauseBetweenBatches : settings.pauseBetweenBatches
    }

    /// The `livePacing` of a run started with `settings`: its own pacing until a change comes.
    private func livePacing(from settings: SchedulerSettings, forced: Bool) -> @Sendable () -> FinishPacing {
        let own = FinishPacing(batchBudget: settings.batchBudget, pauseBetweenBatches: Self.pause(of: settings, forced: forced))
        let started = pacingChange.withLock { $0.generation }
        return { [self] in
            self.pacingChange.withLock { change in
                guard change.generation > started, var pacing = change.pacing else { return own }
                if forced { pacing.pauseBetweenBatches = change.forcedPause }
                return pacing
            }
        }
    }

    /// Stops every run at its next batch and waits for the background ones (shutdown).
    public func stopAll() async {
        gate.shutDown()
        let tasks = background.withLock { Array($0.values) }
        for task in tasks { await task.value }
    }
}
