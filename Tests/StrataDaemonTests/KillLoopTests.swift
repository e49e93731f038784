import Foundation
import Testing

/// kill -9 of stratad every 0.2–0.6 s after READY while it finishes deferred work (an online
/// backup, a verified table rewrite with two index builds, an index drop, a table drop, a
/// vacuum) and four clients write: every round after the first moves the ledger, finishing
/// completes, nothing acknowledged is lost (scripts/kill-loop.py, at a small size; the figures
/// at 500,000 rows are in docs/Deferral.md).
@Suite(.serialized, .timeLimit(.minutes(15)))
struct KillLoopTests {
    @Test func everyRoundMakesProgressAndFinishingCompletes() throws {
        let directory = URL(fileURLWithPath: "/tmp/kl-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = Paths.packageRoot.appendingPathComponent("scripts/kill-loop.py").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // A small batch budget and a long pause spread finishing over many lives.
        process.arguments = ["python3", script, "--rows", "20000", "--batch-budget", "2ms", "--pause", "20ms",
                             "--max-rounds", "400", "--stratad", Paths.stratad, "--directory", directory.path, "--json"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "no JSON from kill-loop.py")
        let rounds = try #require(report["rounds"] as? [[String: Any]])
        #expect(rounds.count >= 5, "finishing took only \(rounds.count) lives: the loop did not interrupt it")
        #expect(report["finished"] as? Bool == true)
        #expect((report["rounds_without_progress"] as? [Int]) == [], "rounds whose ledger did not move: \(report["rounds_without_progress"] ?? "?")")
        // The backup, the rewrite and the drops were each interrupted at least once.
        let interrupted = Set(rounds.compactMap { ($0["ledger"] as? [String: Any])?["task"] as? String })
        #expect(interrupted.isSuperset(of: ["backup", "rewriteTable"]), "\(interrupted)")
        #expect(report["rows_lost"] as? Int == 0 && report["deleted_rows_back"] as? Int == 0 && report["wrong_values"] as? Int == 0)
        #expect((report["acknowledged_objects"] as? Int ?? 0) > 0)
        #expect((report["integrity"] as? [String: String]) == ["aircraft": "ok"])
        #expect(report["schema_fresh"] as? Bool == true)
        let backup = try #require(report["backup"] as? [String: Any])
        #expect(backup["integrity"] as? String == "ok" && backup["seeded_rows"] as? Int == 20_000)
        #expect(report["ok"] as? Bool == true && process.terminationStatus == 0)
    }
}
