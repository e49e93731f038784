import Foundation

/// The figures of one `strata-bench upgrade` run, as text or one JSON object.
struct UpgradeResults {
    var rows: Int
    var clients: Int
    var interval: Int
    var storeMB: Double
    var loadStart: Double
    var loadEnd = 0.0
    var batchBudget = "5ms"
    var pause = "0s"
    var idleBatchBudget = "250ms"

    var readyDeferred: Duration?
    var readyDefault: Duration?
    var readySync: Duration?
    var finish: Duration?
    /// `FinishDeferred(reclaim)` after it: the vacuum it left, the clients still writing.
    var reclaim: Duration?
    /// Each task of the forced run with clients: its time and where it went (ms by `held`,
    /// `writer_wait`, `paused`, `core_wait`).
    var finishTasks: [(summary: String, ms: Double, spent: [String: Double])] = []
    /// Where FinishDeferred's time went (daemon log): holding the writer, waiting for it
    /// behind the clients, the cost delay, and the rest (work outside the lock), in ms.
    var finishTimeSpent: [String: Double]?
    /// The share of one core a hog process kept busy (`--busy-core`), if any.
    var busyCore: Int?
    /// Verify before swap, per rewritten table (part of its rewrite task's time).
    var verifyTimes: [(table: String, ms: Double)] = []
    /// The longest write-lock hold of each finishing step while the clients wrote (daemon log).
    var lockHolds: [(step: String, ms: Double)] = []
    /// The longest a client arriving at the worst moment would have waited behind each step.
    var clientWaits: [(step: String, ms: Double)] = []
    /// The deferred run's batches: all, begun as idle batches, and idle batches that gave way
    /// to a client (from the daemon's "deferred work run ended" line).
    var finishBatches: UpgradeBenchmark.BatchCounts?
    var finishDefault: Duration?
    var backup: Duration?
    var backupPendingFirst: Bool?
    var cli: Duration?
    var idle: UpgradeClients.PhaseFigures?
    var duringFinish: UpgradeClients.PhaseFigures?
    var duringReclaim: UpgradeClients.PhaseFigures?
    var duringFinishDefault: UpgradeClients.PhaseFigures?
    var duringCLI: UpgradeClients.PhaseFigures?
    var rssFinish: Double?
    var rssDefault: Double?
    var verification: UpgradeVerification?
    var backupCheck: UpgradeVerification.Backup?
    var distinctKeys = 1000
    /// The runs with nobody writing.
    var idleRuns: UpgradeIdleFigures?

    static func ms(_ d: Duration?) -> Any { d.map { ($0.milliseconds * 10).rounded() / 10 } ?? NSNull() }
    static func ms(_ microseconds: Double) -> Double { (microseconds / 10).rounded() / 100 }

    var rssPeak: Double? { [rssFinish, rssDefault].compactMap { $0 }.max() }
    var ratio: Double? {
        guard let finish, let cli, cli > .zero else { return nil }
        return finish.seconds / cli.seconds
    }

