import Foundation
import Testing

/// `strata-bench scheduler` runs end to end (small, debug build) and prints its JSON figures.
@Suite("strata-bench scheduler", .timeLimit(.minutes(5)))
struct SchedulerBenchTests {
    @Test func schedulerPrintsJSONFigures() throws {
        let result = try BuiltBinary.run("strata-bench", [
            "scheduler", "--rows", "3000", "--clients", "2", "--interval-ms", "10", "--load-s", "0.5", "--quiet-s", "2",
            "--idle-after", "500ms", "--json",
        ])
        #expect(result.status == 0, "\(result)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result)")
        #expect(json["scenario"] as? String == "scheduler")
        for key in ["client_p99_ratio", "pause_p99_ms", "finish_s", "client_p99_ms", "baseline_p99_ms"] {
            #expect(json[key] is Double || json[key] is Int, "\(key) missing in \(result.stdout)")
        }
        #expect((json["finish_s"] as? Double ?? 0) > 0)
        #expect(json["client_errors"] as? Int == 0)
        #expect((json["rows_processed"] as? Int ?? 0) >= 3000)
    }
}
