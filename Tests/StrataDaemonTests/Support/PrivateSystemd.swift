import Foundation
import Testing

/// Runs a script of Tests/EndToEndTests/systemd inside a private systemd booted by the
/// project's own harness, `scripts/with-systemd` (PID 1 of a new PID + mount namespace).
enum PrivateSystemd {
    enum Outcome {
        /// The script's exit status and output.
        case ran(status: Int32, output: String)
        /// with-systemd or the script exited 77: this machine cannot run it (why).
        case cannotRun(String)
    }

    /// The harness, in the repository: no test reaches outside the package.
    static var tool: String { Paths.packageRoot.appendingPathComponent("scripts/with-systemd").path }

    /// Where skipped systemd tests are listed, one `TEST<TAB>REASON` line each, for `make test`
    /// to count (scripts/report-skipped.sh). `STRATA_SKIP_LOG` overrides it.
    static var skipLog: String {
        ProcessInfo.processInfo.environment["STRATA_SKIP_LOG"]
            ?? Paths.packageRoot.appendingPathComponent(".build/skipped-systemd-tests.txt").path
    }

    /// Runs `script` (a file name in Tests/EndToEndTests/systemd) as `SCRIPT ROOT SECOND`, where
    /// SECOND is `file` if given, else the directory of stratad and stratactl. with-systemd gives
    /// the private manager its own empty /tmp and /var/tmp: a checkout, binaries or `file` under
    /// them are copied to /var/cache first. The wait happens on a thread of its own, off Swift's
    /// cooperative pool.
    static func run(_ script: String, with file: URL? = nil) async throws -> Outcome {
        guard FileManager.default.isExecutableFile(atPath: tool) else { return .cannotRun("\(tool) is missing or not executable") }
        var root = Paths.packageRoot
        var second = file ?? Paths.binaries
        var staging: URL?
        if ["/tmp/", "/var/tmp/"].contains(where: { root.path.hasPrefix($0) || second.path.hasPrefix($0) }) {
            let stage = URL(fileURLWithPath: "/var/cache/strata-systemd-test-\(UUID().uuidString.prefix(8))")
            let fm = FileManager.default
            try fm.createDirectory(at: stage.appendingPathComponent("Tests/EndToEndTests"), withIntermediateDirectories: true)
            for item in ["config", "systemd", "Tests/EndToEndTests/systemd"] {
                try fm.copyItem(at: root.appendingPathComponent(item), to: stage.appendingPathComponent(item))
            }
            if let file {
                second = stage.appendingPathComponent(file.lastPathComponent)
                try fm.copyItem(at: file, to: second)
            } else {
                second = stage.appendingPathComponent("bin")
                try fm.createDirectory(at: second, withIntermediateDirectories: true)
                for binary in ["stratad", "stratactl"] {
                    try fm.copyItem(at: Paths.binaries.appendingPathComponent(binary), to: second.appendingPathComponent(binary))
                }
            }
            (root, staging) = (stage, stage)
        }
        defer { if let staging { try? FileManager.default.removeItem(at: staging) } }
        let path = root.appendingPathComponent("Tests/EndToEndTests/systemd/\(script)").path
        let result = try await runCommandOffThread(tool, ["--", path, root.path, second.path])
        if result.status == 77 { return .cannotRun(result.output) }
        return .ran(status: result.status, output: result.output)
    }

    /// The first line of a failed script's report, then its whole output: swift-testing prints
    /// an expectation's comment under the failure, and `make test`'s summary (and so the tail of
    /// a CI log) keeps only that first line, so it names the check that failed (or says that
    /// none did and where the script stopped) and the last one that passed.
    static func failureReport(_ output: String) -> String {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: true)
        let failed = lines.first { $0.hasPrefix("CHECK failed") }.map(String.init)
            ?? "no CHECK failed line: the script stopped without one (last line: \(lines.last.map(String.init) ?? "none"))"
        let lastPassed = lines.last { $0.hasPrefix("CHECK ok") }.map(String.init) ?? "none"
        return "\(failed) | last passed: \(lastPassed)\n\(output)"
    }

    /// Prints SKIPPED with the reason and records a known issue: never a silent pass. When this
    /// machine cannot boot a private systemd (`machineCannotRun`), the test is also listed in
    /// ``skipLog`` for `make test`'s count; a test deferred to a later run (the package test
    /// outside `make test`) is not.
    static func reportSkipped(_ test: String, _ reason: String, machineCannotRun: Bool = true) {
        guard machineCannotRun else {
            print("SKIPPED \(test): \(reason)")
            withKnownIssue("\(test) skipped: \(reason)") { Issue.record("SKIPPED: \(reason)") }
            return
        }
        print("SKIPPED \(test): cannot run under a private systemd here:\n\(reason)")
        let firstLine = reason.split(separator: "\n").first { $0.contains("cannot run:") } ?? reason.split(separator: "\n").first ?? "unknown reason"
        appendSkip("\(test)\t\(firstLine)\n")
        withKnownIssue("\(test) skipped: no private systemd (or journald) on this machine") { Issue.record("SKIPPED: \(reason)") }
    }

    private static func appendSkip(_ line: String) {
        let path = skipLog
        try? FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = line.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) }
    }
}
