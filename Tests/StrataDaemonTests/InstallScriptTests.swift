import Foundation
import Testing
@testable import StrataDaemon

/// `make install` / `make uninstall` (scripts/install.sh) with PREFIX and DESTDIR, and the
/// packaged configuration (packaging/stratad.yaml) against the daemon's defaults.
@Suite struct InstallScriptTests {
    // MARK: - Helpers

    /// A DESTDIR with fake man pages (scripts/make-man.sh makes the real ones; the install
    /// only copies them).
    struct Install {
        let directory: URL
        var destdir: URL { directory.appendingPathComponent("root") }
        var manpages: URL { directory.appendingPathComponent("man") }

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-install-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: manpages, withIntermediateDirectories: true)
            try ".Dd test\n".write(to: manpages.appendingPathComponent("stratad.8"), atomically: true, encoding: .utf8)
            try ".Dd test\n".write(to: manpages.appendingPathComponent("stratactl.1"), atomically: true, encoding: .utf8)
        }

        /// Runs scripts/install.sh ACTION (off the cooperative pool).
        func run(_ action: String, prefix: String, extra: [String: String] = [:]) async throws -> (status: Int32, output: String) {
            let environment = ["PREFIX": prefix, "DESTDIR": destdir.path, "BINARIES": Paths.binaries.path, "MANPAGES": manpages.path]
            return try await runCommandOffThread(Paths.packageRoot.appendingPathComponent("scripts/install.sh").path, [action],
                                            environment: environment.merging(extra) { $1 })
        }

        func installedFiles(prefix: String) async throws -> [String] {
            try await run("files", prefix: prefix).output.split(separator: "\n").map(String.init)
        }

        func contents(_ path: String) throws -> String {
            try String(contentsOf: destdir.appendingPathComponent(path), encoding: .utf8)
        }

        func exists(_ path: String) -> Bool {
            FileManager.default.fileExists(atPath: destdir.appendingPathComponent(path).path)
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    // MARK: - Tests

    @Test func installHonoursPrefixAndDestdir() async throws {
        let install = try Install()
        defer { install.remove() }
        let result = try await install.run("install", prefix: "/opt/strata")
        #expect(result.status == 0, "\(result.output)")
        let files = try await install.installedFiles(prefix: "/opt/strata")
        #expect(files.contains("/opt/strata/bin/stratad") && files.contains("/opt/strata/lib/systemd/system/stratad.service"))
        #expect(files.contains("/etc/strata/stratad.yaml"))
        for file in files { #expect(install.exists(file), "not installed: \(file)") }
        #expect(!install.exists("/opt/strata/bin/strata-bench"))

        let service = try install.contents("/opt/strata/lib/systemd/system/stratad.service")
        #expect(service.contains("\nExecStart=/opt/strata/bin/stratad --config /etc/strata/stratad.yaml\n"))
        #expect(service.contains("file:///opt/strata/share/doc/strata/Daemon.md"))
        #expect(!service.contains("/usr/local/"))
        #expect(try install.contents("/opt/strata/lib/systemd/system/strata-maintenance.service")
            .contains("\nExecStart=/opt/strata/bin/stratactl finish-deferred"))
        #expect(try install.contents("/opt/strata/lib/tmpfiles.d/strata.conf").contains("d /var/lib/strata 0750 strata strata -"))
        #expect(try install.contents("/opt/strata/lib/sysusers.d/strata.conf").contains("u strata -"))
        #expect(try install.contents("/etc/strata/stratad.yaml").contains("model: /opt/strata/share/strata/models/Aircraft"))
        #expect(try install.contents("/opt/strata/share/man/man5/stratad.yaml.5").contains("/opt/strata/share/strata/models/Aircraft"))
        // Completions from the binaries' argument parsers.
        #expect(try install.contents("/opt/strata/share/bash-completion/completions/stratactl").contains("finish-deferred"))
        #expect(try install.contents("/opt/strata/share/zsh/site-functions/_stratactl").contains("#compdef stratactl"))
        #expect(try install.contents("/opt/strata/share/fish/vendor_completions.d/stratad.fish").contains("check-config"))
    }

    @Test func reinstallKeepsTheConfigurationAndUninstallRemovesTheRest() async throws {
        let install = try Install()
        defer { install.remove() }
        #expect(try await install.run("install", prefix: "/usr/local").status == 0)
        let config = install.destdir.appendingPathComponent("etc/strata/stratad.yaml")
        try "# an operator's configuration\nstores: []\n".write(to: config, atomically: true, encoding: .utf8)
        let again = try await install.run("install", prefix: "/usr/local")
        #expect(again.status == 0)
        #expect(again.output.contains("keeping \(config.path)"))
        #expect(try install.contents("/etc/strata/stratad.yaml") == "# an operator's configuration\nstores: []\n")
        #expect(install.exists("/usr/local/share/doc/strata/stratad.yaml.default"))

        let uninstall = try await install.run("uninstall", prefix: "/usr/local")
        #expect(uninstall.status == 0, "\(uninstall.output)")
        #expect(uninstall.output.contains("kept \(config.path)"))
        for file in try await install.installedFiles(prefix: "/usr/local") where file != "/etc/strata/stratad.yaml" {
            #expect(!install.exists(file), "left behind: \(file)")
        }
        #expect(install.exists("/etc/strata/stratad.yaml"))
        #expect(try await install.run("uninstall", prefix: "/usr/local", extra: ["KEEP_CONFIG": "0"]).status == 0)
        #expect(!install.exists("/etc/strata/stratad.yaml"))
    }

    @Test func installRefusesMissingBinaries() async throws {
        let install = try Install()
        defer { install.remove() }
        let result = try await install.run("install", prefix: "/usr/local", extra: ["BINARIES": install.directory.path])
        #expect(result.status == 1)
        #expect(result.output.contains("\(install.directory.path)/stratad is missing: build it first"))
        #expect(!install.exists("/usr/local/bin"))
    }

    /// The packaged /etc/strata/stratad.yaml says every default: it must load to exactly the
    /// daemon's built-in defaults (but for the data socket's strata group).
    @Test func packagedConfigurationHasTheShippedDefaults() throws {
        let text = try String(contentsOf: Paths.packageRoot.appendingPathComponent("packaging/stratad.yaml"), encoding: .utf8)
        #expect(text.contains("    groups: [strata]\n"))
        // The strata group exists where the package is installed, not necessarily here.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-packaged-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("stratad.yaml")
        try text.replacingOccurrences(of: "groups: [strata]", with: "groups: [0]").write(to: file, atomically: true, encoding: .utf8)
        let configuration = try ConfigurationLoader().load(path: file.path)
        let defaults = DaemonConfiguration()
        #expect(configuration.stores.isEmpty)
        #expect(configuration.scheduler == defaults.scheduler)
        #expect(configuration.limits == defaults.limits)
        #expect(configuration.metrics == defaults.metrics)
        #expect(configuration.logLevel == defaults.logLevel)
        #expect(configuration.adminSocket == defaults.adminSocket)
        var data = defaults.dataSocket
        data.groups = [0]
        #expect(configuration.dataSocket == data)
    }
}
