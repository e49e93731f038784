import Foundation
import Testing

/// Runs a script of Tests/EndToEndTests/systemd inside a private systemd
/// (`../shared/tools/with-systemd`), as `SCRIPT ROOT BINARIES`.
enum PrivateSystemd {
    enum Outcome {
        /// The script's exit status and output.
        case ran(status: Int32, output: String)
        /// with-systemd or the script exited 77: this machine cannot run it (why).
        case cannotRun(String)
    }

    static var tool: String {
        Paths.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/tools/with-systemd").path
    }

    /// Runs `script` (a file name in Tests/EndToEndTests/systemd). with-systemd gives the
    /// private manager its own empty /tmp and /var/tmp: a checkout or binaries under them are
    /// copied to /var/cache first. The wait happens on a thread of its own, off Swift's
    /// cooperative pool.
    static func run(_ script: String) async throws -> Outcome {
        guard FileManager.default.isExecutableFile(atPath: tool) else { return .cannotRun("\(tool) not found") }
        var root = Paths.packageRoot
        var binaries = Paths.binaries
        var staging: URL?
        if ["/tmp/", "/var/tmp/"].contains(where: { root.path.hasPrefix($0) || binaries.path.hasPrefix($0) }) {
            let stage = URL(fileURLWithPath: "/var/cache/strata-systemd-test-\(UUID().uuidString.prefix(8))")
            let fm = FileManager.default
            try fm.createDirectory(at: stage.appendingPathComponent("bin"), withIntermediateDirectories: true)
            try fm.createDirectory(at: stage.appendingPathComponent("Tests/EndToEndTests"), withIntermediateDirectories: true)
            for item in ["config", "systemd", "Tests/EndToEndTests/systemd"] {
                try fm.copyItem(at: root.appendingPathComponent(item), to: stage.appendingPathComponent(item))
            }
            for binary in ["stratad", "stratactl"] {
                try fm.copyItem(at: binaries.appendingPathComponent(binary), to: stage.appendingPathComponent("bin/\(binary)"))
            }
            (root, binaries, staging) = (stage, stage.appendingPathComponent("bin"), stage)
        }
        defer { if let staging { try? FileManager.default.removeItem(at: staging) } }
        let path = root.appendingPathComponent("Tests/EndToEndTests/systemd/\(script)").path
        let arguments = ["--", path, root.path, binaries.path]
        let result = try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try runCommand(tool, arguments) }) }
        }
        if result.status == 77 { return .cannotRun(result.output) }
        return .ran(status: result.status, output: result.output)
    }

    /// Prints SKIPPED with the reason and records a known issue: never a silent pass.
    static func reportSkipped(_ test: String, _ reason: String) {
        print("SKIPPED \(test): cannot run under a private systemd here:\n\(reason)")
        withKnownIssue("\(test) skipped: no private systemd (or journald) on this machine") { Issue.record("SKIPPED: \(reason)") }
    }
}