    var json: String {
        var object: [String: Any] = [
            "scenario": "upgrade", "machine": MachineDescription.current.jsonObject, "rows": rows, "clients": clients,
            "interval_ms": interval, "store_mb": (storeMB * 10).rounded() / 10, "load_start": loadStart, "load_end": loadEnd,
            "batch_budget": batchBudget, "forced_pause_between_batches": pause, "idle_batch_budget": idleBatchBudget,
            "ready_deferred_ms": Self.ms(readyDeferred), "ready_default_ms": Self.ms(readyDefault), "ready_sync_ms": Self.ms(readySync),
            "finish_ms": Self.ms(finish), "reclaim_ms": Self.ms(reclaim), "finish_default_ms": Self.ms(finishDefault), "backup_ms": Self.ms(backup),
            "sqlite_cli_ms": Self.ms(cli), "finish_vs_cli_ratio": ratio.map { ($0 * 100).rounded() / 100 } ?? NSNull(),
            "rss_peak_mb": rssPeak.map { ($0 * 10).rounded() / 10 } ?? NSNull(),
            "rss_finish_mb": rssFinish.map { ($0 * 10).rounded() / 10 } ?? NSNull(),
            "rss_default_mb": rssDefault.map { ($0 * 10).rounded() / 10 } ?? NSNull(),
            "backup_task_first": backupPendingFirst ?? NSNull(),
            "finish_tasks": finishTasks.map { task -> [String: Any] in
                ["task": task.summary, "ms": (task.ms * 10).rounded() / 10, "spent_ms": task.spent]
            },
            "finish_time_spent_ms": finishTimeSpent ?? NSNull(),
            "busy_core_percent": busyCore ?? NSNull(),
            "verify_ms": (verifyTimes.reduce(0) { $0 + $1.ms } * 10).rounded() / 10,
            "max_lock_hold_ms": Dictionary(lockHolds.map { ($0.step, $0.ms) }, uniquingKeysWith: max),
            "max_client_wait_ms": Dictionary(clientWaits.map { ($0.step, $0.ms) }, uniquingKeysWith: max),
            "finish_batches": finishBatches.map { ["batches": $0.batches, "idle": $0.idle, "yielded": $0.yielded] } ?? NSNull(),
        ]
        for (name, figures) in [("idle", idle), ("during_finish", duringFinish), ("during_reclaim", duringReclaim),
                                ("during_finish_default", duringFinishDefault), ("during_cli", duringCLI)] {
            guard let figures else { continue }
            object["client_p50_\(name)_ms"] = Self.ms(figures.latency.p50Microseconds)
            object["client_p99_\(name)_ms"] = Self.ms(figures.latency.p99Microseconds)
            object["client_max_\(name)_ms"] = Self.ms(figures.maxMicroseconds)
            object["client_requests_\(name)"] = Int(figures.latency.count)
            if name != "idle" { object["client_errors_\(name)"] = figures.errors }
            if !figures.firstErrors.isEmpty { object["client_first_errors_\(name)"] = figures.firstErrors }
        }
        if let verification {
            object["rows_after"] = verification.rowsAfter
            object["acknowledged_writes"] = verification.acknowledgedWrites
            object["acknowledged_writes_missing"] = verification.acknowledgedMissing
            object["integrity_check"] = verification.integrity
            object["schema_equals_fresh"] = verification.schemaEqualsFresh
            object["pending_after"] = verification.pendingAfter
            object["verified"] = verification.passed && verification.rowsAfter == rows
        }
        if let backupCheck {
            object["backup_found"] = backupCheck.found
            object["backup_mb"] = (backupCheck.megabytes * 10).rounded() / 10
            object["backup_rows"] = backupCheck.rows
            object["backup_quick_check"] = backupCheck.quickCheck
        }
        object["distinct_keys"] = distinctKeys
        if let idleRuns { object.merge(idleRuns.json(rows: rows)) { $1 } }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    var text: String {
        func check(_ ok: Bool) -> String { ok ? "ok" : "MISSED" }
        func time(_ d: Duration?) -> String { d.map { String(format: "%10.1f ms", $0.milliseconds) } ?? "         – " }
        func row(_ label: String, _ f: UpgradeClients.PhaseFigures?) -> String {
            guard let f else { return label.padding(toLength: 30, withPad: " ", startingAt: 0) + "  –" }
            return label.padding(toLength: 30, withPad: " ", startingAt: 0)
                + String(format: "%9.2f %9.2f %9.2f %9d %7d", f.latency.p50Microseconds / 1000, f.latency.p99Microseconds / 1000,
                         f.maxMicroseconds / 1000, f.latency.count, f.errors)
        }
        var lines = [
            "strata-bench upgrade",
            "rows=\(rows) distinct_keys=\(distinctKeys) store=\(String(format: "%.0f", storeMB)) MB clients=\(clients) interval=\(interval) ms batch_budget=\(batchBudget) forced_pause=\(pause) idle_batch_budget=\(idleBatchBudget) load=\(loadStart)→\(loadEnd)",
            "machine: \(MachineDescription.current.summary)\(busyCore.map { "; one core \($0) % busy (--busy-core)" } ?? "")",
            "",
            "exec → READY=1, deferral, no backup     \(time(readyDeferred))   target ≤ 100 ms: \(readyDeferred.map { check($0.milliseconds <= 100) } ?? "–")",
            "exec → READY=1, shipped defaults        \(time(readyDefault))   target ≤ 100 ms: \(readyDefault.map { check($0.milliseconds <= 100) } ?? "–")\(backupPendingFirst == true ? " (backup pending as the first task)" : "")",
            "exec → READY=1, no deferral             \(time(readySync))",
            "FinishDeferred, clients writing         \(time(finish))",
            "sqlite3 CLI under the daemon            \(time(cli))   finish / CLI \(ratio.map { String(format: "%.2f", $0) } ?? "–") (target ≤ 1.3: \(ratio.map { check($0 <= 1.3) } ?? "–"))",
            "then FinishDeferred(reclaim): vacuum    \(time(reclaim))   (left to the scheduler's idle turns by default; the CLI gives no space back)",
            "FinishDeferred, shipped defaults        \(time(finishDefault))   of which the online backup \(time(backup))",
        ]
        if !finishTasks.isEmpty {
            lines.append("    task time (ms): all = holding the writer + waiting for it + cost delay + the rest; of all, waiting for a core")
        }
        for task in finishTasks {
            func ms(_ key: String) -> String { task.spent[key].map { String(format: "%6.0f", $0) } ?? "     –" }
            let rest = task.ms - ["held", "writer_wait", "paused"].reduce(0) { $0 + (task.spent[$1] ?? 0) }
            lines.append("    \(String(format: "%7.0f", task.ms)) = \(ms("held")) + \(ms("writer_wait")) + \(ms("paused")) + \(String(format: "%6.0f", max(0, rest))); core \(ms("core_wait"))  \(task.summary.prefix(60))")
        }
        if let spent = finishTimeSpent {
            func ms(_ key: String) -> String { spent[key].map { String(format: "%.0f ms", $0) } ?? "–" }
            lines.append("    where FinishDeferred's time went: holding the writer \(ms("held")), waiting for it \(ms("writer_wait")), "
                         + "cost delay \(ms("paused")), outside the lock \(ms("other")); the work's thread waited for a core \(ms("core_wait"))")
        }
        for verify in verifyTimes {
            let share = finish.map { verify.ms / $0.milliseconds * 100 } ?? 0
            lines.append("    \(String(format: "%9.1f ms", verify.ms))  of which verify before swap of \(verify.table) (\(String(format: "%.1f", share)) % of FinishDeferred; target ≤ 15 %: \(check(share <= 15)))")
        }
        if let counts = finishBatches {
            lines.append("    batches: \(counts.batches), of which idle \(counts.idle) (gave way to a client: \(counts.yielded))")
        }
        if !lockHolds.isEmpty {
            lines.append("    longest write-lock hold per step: " + lockHolds.map { String(format: "%@ %.1f ms", $0.step, $0.ms) }.joined(separator: ", "))
            lines.append("    longest possible client wait per step: " + clientWaits.map { String(format: "%@ %.1f ms", $0.step, $0.ms) }.joined(separator: ", "))
        }
        lines += [
            "",
            "client update latency (ms)          p50       p99       max  requests  errors",
            row("idle", idle),
            row("during FinishDeferred", duringFinish) + (duringFinish.map { "   max ≤ 50: \(check($0.maxMicroseconds <= 50_000)), p99 ≤ 20: \(check($0.latency.p99Microseconds <= 20_000))" } ?? ""),
            row("during the reclaim (vacuum)", duringReclaim),
            row("during FinishDeferred, defaults", duringFinishDefault),
            row("during the sqlite3 CLI", duringCLI),
            "",
            "stratad peak RSS: \(rssPeak.map { String(format: "%.1f MB", $0) } ?? "–") (target ≤ 200 MB)",
        ]
        if let v = verification {
            lines.append("verification: rows \(v.rowsAfter)/\(rows), acknowledged writes missing \(v.acknowledgedMissing)/\(v.acknowledgedWrites), integrity_check \(v.integrity), schema = fresh \(v.schemaEqualsFresh), pending \(v.pendingAfter): \(v.passed && v.rowsAfter == rows ? "ok" : "FAILED")")
        }
        if let b = backupCheck {
            lines.append("backup: \(b.found ? String(format: "%.0f MB, %d rows, quick_check %@", b.megabytes, b.rows, b.quickCheck) : "not found"): \(b.passed && b.rows == rows ? "ok" : "FAILED")")
        }
        if let idleRuns { lines += idleRuns.text(rows: rows) }
        return lines.joined(separator: "\n")
    }
}
