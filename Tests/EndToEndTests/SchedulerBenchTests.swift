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

    /// With `--external-clients` each client is a process of its own (`scheduler-client`), and
    /// the scheduler runs with the shipped settings unless told otherwise.
    @Test func externalClientsRunAsProcessesAtTheShippedSettings() throws {
        let result = try BuiltBinary.run("strata-bench", [
            "scheduler", "--rows", "3000", "--clients", "2", "--interval-ms", "10", "--load-s", "0.5", "--quiet-s", "2",
            "--idle-after", "500ms", "--external-clients", "--operation", "update", "--json",
        ])
        #expect(result.status == 0, "\(result)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result)")
        #expect(json["external_clients"] as? Bool == true)
        #expect(json["operation"] as? String == "update")
        #expect(json["client_errors"] as? Int == 0)
        // The client processes' calls reached the figures: 2 clients, one call every 10 ms, 0.5 s a phase.
        #expect((json["client_requests"] as? Int ?? 0) >= 20, "\(result.stdout)")
        #expect((json["baseline_requests"] as? Int ?? 0) >= 20, "\(result.stdout)")
        for key in ["client_max_ms", "client_max_aim_ms", "load_to_stop_p99_ms", "pause_p99_ms", "io_stall_s", "baseline_io_stall_s"] {
            #expect(json[key] is Double || json[key] is Int, "\(key) missing in \(result.stdout)")
        }
        // The block device's longest stall (IOStallWatch): measured where /proc/pressure/io is.
        if FileManager.default.fileExists(atPath: "/proc/pressure/io") {
            #expect((json["io_stall_s"] as? Double ?? -1) >= 0 && (json["baseline_io_stall_s"] as? Double ?? -1) >= 0, "\(result.stdout)")
        }
        // The shipped settings (docs/Scheduler.md): 5 ms batches, a 2 ms cost delay, 250 ms idle batches.
        #expect(json["batch_ms"] as? Double == 5)
        #expect(json["pause_ms"] as? Double == 2)
        #expect(json["idle_batch_ms"] as? Double == 250)
    }
}
