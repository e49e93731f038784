import Foundation
import GRDB
import Strata

/// The upgrade benchmark's runs with **nobody writing** (`--runs idle,cli_idle,manual`): the
/// daemon finishing on request, the sqlite3 CLI making the same change, and the same change
/// rewritten by hand in one transaction (the floor) — each on its own copy of the seed, with
/// the bytes it wrote (`/proc/PID/io` `write_bytes`, or the children's `ru_oublock`) and the
/// store's file size after it. The daemon's run is `FinishDeferred` (the change: what the CLI
/// does, which gives no space back either) and then `FinishDeferred(reclaim)` (the vacuum it
/// leaves to the scheduler's idle turns), timed apart.
struct UpgradeIdleFigures {
    var finish: Duration?
    var finishTasks: [(summary: String, ms: Double, rows: Int64)] = []
    var finishWrittenMB: Double?
    /// The store's file (and WAL) after the change, before the vacuum.
    var changeFileMB: Double?
    var reclaim: Duration?
    var reclaimWrittenMB: Double?
    /// The longest write-lock hold of each step (daemon log).
    var finishLockHolds: [(step: String, ms: Double)] = []
    /// The longest a client arriving at the worst moment would have waited behind each step.
    var finishClientWaits: [(step: String, ms: Double)] = []
    var finishFileMB: Double?
    var cli: Duration?
    var cliWrittenMB: Double?
    var cliFileMB: Double?
    var manual: Duration?
    var manualWrittenMB: Double?
    var manualFileMB: Double?

    /// Rows the finisher wrote or deleted (its tasks' `strata.rows`) per row of the table.
    func rowWritesPerRow(_ rows: Int) -> Double? {
        finishTasks.isEmpty ? nil : Double(finishTasks.reduce(0) { $0 + $1.rows }) / Double(rows)
    }

    var ratio: Double? {
        guard let finish, let cli, cli > .zero else { return nil }
        return finish.seconds / cli.seconds
    }

    /// The change and the vacuum after it, against the CLI (which gives no space back).
    var ratioWithReclaim: Double? {
        guard let finish, let reclaim, let cli, cli > .zero else { return nil }
        return (finish + reclaim).seconds / cli.seconds
    }

    func json(rows: Int) -> [String: Any] {
        func r(_ x: Double?) -> Any { x.map { ($0 * 100).rounded() / 100 } ?? NSNull() }
        return [
            "finish_idle_ms": UpgradeResults.ms(finish), "sqlite_cli_idle_ms": UpgradeResults.ms(cli), "manual_rewrite_ms": UpgradeResults.ms(manual),
            "finish_idle_vs_cli_ratio": r(ratio), "row_writes_per_row": r(rowWritesPerRow(rows)),
            "reclaim_idle_ms": UpgradeResults.ms(reclaim), "finish_idle_with_reclaim_vs_cli_ratio": r(ratioWithReclaim),
            "reclaim_idle_written_mb": r(reclaimWrittenMB), "finish_idle_change_file_mb": r(changeFileMB),
            "finish_idle_written_mb": r(finishWrittenMB), "sqlite_cli_idle_written_mb": r(cliWrittenMB), "manual_rewrite_written_mb": r(manualWrittenMB),
            "finish_idle_file_mb": r(finishFileMB), "sqlite_cli_idle_file_mb": r(cliFileMB), "manual_rewrite_file_mb": r(manualFileMB),
            "finish_idle_max_lock_hold_ms": Dictionary(finishLockHolds.map { ($0.step, $0.ms) }, uniquingKeysWith: max),
            "finish_idle_max_client_wait_ms": Dictionary(finishClientWaits.map { ($0.step, $0.ms) }, uniquingKeysWith: max),
            "finish_idle_tasks": finishTasks.map { ["task": $0.summary, "ms": ($0.ms * 10).rounded() / 10, "rows": $0.rows] },
        ]
    }

