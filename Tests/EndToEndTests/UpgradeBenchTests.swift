import Foundation
import Testing

/// `strata-bench upgrade` runs end to end against the real stratad (small, debug build) and
/// reports every figure, with a passing verification.
@Suite("strata-bench upgrade", .timeLimit(.minutes(5)))
struct UpgradeBenchTests {
    @Test func upgradePrintsEveryFigureAndVerifies() throws {
        let stratad = try BuiltBinary.url("stratad")
        let result = try BuiltBinary.run("strata-bench", [
            "upgrade", "--rows", "2000", "--clients", "2", "--idle-s", "0.3", "--stratad", stratad.path, "--json",
        ])
        #expect(result.status == 0, "\(result)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result)")
        #expect(json["scenario"] as? String == "upgrade")
        for key in ["ready_deferred_ms", "ready_default_ms", "ready_sync_ms", "finish_ms", "finish_default_ms", "backup_ms", "sqlite_cli_ms",
                    "finish_vs_cli_ratio", "rss_peak_mb", "load_start", "load_end"] {
            #expect(json[key] is Double || json[key] is Int, "\(key) missing in \(result.stdout)")
        }
        for phase in ["idle", "during_finish", "during_cli"] {
            for figure in ["p50", "p99", "max"] {
                #expect(json["client_\(figure)_\(phase)_ms"] is Double || json["client_\(figure)_\(phase)_ms"] is Int, "client_\(figure)_\(phase)_ms missing")
            }
        }
        #expect(json["client_errors_during_finish"] as? Int == 0)
        #expect(json["client_errors_during_cli"] is Int)
        // Verification: nothing lost, nothing broken, the fresh schema; the default run's backup.
        #expect(json["rows_after"] as? Int == 2000)
        #expect((json["acknowledged_writes"] as? Int ?? 0) > 0)
        #expect(json["acknowledged_writes_missing"] as? Int == 0)
        #expect(json["integrity_check"] as? String == "ok")
        #expect(json["schema_equals_fresh"] as? Bool == true)
        #expect(json["verified"] as? Bool == true)
        #expect(json["backup_task_first"] as? Bool == true)
        #expect(json["backup_rows"] as? Int == 2000)
        #expect(json["backup_quick_check"] as? String == "ok")
        #expect((json["finish_tasks"] as? [[String: Any]])?.isEmpty == false)
    }

    @Test func unknownRunIsAUsageError() throws {
        let result = try BuiltBinary.run("strata-bench", ["upgrade", "--runs", "deferred,warp"])
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains("unknown run 'warp'"), "\(result)")
    }
}
