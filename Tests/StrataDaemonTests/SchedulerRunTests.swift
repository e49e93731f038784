import Foundation
import Logging
import Strata
import Synchronization
import Testing
@testable import StrataDaemon

/// The idle scheduler on a real store with deferred work, driven tick by tick with a fake
/// clock and fake pressure files: it starts only after `idle_after` of quiet, stops within one
/// batch when a signal turns busy (or on pause, max runtime, the window), keeps the progress,
/// resumes once idle again, and finishes the store.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct SchedulerRunTests {
    final class Fixture: Sendable {
        let directory: String
        let store: PersistentStore
        let hosted: HostedStore
        let root: FakeHostRoot
        let clock = FakeSchedulerClock()
        let scheduler: IdleScheduler

        init(rows: Int, configure: (inout SchedulerSettings) throws -> Void = { _ in }) throws {
            directory = NSTemporaryDirectory() + "strata-sched-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let models = try LoadModel.write(in: directory)
            let path = directory + "/load.sqlite"
            try LoadModel.seed(at: path, models: models, rows: rows)
            store = try LoadModel.openDeferred(at: path, models: models)
            hosted = HostedStore(configuration: StoreConfiguration(name: "load", path: path, modelDirectory: models),
                                 store: store, modelVersion: "Load 2", state: .ready)
            root = try FakeHostRoot()
            var settings = SchedulerSettings()
            try settings.set("idle_after", to: "1s")
            try settings.set("signals", to: "requests,transactions,cpu,io,cgroup,load")
            // Slow work (a 5% duty cycle, no idle batches): however long a loaded machine holds
            // the test back between its steps, the store is not finished before the test says so.
            try settings.set("batch_budget", to: "2ms")
            try settings.set("pause_between_batches", to: "40ms")
            try settings.set("idle_batch_budget", to: "0s")
            try settings.set("store_turn", to: "200ms")
            try configure(&settings)
            var logger = Logger(label: "test.scheduler")
            logger.logLevel = .warning
            let gate = SchedulerGate()
            let hosted = self.hosted
            scheduler = IdleScheduler(settings: settings, gate: gate, runner: DeferredWorkRunner(gate: gate, logger: logger),
                                      stores: { [hosted] }, host: HostSignals(root: root.path, cores: 2), clock: clock, logger: logger)
        }

        var rowsDone: Int64 { ((try? store.pendingDeferredWork()) ?? []).reduce(0) { $0 + $1.rowsDone } }
        var pending: Int { ((try? store.pendingDeferredWork()) ?? []).count }

        /// Waits (real time) until the scheduler has recorded `count` pauses.
        func waitForPauses(_ count: Int) async -> SchedulerStatus {
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                let status = await scheduler.status()
                if status.statistics.pauses >= count, status.state != .running, status.workingOn == nil { return status }
                try? await Task.sleep(for: .milliseconds(5))
            }
            return await scheduler.status()
        }

        /// Waits (real time, up to 60 s: in a parallel test run other tests may hold every
        /// thread of the cooperative pool for long) until a batch has recorded progress.
        func waitForProgress() async -> Bool {
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                if rowsDone > 0 { return true }
                try? await Task.sleep(for: .milliseconds(10))
            }
            return false
        }

        /// Ticks with the clock moving `step` each time until the work is done.
        func runToCompletion(step: Duration = .milliseconds(25)) async {
            let deadline = ContinuousClock.now + .seconds(60)
            while pending > 0, ContinuousClock.now < deadline {
                clock.advance(step)
                await scheduler.tick()
                try? await Task.sleep(for: .milliseconds(10))
            }
        }

        // Synchronous (GRDB picks its async overloads inside async tests).
        func columns() throws -> [String] { try store.database.read { db in try db.columns(in: "Item").map(\.name) } }
        func count() throws -> Int? { try store.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM Item") } }

        func remove() {
            try? store.close()
            root.remove()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    @Test func startsAfterIdleAfterStopsWithinOneBatchAndResumes() async throws {
        let f = try Fixture(rows: 150_000)
        defer { f.remove() }
        #expect(f.pending > 0)

        // Quiet from t=0, but not for idle_after yet: nothing runs.
        await f.scheduler.tick()
        var status = await f.scheduler.status()
        #expect(status.state == .waiting)
        #expect(status.reason == "waiting: quiet for 0.0s of idle_after 1s")
        f.clock.advance(.milliseconds(900))
        await f.scheduler.tick()
        try await Task.sleep(for: .milliseconds(100))
        #expect(f.rowsDone == 0)
        #expect(await f.scheduler.status().workingOn == nil)

        // t=1s: idle, work starts.
        f.clock.advance(.milliseconds(100))
        await f.scheduler.tick()
        status = await f.scheduler.status()
        #expect(status.state == .running, "\(status.reason)")
        #expect(status.statistics.runs == 1)
        let progressed = await f.waitForProgress()
        let afterStart = await f.scheduler.status()
        #expect(progressed, "no batch ran: \(afterStart)")

        // I/O pressure: stops within one batch, progress kept in the ledger.
        f.root.set(io: 31)
        f.clock.advance(.milliseconds(25))
        await f.scheduler.tick()
        status = await f.waitForPauses(1)
        #expect(status.state == .waiting)
        #expect(status.reason == "waiting: io pressure avg10 31% > 10%")
        let pause = try #require(status.statistics.recentPauses.last)
        #expect(pause.cause == "signal")
        #expect(pause.reason == "waiting: io pressure avg10 31% > 10%")
        #expect(pause.latencyMilliseconds < 100, "pause latency \(pause.latencyMilliseconds) ms")
        let kept = f.rowsDone
        #expect(kept > 0)
        #expect(f.pending > 0)
        try await Task.sleep(for: .milliseconds(150))
        #expect(f.rowsDone == kept, "no batch runs while busy")

        // Quiet again: waits idle_after before resuming where it stopped.
        f.root.set(io: 1)
        f.clock.advance(.milliseconds(500))
        await f.scheduler.tick()
        #expect(await f.scheduler.status().reason == "waiting: quiet for 0.0s of idle_after 1s")
        f.clock.advance(.seconds(1))
        await f.scheduler.tick()
        #expect(await f.scheduler.status().state == .running)
        try await Task.sleep(for: .milliseconds(100))

        // The operator pauses: stops within one batch; resume runs again at once (the
        // signals stayed quiet, so the wait is served).
        status = await f.scheduler.pause(reason: "deploy")
        #expect(status.paused)
        status = await f.waitForPauses(2)
        #expect(status.state == .paused)
        #expect(status.reason == "paused: deploy")
        #expect(status.statistics.recentPauses.last?.cause == "paused")
        #expect((status.statistics.recentPauses.last?.latencyMilliseconds ?? 1000) < 100)
        let whilePaused = f.rowsDone
        f.clock.advance(.seconds(5))
        await f.scheduler.tick()
        try await Task.sleep(for: .milliseconds(100))
        #expect(f.rowsDone == whilePaused)
        _ = await f.scheduler.resume()
        await f.scheduler.tick()
        #expect(await f.scheduler.status().state == .running)
        try await Task.sleep(for: .milliseconds(100))

        // The daemon's own load (requests on the store) is a signal like the others.
        for _ in 0..<30 {
            f.hosted.load.begin(at: f.clock.now)
            f.hosted.load.end(at: f.clock.now)
        }
        f.clock.advance(.milliseconds(25))
        await f.scheduler.tick()
        status = await f.waitForPauses(3)
        #expect(status.reason.hasPrefix("waiting: daemon requests "), "\(status.reason)")
        #expect(status.reason.hasSuffix("/s > 5/s (busiest store: load)"), "\(status.reason)")

        // max_runtime: once used up in this window (here: the day), work stops.
        f.clock.advance(.seconds(12))  // the requests leave the 10 s load window
        await f.scheduler.tick()
        f.clock.advance(.seconds(1))
        await f.scheduler.tick()
        #expect(await f.scheduler.status().state == .running)
        _ = try await f.scheduler.set("max_runtime", to: "2s")
        f.clock.advance(.seconds(3))
        await f.scheduler.tick()
        status = await f.waitForPauses(4)
        #expect(status.reason == "waiting: max_runtime 2s used up in this day")
        #expect(status.statistics.pausesByCause["max_runtime"] == 1)
        _ = try await f.scheduler.set("max_runtime", to: "0")

        // Outside the maintenance window nothing starts.
        _ = try await f.scheduler.set("maintenance_window", to: "02:00-05:00")
        await f.scheduler.tick()
        status = await f.scheduler.status()
        #expect(status.reason == "waiting: outside the maintenance window 02:00-05:00")
        #expect(status.workingOn == nil)
        _ = try await f.scheduler.set("maintenance_window", to: "")

        // Left alone (and at full speed from the next turn), it finishes the store.
        _ = try await f.scheduler.set("batch_budget", to: "50ms")
        _ = try await f.scheduler.set("pause_between_batches", to: "0")
        await f.runToCompletion()
        #expect(f.pending == 0)
        try await Task.sleep(for: .milliseconds(50))
        await f.scheduler.tick()
        status = await f.scheduler.status()
        #expect(status.state == .idle)
        #expect(status.reason == "idle: no deferred work pending")
        #expect(status.statistics.pauses == 4)
        #expect(status.statistics.tasksFinished >= 1)
        #expect(status.statistics.rowsProcessed >= 150_000)
        #expect(status.statistics.workSeconds > 0)
        #expect(status.statistics.pauseLatencyP99Milliseconds < 100)
        #expect(try !f.columns().contains("legacyNote"))
        #expect(try f.count() == 150_000)
    }

    @Test func disabledStartsNothingButIdleRespectingRequestsRun() async throws {
        let f = try Fixture(rows: 2_000) { try $0.set("enabled", to: "false") }
        defer { f.remove() }
        await f.scheduler.tick()
        f.clock.advance(.seconds(2))
        await f.scheduler.tick()
        let status = await f.scheduler.status()
        #expect(status.state == .disabled)
        #expect(status.reason.hasPrefix("disabled (enabled=false)"))
        try await Task.sleep(for: .milliseconds(100))
        #expect(f.rowsDone == 0)
        #expect(f.pending > 0)
        #expect(await f.scheduler.permission().allowed)
    }

    @Test func aRequestTakesTheStoreOverFromASchedulerTurn() async throws {
        let f = try Fixture(rows: 150_000)
        defer { f.remove() }
        await f.scheduler.tick()
        f.clock.advance(.seconds(1))
        await f.scheduler.tick()
        #expect(await f.scheduler.status().state == .running)
        #expect(await f.waitForProgress(), "the scheduler's turn ran no batch")
        let byScheduler = f.rowsDone
        #expect(f.hosted.isFinishing && !f.hosted.isFinishingOnRequest)

        // `FinishDeferred --wait`: the turn ends at its next batch, the request finishes the rest.
        let requests = DeferredWorkRunner(gate: SchedulerGate(), logger: Logger(label: "test.request"))
        let results = await requests.finish([f.hosted], now: true, settings: SchedulerSettings()) { _, _ in }
        let result = try #require(results.first)
        #expect(result.error == nil, "\(result.error ?? "")")
        #expect(result.report?.tasksRemaining == 0)
        #expect((result.report?.rowsProcessed ?? 0) > 0 && byScheduler > 0, "both did part of the work")
        #expect(f.pending == 0)
        #expect(try f.count() == 150_000)
        let status = await f.scheduler.status()
        #expect(status.statistics.errors == 0, "\(status.statistics.lastError ?? "")")
        #expect(status.workingOn == nil)
        #expect(!f.hosted.isFinishing)
    }

    /// Issue 23: the replica's lag is asked before every batch of a scheduler's run, so the
    /// work stops within one batch of reaching `max_lag` (not within a sampling tick), and
    /// never during a batch (a batch is not rolled back for it); a forced run ignores it.
    @Test func aBacklogIsCheckedBeforeEveryBatchAndPacesAForcedRunUnlessIgnored() async throws {
        let f = try Fixture(rows: 20_000) { settings in
            try settings.set("pause_between_batches", to: "0ms")
        }
        defer { f.remove() }
        let calls = Mutex(0)
        let busyFrom = 6
        let backlog: @Sendable () -> Interruption? = {
            let call = calls.withLock { $0 += 1; return $0 }
            return call >= busyFrom ? Interruption(reason: "waiting: replica lag (load) 17 MiB > 16 MiB", at: .now) : nil
        }
        let gate = SchedulerGate()
        let runner = DeferredWorkRunner(gate: gate, logger: Logger(label: "test.backlog"))
        var settings = SchedulerSettings()
        try settings.set("batch_budget", to: "2ms")
        try settings.set("pause_between_batches", to: "0ms")
        let held = await runner.run(f.hosted, now: false, settings: settings, backlog: backlog, claim: .scheduler)
        let report = try #require(held.report)
        #expect(held.error == nil, "\(held.error ?? "")")
        #expect(report.batches >= 1 && report.batches <= busyFrom - 1, "batches \(report.batches) for \(busyFrom - 1) quiet checks")
        #expect(held.stoppedByGate && held.interruptedBy?.reason == "waiting: replica lag (load) 17 MiB > 16 MiB")
        #expect(!gate.allowsIdleWork, "the backlog closes the gate")
        #expect(f.pending > 0 && f.rowsDone > 0)

        // `FinishDeferred(now)` overrides the scheduler's signals but not the replica's lag
        // (issue 45): given the backlog, a forced run stops at it (its pacing waits, then goes
        // on); with `ignoreLag` it is given none, and nothing holds it.
        let paced = await DeferredWorkRunner(gate: SchedulerGate(), logger: Logger(label: "test.paced"))
            .run(f.hosted, now: true, settings: settings, backlog: { Interruption(reason: "busy", at: .now) })
        #expect(paced.error == nil && (paced.report?.tasksRemaining ?? 0) > 0, "\(paced.error ?? "")")
        let forced = await DeferredWorkRunner(gate: SchedulerGate(), logger: Logger(label: "test.forced"))
            .run(f.hosted, now: true, settings: settings)
        #expect(forced.error == nil && forced.report?.tasksRemaining == 0, "\(forced.error ?? "")")
        #expect(f.pending == 0)
        #expect(try f.count() == 20_000)
    }

    /// A run an operator forces (`FinishDeferred(now)`) takes `forced_pause_between_batches` as
    /// its cost delay — none shipped, as PostgreSQL's manual VACUUM — and any other run
    /// `pause_between_batches`.
    @Test("a forced run's cost delay is forced_pause_between_batches, any other run's pause_between_batches")
    func aForcedRunTakesItsOwnCostDelay() async throws {
        var settings = SchedulerSettings()
        try settings.set("batch_budget", to: "2ms")
        try settings.set("idle_batch_budget", to: "0s")
        try settings.set("pause_between_batches", to: "20ms")
        #expect(settings.forcedPauseBetweenBatches == .zero, "shipped: none")
        for (now, forcedPause) in [(true, "0s"), (false, "0s"), (true, "10ms")] {
            // Enough rows for many 2 ms batches; more only lengthen the paced runs.
            let f = try Fixture(rows: 5_000)
            defer { f.remove() }
            try settings.set("forced_pause_between_batches", to: forcedPause)
            let result = await DeferredWorkRunner(gate: SchedulerGate(), logger: Logger(label: "test.forced-pause"))
                .run(f.hosted, now: now, settings: settings, claim: now ? .request : .scheduler)
            let report = try #require(result.report)
            #expect(result.error == nil && report.tasksRemaining == 0, "\(result.error ?? "")")
            #expect(report.batches > 1)
            #expect(try f.count() == 5_000)
            if now && forcedPause == "0s" {
                #expect(report.pauseSeconds == 0, "a forced run slept \(report.pauseSeconds) s")
            } else {
                // At least a tenth of each full batch's 20 ms (or 10 ms) pause, over more than one batch.
                #expect(report.pauseSeconds > 0.002, "now=\(now) forced pause \(forcedPause): slept \(report.pauseSeconds) s over \(report.batches) batches")
            }
        }
    }

    @Test("a call in flight makes callsQuiet zero; after it, callsQuiet counts from its end")
    func callsQuietCountsFromTheLastCallsEnd() async throws {
        let f = try Fixture(rows: 100)
        defer { f.remove() }
        #expect(f.hosted.callsQuiet == HostedStore.neverCalled)
        try f.hosted.use { _ in #expect(f.hosted.callsQuiet == .zero) }
        let right = f.hosted.callsQuiet
        try await Task.sleep(for: .milliseconds(300))
        #expect(f.hosted.callsQuiet >= right + .milliseconds(300))
        try f.hosted.use { _ in }
        #expect(f.hosted.callsQuiet < .milliseconds(300), "the call's end starts the count again")
    }

    @Test("with the shipped idle_batch_budget, a quiet store gets idle batches and one called every few ms none")
    func idleBatchesNeedAQuietStore() async throws {
        for calling in [false, true] {
            let f = try Fixture(rows: 20_000)
            defer { f.remove() }
            // A client calling every 2 ms: never in flight between two calls, never quiet for 250 ms.
            let stop = Atomic<Bool>(false)
            let hosted = f.hosted
            let caller = Thread {
                while calling, !stop.load(ordering: .relaxed) {
                    _ = try? hosted.use { _ in }
                    usleep(2_000)
                }
            }
            caller.start()
            var settings = SchedulerSettings()
            try settings.set("batch_budget", to: "2ms")
            try settings.set("pause_between_batches", to: "0ms")
            #expect(settings.idleBatchBudget == .milliseconds(250))
            let result = await DeferredWorkRunner(gate: SchedulerGate(), logger: Logger(label: "test.idle"))
                .run(f.hosted, now: true, settings: settings)
            stop.store(true, ordering: .relaxed)
            let report = try #require(result.report)
            #expect(result.error == nil && report.tasksRemaining == 0, "\(result.error ?? "")")
            #expect(try f.count() == 20_000)
            if calling {
                // Without the quiet spell nearly every batch would begin idle (a call takes
                // microseconds) and be aborted by the next call; a loaded machine may stall the
                // caller past 250 ms now and then.
                #expect(report.idleBatches * 10 <= report.batches, "idle \(report.idleBatches) of \(report.batches)")
            } else {
                #expect(report.idleBatches > 0 && report.batchesYielded == 0, "idle \(report.idleBatches) of \(report.batches)")
            }
        }
    }
}
