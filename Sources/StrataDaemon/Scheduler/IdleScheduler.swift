import Foundation
import Logging
import Strata

/// The idle scheduler: reads the signals (the daemon's own load, pressure stall information,
/// the load average, optionally logind), decides with an ``IdleDetector`` whether the machine
/// is idle, and finishes deferred work on the hosted stores while it is — one store's turn
/// after the other (round robin), in budgeted batches with a cost delay after each.
///
/// When a signal turns busy (or the operator pauses, the window closes, `max_runtime` runs
/// out), the gate closes and the running batch is the last one: the work stops within one
/// batch, its progress kept in the store's ledger, and resumes once the machine has been idle
/// for `idle_after` again. Signals are read every `run_sample_interval` (25 ms) while work
/// runs, every `sample_interval` otherwise.
public actor IdleScheduler: DeferredWorkScheduler {
    /// The gate deferred batches check.
    public nonisolated let gate: SchedulerGate
    private let runner: DeferredWorkRunner
    private let stores: @Sendable () async -> [HostedStore]
    private let host: HostSignals
    private let logind: LogindIdleHint
    private let clock: any SchedulerClock
    private let logger: Logger

    private var detector: IdleDetector
    private var verdict: IdleDetector.Verdict
    private var readings: [SignalReading] = []
    private var unavailable: [String] = []
    private var statistics = SchedulerStatistics()
    private let metrics: SchedulerMetrics
    private var maxPauseLatency: Duration = .zero
    private var lastLogged: String?

    // Work in progress.
    private var work: Task<Void, Never>?
    private var workingOn: String?
    private var runtimeMark: ContinuousClock.Instant?
    private var workStartedAt: ContinuousClock.Instant?
    private var stopRequest: (at: ContinuousClock.Instant, cause: IdleDetector.Cause, reason: String)?
    private var lastStore: String?
    private var failedAt: [String: ContinuousClock.Instant] = [:]
    private var nothingPending = false
    /// When the history upkeep last started (it keeps the idle cadence while the lag holds the work).
    private var lastUpkeep: ContinuousClock.Instant?
    /// The stores as last sampled: status() tells from them which run holds a store.
    private var lastStores: [HostedStore] = []

    /// - Parameters:
    ///   - stores: the hosted stores, in configuration order (the registry's).
    ///   - host: where machine-wide signals are read (tests pass a directory of fake files).
    ///   - clock: the scheduler's time (tests pass a fake one).
    ///   - metrics: where the scheduler's metrics go (the daemon's registry).
    public init(settings: SchedulerSettings, gate: SchedulerGate, runner: DeferredWorkRunner,
                stores: @escaping @Sendable () async -> [HostedStore], host: HostSignals = HostSignals(),
                logind: LogindIdleHint = LogindIdleHint(), clock: any SchedulerClock = SystemSchedulerClock(),
                metrics: SchedulerMetrics = SchedulerMetrics(), logger: Logger) {
        self.metrics = metrics
        self.gate = gate
        self.runner = runner
        self.stores = stores
        self.host = host
        self.logind = logind
        self.clock = clock
        self.logger = logger
        self.detector = IdleDetector(settings: settings)
        self.verdict = IdleDetector.Verdict(allowsWork: false, state: .waiting, reason: "waiting: reading the signals", cause: .hysteresis, busy: [])
        gate.set(open: false)
    }

    // MARK: - Loop

    /// Samples the signals and runs deferred work when idle, until cancelled.
    public func run() async {
        logger.info("idle scheduler started", metadata: [
            "strata.signals": "\(settings().value(of: "signals") ?? "")", "strata.idle_after": "\(DurationText.format(settings().idleAfter))",
            "strata.cgroup": "\(host.cgroupDirectory ?? "none")",
        ])
        while !Task.isCancelled {
            await tick()
            // While the work runs, or only the replica's lag holds it, sample as often as a
            // running batch does: the work goes on within a sample of the replica catching up.
            let interval = work == nil && !heldByBacklog ? detector.settings.sampleInterval : detector.settings.runSampleInterval
            do { try await clock.sleep(for: interval) } catch { break }
        }
        gate.set(open: false)
        await work?.value
        logger.info("idle scheduler stopped")
    }

    /// Whether the verdict holds the work only for a backlog signal (the replica's lag).
    private var heldByBacklog: Bool {
        verdict.cause == .signal && !verdict.busy.isEmpty && verdict.busy.allSatisfy(\.signal.isBacklog)
    }

    /// Reads the signals once, decides, opens or closes the gate, and starts work when idle.
    /// (`run()` calls it in a loop; tests call it directly.)
    public func tick() async {
        let now = clock.now
        let all = await stores()
        lastStores = all
        sample(all, at: now)
        if work != nil, let mark = runtimeMark {
            detector.recordRuntime(now - mark)
            runtimeMark = now
        }
        decide(at: now)
        // History upkeep (gaps; retention when idle) runs beside the tick, never while
        // deferred work runs (the writer is the finisher's). While only the replica's lag holds
        // the work the loop samples every 25 ms; the upkeep, a visit to each store's writer,
        // keeps the idle sampling cadence.
        if work == nil, !heldByBacklog || lastUpkeep.map({ now - $0 >= detector.settings.sampleInterval }) ?? true {
            lastUpkeep = now
            let idle = verdict.allowsWork && detector.settings.enabled && gate.allowsIdleWork
            for hosted in all { HistoryPurger.start(hosted, purge: idle) }
        }
        guard verdict.allowsWork, detector.settings.enabled, work == nil, gate.allowsIdleWork else { return }
        let pending = all.contains { wantsTurn($0, at: now) }
        // "No deferred work pending" only when no store has any (not when a request runs it).
        nothingPending = !pending && all.allSatisfy { $0.state != .ready || $0.pendingTasks().isEmpty }
        if pending { startWork(at: now) }
    }

    private func sample(_ all: [HostedStore], at now: ContinuousClock.Instant) {
        let settings = detector.settings
        var readings = daemonReadings(all, at: now)
        if settings.signals.contains(.replication) {
            // Replicated stores: WAL bytes not yet on the replica (docs/Fleet.md).
            // Read while no work runs on the store, the WAL's growth is the clients' (their rate).
            readings += all.compactMap { hosted in
                guard hosted.state == .ready else { return nil }
                return hosted.replicaProbe?.reading(now: .now, logger: logger, at: work == nil && !hosted.isFinishing ? .workIdle : .other)
            }
        }
        if settings.signals.contains(.disk) {
            // The stores' file systems: the work's files grow while it runs (DiskSpace).
            let stores = all.filter { $0.state == .ready }.map { ($0.name, $0.configuration.path) }
            let disk = DiskSpace.readings(stores, minimum: settings.minFreeSpace)
            for reading in disk where reading.isBusy && !(self.readings.contains { $0.signal == .disk && $0.label == reading.label && $0.isBusy }) {
                logger.warning("deferred work holds: too little free space for it to grow its files; free space or lower min_free_space", metadata: [
                    "strata.reading": "\(reading.summary)",
                ])
            }
            readings += disk
        }
        let (hostReadings, hostUnavailable) = host.read(settings)
        readings += hostReadings
        var unavailable = hostUnavailable
        if settings.signals.contains(.logind) {
            switch logind.read(now: now) {
            case .success(let idle):
                readings.append(SignalReading(signal: .logind, label: "logind IdleHint", value: idle ? 0 : 1, threshold: 0.5, unit: ""))
            case .failure(let error):
                unavailable.append("logind: \(error.reason)")
            }
        }
        if unavailable != self.unavailable, !unavailable.isEmpty {
            logger.warning("scheduler signals unavailable (they are left out)", metadata: ["strata.unavailable": "\(unavailable.joined(separator: "; "))"])
        }
        self.readings = readings
        self.unavailable = unavailable
        for reading in readings {
            metrics.signal(reading).set(to: reading.value)
        }
    }

    /// The daemon's own load: requests per second and mean open transactions over
    /// `load_window` — or over the last 250 ms when that is busier, so returning load is seen
    /// at once (two quick requests exceed 5/s) and forgotten only after the window.
    private func daemonReadings(_ all: [HostedStore], at now: ContinuousClock.Instant) -> [SignalReading] {
        Self.daemonReadings(all, settings: detector.settings, windows: [detector.settings.loadWindow, StoreLoad.burstWindow], at: now)
    }

    static func daemonReadings(_ all: [HostedStore], settings: SchedulerSettings, windows: [Duration], at now: ContinuousClock.Instant) -> [SignalReading] {
        guard settings.signals.contains(.requests) || settings.signals.contains(.transactions) else { return [] }
        var rate = 0.0, open = 0.0
        var busiest: (name: String, rate: Double)?
        for hosted in all where hosted.state == .ready {
            let snapshots = windows.map { hosted.load.snapshot(window: $0, at: now) }
            let storeRate = snapshots.map(\.requestsPerSecond).max() ?? 0
            rate += storeRate
            open += snapshots.map(\.openTransactions).max() ?? 0
            if storeRate > (busiest?.rate ?? 0) { busiest = (hosted.name, storeRate) }
        }
        var readings: [SignalReading] = []
        if settings.signals.contains(.requests) {
            readings.append(SignalReading(signal: .requests, label: "daemon requests", value: rate, threshold: settings.requestRate, unit: "/s",
                                          note: rate > settings.requestRate ? busiest.map { "busiest store: \($0.name)" } : nil))
        }
        if settings.signals.contains(.transactions) {
            readings.append(SignalReading(signal: .transactions, label: "open transactions", value: open, threshold: settings.openTransactions, unit: ""))
        }
        return readings
    }

    /// The check the work makes before every batch: the daemon's load over the last 250 ms
    /// (reading no files, so it is cheap). Between two ticks, returning clients stop the work
    /// at the next batch without waiting for the sampling loop.
    private func interruptCheck(_ all: [HostedStore]) -> @Sendable () -> Interruption? {
        let settings = detector.settings
        let clock = self.clock
        return {
            let now = clock.now
            let busy = Self.daemonReadings(all, settings: settings, windows: [StoreLoad.burstWindow], at: now).filter(\.isBusy)
            return busy.isEmpty ? nil : Interruption(reason: "waiting: " + busy.map(\.summary).joined(separator: "; "), at: now)
        }
    }

    /// The check the work makes before every batch of a backlog it grows itself: the lag of
    /// each replicated store, its WAL's end read live (`-shm`), so that the work stops within
    /// one batch of reaching `max_lag` rather than within a sampling tick, and the free space
    /// of the working store's file system (nil without the `replication` signal or a
    /// replicated store, and without the `disk` signal).
    private func backlogCheck(_ all: [HostedStore], working: HostedStore) -> (@Sendable () -> Interruption?)? {
        let settings = detector.settings
        // The WAL's growth between two batches is the work's on the store it works on.
        let probes = !settings.signals.contains(.replication) ? [] : all.compactMap { hosted in
            hosted.state == .ready ? hosted.replicaProbe.map { ($0, hosted === working ? ReplicaLagProbe.Moment.beforeBatch : .other) } : nil
        }
        // The file system of the store the work grows (one `statvfs` per batch).
        let disk = settings.signals.contains(.disk) && settings.minFreeSpace > 0 ? (working.name, working.configuration.path, settings.minFreeSpace) : nil
        guard !probes.isEmpty || disk != nil else { return nil }
        let clock = self.clock
        let logger = self.logger
        return {
            for (probe, moment) in probes {
                let reading = probe.reading(now: .now, logger: logger, at: moment)
                if reading.isBusy { return Interruption(reason: "waiting: " + reading.summary, at: clock.now) }
            }
            if let (name, path, minimum) = disk, let reading = DiskSpace.readings([(name, path)], minimum: minimum).first, reading.isBusy {
                return Interruption(reason: "waiting: " + reading.summary, at: clock.now)
            }
            return nil
        }
    }

    /// Evaluates the latest readings and moves the gate.
    private func decide(at now: ContinuousClock.Instant) {
        verdict = detector.evaluate(readings, at: now, local: clock.local)
        if verdict.allowsWork {
            gate.set(open: true)
        } else {
            closeGate(at: now)
        }
        let logged = verdict.cause?.rawValue ?? "idle"
        if lastLogged != logged {
            lastLogged = logged
            logger.info("scheduler: \(verdict.reason)", metadata: ["strata.state": "\(verdict.state.rawValue)"])
        }
    }

    /// Closes the gate; when work runs, notes the first busy reading (for the pause latency).
    private func closeGate(at now: ContinuousClock.Instant) {
        gate.set(open: false)
        if work != nil, stopRequest == nil {
            stopRequest = (now, verdict.cause ?? .signal, verdict.reason)
            logger.notice("stepping aside: stopping deferred work at the end of the current batch",
                          metadata: ["strata.reason": "\(verdict.reason)", "strata.store": "\(workingOn ?? "-")"])
        }
    }

    // MARK: - Work

    private func startWork(at now: ContinuousClock.Instant) {
        statistics.runs += 1
        metrics.runs.increment()
        runtimeMark = now
        workStartedAt = now
        stopRequest = nil
        logger.notice("machine idle: starting deferred work", metadata: ["strata.reason": "\(verdict.reason)"])
        // The loop runs on the deferred-work thread too: only its short actor hops need the
        // cooperative pool, so a busy pool cannot hold a stop (or a start) back.
        work = Task(executorPreference: runner.executor) { await self.workLoop() }
    }

    private nonisolated func workLoop() async {
        while let (hosted, settings, interrupt, backlog, othersWaiting) = await nextTurn() {
            // A turn ends for the next store's; alone, a store keeps working until done or stopped.
            let deadline = othersWaiting ? clock.now + settings.storeTurn : nil
            let result = await runner.run(hosted, now: false, settings: settings, deadline: deadline,
                                        clock: clock, interrupt: interrupt, backlog: backlog, claim: .scheduler)
            let ended = clock.now
            // The turn's claim is released: a run holding the store now is a request's.
            let handedOver = hosted.isFinishing
            guard await turnEnded(result, at: ended, handedOver: handedOver ? hosted.name : nil) else { break }
        }
        await workEnded(at: clock.now)
    }

    /// Whether `hosted` can take a turn: open, not already finishing (a request's run, or a
    /// request waiting to take it over), not failed recently, and with pending work that is not
    /// held for clients of an older model version. The one place the scheduler asks "already
    /// finishing?"; the runner's claim settles races.
    private func wantsTurn(_ hosted: HostedStore, at now: ContinuousClock.Instant) -> Bool {
        hosted.state == .ready && !hosted.isFinishing && !recentlyFailed(hosted.name, now) && hosted.hasRunnableWork
    }

    /// The next store with pending work, in round-robin order after the last one.
    private func nextTurn() async -> (HostedStore, SchedulerSettings, interrupt: @Sendable () -> Interruption?,
                                      backlog: (@Sendable () -> Interruption?)?, othersWaiting: Bool)? {
        guard gate.allowsIdleWork else { return nil }
        let all = await stores()
        let now = clock.now
        let start = lastStore.flatMap { name in all.firstIndex { $0.name == name } }.map { $0 + 1 } ?? 0
        for offset in 0..<all.count {
            let hosted = all[(start + offset) % all.count]
            guard wantsTurn(hosted, at: now) else { continue }
            lastStore = hosted.name
            workingOn = hosted.name
            let othersWaiting = all.contains { $0 !== hosted && wantsTurn($0, at: now) }
            return (hosted, detector.settings, interruptCheck(all), backlogCheck(all, working: hosted), othersWaiting)
        }
        return nil
    }

    /// Records a turn; returns whether to go on.
    private func turnEnded(_ result: DeferredWorkRunner.Result, at ended: ContinuousClock.Instant, handedOver: String? = nil) -> Bool {
        if let handedOver {
            self.handedOver = handedOver
            logger.notice("deferred work on \(handedOver) handed over to a request (stratactl finish-deferred)", metadata: ["strata.store": "\(handedOver)"])
        }
        if let interrupted = result.interruptedBy, stopRequest == nil {
            // The work saw the load before the sampling loop did.
            stopRequest = (interrupted.at, .signal, interrupted.reason)
            closeGate(at: interrupted.at)
        }
        if let report = result.report {
            statistics.rowsProcessed += report.rowsProcessed
            statistics.batches += report.batches
            statistics.tasksFinished += report.tasksFinished
            metrics.rows(result.store).increment(by: report.rowsProcessed)
            metrics.batches(result.store).increment(by: Int64(report.batches))
            metrics.tasksFinished(result.store).increment(by: Int64(report.tasksFinished))
            if report.tasksRemaining == 0 {
                logger.notice("deferred work finished on store", metadata: ["strata.store": "\(result.store)"])
            }
        }
        statistics.delaySeconds += result.delayed.seconds
        metrics.delaySeconds.increment(by: result.delayed.seconds)
        if let error = result.error {
            statistics.errors += 1
            metrics.errors(result.store).increment()
            statistics.lastError = "\(result.store): \(error)"
            failedAt[result.store] = ended
            logger.error("deferred work turn failed; the store is skipped for a minute", metadata: ["strata.store": "\(result.store)", "strata.error": "\(error)"])
        }
        workingOn = nil
        // A turn that ended before any batch ran would only spin: let the next tick decide.
        if let report = result.report, report.batches == 0, report.stoppedEarly { return false }
        return gate.allowsIdleWork && !result.stoppedByGate
    }

    /// The store whose turn a request took over, until the work loop ends.
    private var handedOver: String?

    private func workEnded(at ended: ContinuousClock.Instant) {
        defer { handedOver = nil }
        if let mark = runtimeMark {
            detector.recordRuntime(ended - mark)
        }
        if let started = workStartedAt {
            statistics.workSeconds += (ended - started).seconds
            metrics.workSeconds.increment(by: (ended - started).seconds)
        }
        runtimeMark = nil
        workStartedAt = nil
        work = nil
        workingOn = nil
        if let stop = stopRequest {
            let latency = (ended - stop.at).seconds * 1000
            let record = PauseRecord(cause: stop.cause.rawValue, reason: stop.reason, latencyMilliseconds: latency, store: lastStore, at: Date())
            statistics.pauses += 1
            statistics.pausesByCause[stop.cause.rawValue, default: 0] += 1
            statistics.recentPauses.append(record)
            if statistics.recentPauses.count > SchedulerStatistics.recentLimit { statistics.recentPauses.removeFirst() }
            metrics.pauses(stop.cause.rawValue).increment()
            metrics.recordPause(latency: ended - stop.at)
            maxPauseLatency = max(maxPauseLatency, ended - stop.at)
            metrics.pauseLatencyMax.set(to: maxPauseLatency.seconds)
            logger.notice("deferred work paused", metadata: [
                "strata.reason": "\(stop.reason)", "strata.latency_ms": "\(String(format: "%.1f", latency))",
                "strata.store": "\(lastStore ?? "-")",
            ])
        } else if handedOver == nil {
            let left = lastStores.filter { $0.state == .ready && !$0.pendingTasks().isEmpty }.map(\.name)
            nothingPending = left.isEmpty
            if left.isEmpty {
                logger.notice("no deferred work left to run")
            } else {
                logger.notice("deferred work turns ended; work left on \(left.joined(separator: ", "))", metadata: ["strata.stores": "\(left.joined(separator: ","))"])
            }
        }
        stopRequest = nil
    }

    private func recentlyFailed(_ name: String, _ now: ContinuousClock.Instant) -> Bool {
        guard let failed = failedAt[name] else { return false }
        return now - failed < .seconds(60)
    }

    // MARK: - DeferredWorkScheduler

    /// The scheduler's state, reason, signals and statistics.
    public func status() -> SchedulerStatus {
        var state = verdict.state
        var reason = verdict.reason
        if verdict.allowsWork {
            if let workingOn {
                state = .running
                reason = "running: deferred work on \(workingOn) (\(verdict.reason))"
            } else if work != nil {
                state = .running
                reason = "running: deferred work (\(verdict.reason))"
            } else if nothingPending {
                reason = "idle: no deferred work pending"
            }
        } else if work != nil {
            reason += " (stopping the current batch)"
        }
        if !detector.settings.enabled, state != .paused {
            state = .disabled
            reason = "disabled (enabled=false): the scheduler starts no work itself; \(reason)"
        }
        // A run on request holds a store: that is what the daemon is doing, whatever the
        // scheduler's own state (which follows, after "scheduler:").
        let requested = lastStores.filter(\.isFinishingOnRequest).map(\.name)
        if !requested.isEmpty, workingOn == nil {
            reason = "running: finishing deferred work on \(requested.joined(separator: ", ")) on request (stratactl finish-deferred); scheduler: \(reason)"
            state = .running
        }
        var statistics = self.statistics
        statistics.workSeconds = self.statistics.workSeconds + (workStartedAt.map { (clock.now - $0).seconds } ?? 0)
        (statistics.pauseLatencyP50Milliseconds, statistics.pauseLatencyP99Milliseconds, statistics.pauseLatencyMaxMilliseconds) =
            metrics.pauseLatencyMilliseconds()
        statistics.clientWaitMaxMilliseconds = runner.clientWaitMaxMilliseconds
        return SchedulerStatus(state: state, reason: reason, paused: detector.pausedReason != nil, signals: readings, unavailable: unavailable,
                               windowRuntimeSeconds: detector.windowRuntime.seconds, workingOn: workingOn, statistics: statistics)
    }

    /// Pauses the scheduler (running work steps aside at the next batch); returns the new status.
    public func pause(reason: String) -> SchedulerStatus {
        let reason = reason.isEmpty ? "by request" : reason
        detector.pause(reason: reason)
        decide(at: clock.now)
        logger.notice("scheduler paused", metadata: ["strata.reason": "\(reason)"])
        return status()
    }

    /// Resumes the scheduler; returns the new status.
    public func resume() -> SchedulerStatus {
        detector.resume()
        decide(at: clock.now)
        logger.notice("scheduler resumed")
        return status()
    }

    /// The current settings.
    public func settings() -> SchedulerSettings { detector.settings }

    /// Sets `key` to `value`; returns the previous value.
    /// - Throws: ``SchedulerSettingError`` for an unknown key or a bad value.
    public func set(_ key: String, to value: String) throws(SchedulerSettingError) -> String {
        let previous = detector.settings.value(of: key) ?? ""
        try detector.settings.set(key, to: value)
        runner.updatePacing(detector.settings)   // work in flight takes it at its next batch
        logger.notice("scheduler setting changed", metadata: ["strata.key": "\(key)", "strata.value": "\(value)", "strata.previous": "\(previous)"])
        decide(at: clock.now)
        return previous
    }

    /// Replaces every setting (a reload).
    public func apply(_ settings: SchedulerSettings) {
        detector.settings = settings
        runner.updatePacing(settings)
        decide(at: clock.now)
    }

    /// Whether work may run now, and why (or why not).
    public func permission() -> (allowed: Bool, reason: String) {
        (verdict.allowsWork, verdict.reason)
    }

    /// Proves the scheduler's actor is responsive (the watchdog awaits it).
    public func heartbeat() {}
}