    func text(rows: Int) -> [String] {
        func time(_ d: Duration?) -> String { d.map { String(format: "%10.1f ms", $0.milliseconds) } ?? "         – " }
        func mb(_ x: Double?) -> String { x.map { String(format: "%8.1f MB", $0) } ?? "       – " }
        var lines = [
            "",
            "nobody writing                          time          written     file after",
            "FinishDeferred (idle batches)        \(time(finish))  \(mb(finishWrittenMB))  \(mb(changeFileMB))   finish / CLI \(ratio.map { String(format: "%.2f", $0) } ?? "–") (target ≤ 1.0)",
            "then FinishDeferred(reclaim): vacuum \(time(reclaim))  \(mb(reclaimWrittenMB))  \(mb(finishFileMB))   both / CLI \(ratioWithReclaim.map { String(format: "%.2f", $0) } ?? "–") (the CLI gives no space back)",
            "sqlite3 CLI (DROP COLUMN ×3 + INDEX) \(time(cli))  \(mb(cliWrittenMB))  \(mb(cliFileMB))",
            "by hand, one transaction (floor)     \(time(manual))  \(mb(manualWrittenMB))  \(mb(manualFileMB))",
            "row writes per row (finisher)        \(rowWritesPerRow(rows).map { String(format: "%.2f", $0) } ?? "–") (target ≤ 2.5)",
        ]
        for task in finishTasks { lines.append("    \(String(format: "%9.1f ms %9d rows", task.ms, task.rows))  \(task.summary)") }
        if !finishLockHolds.isEmpty {
            lines.append("    longest write-lock hold per step: " + finishLockHolds.map { String(format: "%@ %.1f ms", $0.step, $0.ms) }.joined(separator: ", "))
            lines.append("    longest possible client wait per step: " + finishClientWaits.map { String(format: "%@ %.1f ms", $0.step, $0.ms) }.joined(separator: ", "))
        }
        return lines
    }

    /// The daemon log's finished tasks with their rows.
    static func tasks(_ log: String) -> [(summary: String, ms: Double, rows: Int64)] {
        log.split(separator: "\n").compactMap { line in
            guard let start = line.range(of: "finished deferred task #") else { return nil }
            let rest = line[start.upperBound...]
            func number(_ key: String) -> Double? { UpgradeBenchmark.logNumber(key, in: rest).flatMap { Double($0) } }
            guard let colon = rest.range(of: ": ") else { return nil }
            let summary = rest[colon.upperBound...].components(separatedBy: " strata.").first ?? ""
            return (String(summary.prefix(80)), number("ms") ?? 0, Int64(number("rows") ?? 0))
        }
    }

    /// `write_bytes` of a live process, in MB.
    static func writtenMB(pid: Int32) -> Double? {
        guard let io = try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8),
              let line = io.split(separator: "\n").first(where: { $0.hasPrefix("write_bytes:") }),
              let bytes = Double(line.split(separator: " ").last ?? "") else { return nil }
        return bytes / 1_048_576
    }

    /// Blocks written by waited-for children so far (512-byte units), in MB.
    static func childrenWrittenMB() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage)
        return Double(usage.ru_oublock) * 512 / 1_048_576
    }

    /// The store's size with its WAL, in MB.
    static func fileMB(_ store: URL) -> Double {
        ["", "-wal"].reduce(0.0) { total, suffix in
            total + Double((try? FileManager.default.attributesOfItem(atPath: store.path + suffix)[.size] as? NSNumber)?.intValue ?? 0) / 1_048_576
        }
    }

    /// The one-transaction rewrite by hand: the table as a fresh Bench 2 store creates it,
    /// filled from the old one, swapped in, then its indexes.
    static func manualRewriteSQL(in directory: URL) throws -> String {
        let fresh = directory.appending(path: "fresh-bench2.sqlite")
        try? FileManager.default.removeItem(at: fresh)
        let store = try PersistentStore.open(at: fresh, model: DeferralBenchmark.v2)
        defer { try? store.close(); try? FileManager.default.removeItem(at: fresh) }
        let (create, indexes, columns): (String, [String], [String]) = try store.database.read { db in
            (try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'Item'") ?? "",
             try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Item' AND sql IS NOT NULL"),
             try db.columns(in: "Item").map(\.name))
        }
        let names = columns.map { "\"\($0)\"" }.joined(separator: ", ")
        let newTable = create.replacingOccurrences(of: "CREATE TABLE \"Item\"", with: "CREATE TABLE \"Item_new\"")
        return """
            BEGIN;
            \(newTable);
            INSERT INTO "Item_new" (\(names)) SELECT \(names) FROM "Item";
            DROP TABLE "Item";
            ALTER TABLE "Item_new" RENAME TO "Item";
            \(indexes.map { $0 + ";" }.joined(separator: "\n"))
            COMMIT;
            """
    }
}
