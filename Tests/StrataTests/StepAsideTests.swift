import Foundation
import GRDB
import Synchronization
import Testing
@testable import Strata

/// The one place that decides whether deferred work goes on or gives way (`StepAside`), and the
/// measure of the promise it keeps: the longest a client arriving at the worst moment would wait
/// behind each step (`ArrivalChecks`, `FinishReport.longestClientWaits`).
@Suite("Deferred work: stepping aside within one batch")
struct StepAsideTests {
    @Test("the longest wait of a hold is its longest stretch between two points at which an arrival ends it")
    func longestStretchBetweenChecks() {
        let checks = ArrivalChecks()
        let start = ContinuousClock.now
        checks.begin(at: start)
        checks.checked(at: start + .milliseconds(1))
        checks.checked(at: start + .milliseconds(5))
        let stretch = checks.end(at: start + .milliseconds(6))
        #expect(stretch.wait == .milliseconds(4))
        #expect(stretch.from == .milliseconds(1) && stretch.to == .milliseconds(5))
        #expect(stretch.checks == 2)
        // A hold with no such point (a normal batch, a commit, a schema change) counts whole.
        checks.begin(at: start)
        #expect(checks.end(at: start + .milliseconds(9)).wait == .milliseconds(9))
        // A check outside a hold is not counted.
        checks.checked(at: start + .milliseconds(20))
        checks.begin(at: start + .milliseconds(30))
        #expect(checks.end(at: start + .milliseconds(31)).wait == .milliseconds(1))
    }

    @Test("what no check can cut short fits one batch budget, idle batch or not, and follows the pacing in force")
    func uninterruptibleUnitsFitTheBatchBudget() {
        let live = Mutex<FinishPacing?>(nil)
        var options = FinishOptions(batchBudget: .milliseconds(5), clientsActive: { false }, idleBatchBudget: .milliseconds(250))
        options.livePacing = { live.withLock { $0 } ?? FinishPacing(batchBudget: .milliseconds(5), pauseBetweenBatches: .zero) }
        let stepAside = StepAside(options: options)
        _ = stepAside.beginBatch { }
        #expect(stepAside.isIdle && stepAside.budget == .milliseconds(250))
        #expect(stepAside.uninterruptibleBudget == .milliseconds(5))
        #expect(stepAside.uninterruptibleTarget == .milliseconds(3))
        #expect(stepAside.fitsUninterruptibly(.milliseconds(5)))
        #expect(!stepAside.fitsUninterruptibly(.microseconds(5001)))
        live.withLock { $0 = FinishPacing(batchBudget: .milliseconds(20), pauseBetweenBatches: .zero) }
        #expect(stepAside.refreshPacing() != nil)
        #expect(stepAside.fitsUninterruptibly(.milliseconds(20)) && !stepAside.fitsUninterruptibly(.milliseconds(21)))
    }

    @Test("a run reports the longest possible client wait behind each of its steps, and the work's thread's wait for a core")
    func aRunReportsItsClientWaits() async throws {
        let rows = 20_000
        let directory = TemporaryDirectory("waits")
        let store = try DeferredIdleBatchTests.store(rows: rows, in: directory)
        let report = try await store.finishDeferredMigration(FinishOptions(batchBudget: .milliseconds(2), clientsActive: { false },
                                                                           idleBatchBudget: .milliseconds(100)))
        #expect(report.tasksRemaining == 0)
        for step in ["copy batch", "swap"] {
            let wait = try #require(report.longestClientWaits[step], "\(report.longestClientWaits)")
            let held = try #require(report.longestLockHolds[step])
            // A wait is a stretch of a hold: never longer than the longest hold of its step.
            #expect(wait >= 0 && wait <= held, "\(step): wait \(wait) ms, held \(held) ms")
        }
        // An idle batch gives way at its checks: its longest stretch is shorter than its hold.
        let copyWait = try #require(report.longestClientWaits["copy batch"]), copyHeld = try #require(report.longestLockHolds["copy batch"])
        #expect(copyWait < copyHeld, "copy batch: wait \(copyWait) ms, held \(copyHeld) ms")
        #if os(Linux)
        // Measured on every run, whichever threads its tasks resumed on (CoreWaitMeter), and
        // part of the run's time, never beside it.
        let coreWait = try #require(report.coreWaitSeconds)
        #expect(coreWait >= 0 && coreWait <= report.seconds)
        #endif
        try DeferredIdleBatchTests.check(store, rows: rows)
        try store.close()
    }

    #if os(Linux)
    @Test("a run's wait for a core adds stretches read on one thread and leaves out those whose readings are of two")
    func coreWaitAcrossThreads() throws {
        var meter = CoreWaitMeter()
        #expect(meter.total == nil)
        meter.mark()
        let first = try #require(meter.total, "the kernel's schedstat answers here")
        #expect(first == .zero)
        // A reading on another thread (an await that resumed elsewhere): nothing added, the
        // meter goes on from that thread's figures.
        let other = Mutex<CoreWaitMeter>(meter)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            other.withLock { $0.mark() }
            done.signal()
        }
        done.wait()
        meter = other.withLock { $0 }
        #expect(meter.total == first)
        // The kernel's figures as the file says them: a thread's time on a core grows with its work.
        let before = try #require(ThreadSchedule.current())
        // Work until the thread's CPU clock (another view of the same kernel figure) says 5 ms.
        func threadCPU() -> Duration {
            var now = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
            return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
        }
        let cpuStart = threadCPU()
        var spin = 0.0
        while threadCPU() - cpuStart < .milliseconds(5) { spin += sin(spin) + 1 }
        let after = try #require(ThreadSchedule.current())
        #expect(spin > 0 && after.running - before.running >= .milliseconds(4), "\(before) → \(after)")
        #expect(after.waited(since: before).map { $0 >= .zero } == true)
        // Two readings on one thread: the wait between them counts, never negative.
        meter.mark()
        meter.mark()
        #expect(try #require(meter.total) >= first)
    }
    #endif

    @Test("a merge batch's wait for its read-ahead ends once the batch must give way, the read-ahead interrupted")
    func readAheadWaitGivesWay() {
        let overlap = SortedRunMerge.Overlap()
        let release = DispatchSemaphore(value: 0)
        let interrupted = Atomic<Bool>(false)
        // Work that runs until it is interrupted (as a read on the buffer's connection would).
        overlap.start { release.wait() }
        let asked = Atomic<Int>(0)
        let started = ContinuousClock.now
        overlap.wait(giveWay: { asked.add(1, ordering: .relaxed).newValue >= 3 }, interrupt: {
            interrupted.store(true, ordering: .relaxed)
            release.signal()
        })
        let wasInterrupted = interrupted.load(ordering: .relaxed), questions = asked.load(ordering: .relaxed)
        #expect(wasInterrupted)
        #expect(questions >= 3)
        #expect(ContinuousClock.now - started < .seconds(5))
        // Nothing pending any more: a second wait returns at once and interrupts nothing.
        interrupted.store(false, ordering: .relaxed)
        overlap.wait(giveWay: { true }, interrupt: { interrupted.store(true, ordering: .relaxed) })
        let interruptedAgain = interrupted.load(ordering: .relaxed)
        #expect(!interruptedAgain)
    }
}
