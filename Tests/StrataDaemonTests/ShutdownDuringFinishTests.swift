import Foundation
import Strata
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// SIGTERM while `FinishDeferred(now)` runs — work that neither load nor an operator `pause`
/// stops: the work stops within one batch (a batch in flight is interrupted and rolled back,
/// a pause between batches ends at once), the request is answered with what was done (its
/// final reply written before the drain closes the connection), the
/// daemon exits 0, and the ledger keeps the progress of every committed batch, every row in
/// place.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ShutdownDuringFinishTests {
    static let rows = 60_000

    static func config(_ sandbox: DaemonSandbox, models: String) -> String {
        // No idle batches: every batch keeps to 5 ms, however quiet the store.
        sandbox.loadStoreConfig(models: models, scheduler: ["enabled: false", "batch_budget: 5ms", "pause_between_batches: 1s", "forced_pause_between_batches: 1s",
                                                            "idle_batch_budget: 0s"])
    }

    @Test func sigtermStopsForcedWorkWithinOneBatch() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        let models = try LoadModel.write(in: sandbox.directory.path)
        let path = sandbox.path("load.sqlite")
        try LoadModel.seed(at: path, models: models, rows: Self.rows)
        try Self.config(sandbox, models: models).write(toFile: sandbox.configPath, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(config: sandbox.configPath)
        defer { daemon.signal(SIGKILL) }
        try await waitForSocket(sandbox.adminSocket)

        // FinishDeferred(now): one progress reply per committed batch; paced slowly (5 ms
        // batches, long pauses), so that the work is far from done when the signal comes. The
        // cost delay after a batch is `pause_between_batches` scaled by the batch's time (a
        // 1 ms batch rests 200 ms): long enough that a loaded machine's delay between the
        // progress reply the test counted and the daemon handling SIGTERM stays within it.
        let progress = Mutex<[Int64]>([])
        let socket = sandbox.adminSocket
        let finish = Task {
            try await VarlinkClient.withConnection(to: socket) { admin in
                try await admin.callMore(StrataAdmin.FinishDeferred.self, .init(store: "load", wait: true, now: true)) { reply in
                    if let step = reply.progress { progress.withLock { $0.append(step.rowsDone) } }
                }
            }
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while progress.withLock({ $0.count }) < 3, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        let batchesBefore = progress.withLock { $0.count }
        try #require(batchesBefore >= 3, "no deferred batch ran: \(daemon.log)")

        daemon.signal(SIGTERM)
        // The call was accepted before the signal: its final reply (`continues: false`) is
        // written before the drain closes the connection, every time.
        let last: StrataAdmin.FinishDeferred.Reply
        do {
            last = try await finish.value
        } catch {
            Issue.record("FinishDeferred got no final reply: \(error)\n\(daemon.log)")
            return
        }
        #expect(await daemon.waitForExit() == 0, "\(daemon.log)")
        #expect(daemon.log.contains("deferred work run ended") && daemon.log.contains("strata.stopped_early=true"), "\(daemon.log)")
        let seen = progress.withLock { $0 }
        // Within one batch: at most the batch that was in flight commits after the signal — as
        // the replies tell, and as the daemon's log of the paused task counts.
        #expect(seen.count - batchesBefore <= 1, "\(seen.count - batchesBefore) batches after SIGTERM\n\(daemon.log)")
        let paused = daemon.log.split(separator: "\n").first { $0.contains("paused deferred task #1") }
        let logged = paused.flatMap { line in line.split(separator: " ").first { $0.hasPrefix("strata.batches=") } }
            .flatMap { Int($0.dropFirst("strata.batches=".count)) }
        #expect(logged.map { $0 <= batchesBefore + 1 } == true, "batches of the run: \(String(describing: logged)), \(batchesBefore) before SIGTERM\n\(daemon.log)")
        #expect(last.state == .stopped, "\(last)")
        let result = try #require(last.results.first)
        #expect(result.stoppedEarly && result.tasksRemaining > 0 && result.error == nil, "\(result)")

        // The ledger kept the progress of the committed batches; every row is there.
        let pending = try PersistentStore.pendingDeferredWork(at: URL(fileURLWithPath: path))
        let rewrite = try #require(pending.first { $0.kind == .rewriteTable }, "\(pending)")
        #expect(rewrite.rowsDone >= seen.last ?? 0 && rewrite.rowsDone < Int64(Self.rows), "\(rewrite)")
        let store = try LoadModel.openDeferred(at: path, models: models)
        defer { try? store.close() }
        print("shutdown during finish: batches before \(batchesBefore), after \(seen.count), rows done \(rewrite.rowsDone), progress \(seen)")
        let count = try await store.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM Item") }
        #expect(count == Self.rows)
        let integrity = try await store.database.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") }
        #expect(integrity == "ok")
    }
}
