import Foundation
import Testing

/// The project's private-systemd harness (scripts/with-systemd) and `make test`'s count of
/// what it skipped (scripts/report-skipped.sh): a machine that cannot boot a private systemd
/// gets exit 77 and one line saying why, and the summary counts the skipped tests by reason.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct WithSystemdHarnessTests {
    static var reportScript: String { Paths.packageRoot.appendingPathComponent("scripts/report-skipped.sh").path }

    @Test func withoutRootItExits77AndSaysWhy() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
            print("SKIPPED withoutRootItExits77AndSaysWhy: needs root and setpriv to run the harness as another user")
            return
        }
        let result = try runCommand("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", PrivateSystemd.tool, "--", "/bin/true"])
        #expect(result.status == 77, "\(result.output)")
        #expect(result.output.contains("with-systemd: cannot run: needs root (running as uid 65534)"), "\(result.output)")
    }

    @Test func withoutACommandItIsAUsageError() throws {
        let result = try runCommand(PrivateSystemd.tool, ["--"])
        #expect(result.status == 2, "\(result.output)")
        #expect(result.output.contains("usage: scripts/with-systemd"), "\(result.output)")
    }

    @Test func theSummaryCountsSkippedTestsByReason() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("skips-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("skipped.txt")

        let none = try runCommand(Self.reportScript, [log.path])
        #expect(none.status == 0 && none.output == "systemd tests: 0 skipped\n", "\(none.output)")

        try """
            unitsUnderRealSystemd\twith-systemd: cannot run: needs root (running as uid 1000)
            structuredEntriesUnderSystemd\twith-systemd: cannot run: needs root (running as uid 1000)
            debianPackageUnderPrivateSystemd\tnot run: the rest of the suite failed

            """.write(to: log, atomically: true, encoding: .utf8)
        let some = try runCommand(Self.reportScript, [log.path])
        #expect(some.status == 0)
        #expect(some.output.split(separator: "\n").sorted() == [
            "SKIPPED 1 systemd tests: not run: the rest of the suite failed (debianPackageUnderPrivateSystemd)",
            "SKIPPED 2 systemd tests: with-systemd: cannot run: needs root (running as uid 1000) (structuredEntriesUnderSystemd,unitsUnderRealSystemd)",
        ], "\(some.output)")
    }
}
