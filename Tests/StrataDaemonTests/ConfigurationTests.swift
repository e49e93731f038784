import Foundation
import Testing
@testable import StrataDaemon
import StrataVarlink

/// A bad configuration is refused with the file, the key and the reason.
struct ConfigurationTests {
    static let model = Paths.aircraftModel

    func parse(_ text: String) throws(ConfigurationError) -> DaemonConfiguration {
        try ConfigurationLoader().parse(text, file: "test.yaml")
    }

    @Test func theDefaultConfigurationLoads() throws {
        let configuration = try ConfigurationLoader().load(path: Paths.packageRoot.appendingPathComponent("config/stratad.yaml").path)
        #expect(configuration.stores.map(\.name) == ["aircraft"])
        #expect(configuration.adminSocket.path == "./var/run/admin.sock")
        #expect(configuration.limits.maxMessageSize == 1 << 20)
    }

    @Test(arguments: [
        ("stores: [\n", ConfigurationError.Kind.syntax, ""),
        ("", .missingKey, "stores"),
        ("storez: []", .unknownKey, "storez"),
        ("stores: {}", .wrongType, "stores"),
        ("stores:\n  - name: a\n    path: a.sqlite\n", .missingKey, "stores[0].model"),
        ("stores:\n  - name: a b\n    path: a.sqlite\n    model: \(model)\n", .invalidValue, "stores[0].name"),
        ("stores:\n  - name: a\n    path: a.sqlite\n    model: \(model)\n    defer_cleanup: maybe\n", .wrongType, "stores[0].defer_cleanup"),
        ("stores:\n  - name: a\n    path: a.sqlite\n    model: \(model)\n    busy_timeout: soon\n", .invalidValue, "stores[0].busy_timeout"),
        ("stores:\n  - name: a\n    path: a.sqlite\n    model: /nonexistent/model\n", .model, "stores[0].model"),
        ("stores:\n  - name: a\n    path: a.sqlite\n    model: \(model)\n    version: Aircraft 9\n", .model, "stores[0].version"),
        ("stores:\n  - {name: a, path: a.sqlite, model: \(model)}\n  - {name: a, path: b.sqlite, model: \(model)}\n", .duplicate, "stores[1].name"),
        ("stores:\n  - {name: a, path: a.sqlite, model: \(model)}\n  - {name: b, path: ./a.sqlite, model: \(model)}\n", .duplicate, "stores[1].path"),
        ("stores: []\nsockets:\n  admin: {path: /tmp/x.sock}\n  data: {path: /tmp/x.sock}\n", .duplicate, "sockets.data.path"),
        ("stores: []\nsockets:\n  admin: {users: [no-such-user-xyz]}\n", .invalidValue, "sockets.admin.users[0]"),
        ("stores: []\nsockets:\n  admin: {groups: [no-such-group-xyz]}\n", .invalidValue, "sockets.admin.groups[0]"),
        ("stores: []\nsockets:\n  admin: {mode: rw}\n", .invalidValue, "sockets.admin.mode"),
        ("stores: []\nscheduler:\n  idle_after: later\n", .invalidValue, "scheduler.idle_after"),
        ("stores: []\nscheduler:\n  idel_after: 1s\n", .unknownKey, "scheduler.idel_after"),
        ("stores: []\nscheduler:\n  min_free_space: lots\n", .invalidValue, "scheduler.min_free_space"),
        ("stores: []\nscheduler:\n  forced_pause_between_batches: none\n", .invalidValue, "scheduler.forced_pause_between_batches"),
        ("stores: []\nscheduler:\n  forced_pause_between_batches: 2m\n", .invalidValue, "scheduler.forced_pause_between_batches"),
        ("stores: []\nscheduler:\n  min_free_space: 2000TiB\n", .invalidValue, "scheduler.min_free_space"),
        ("stores: []\nlimits:\n  max_message_size: 10\n", .invalidValue, "limits.max_message_size"),
        ("stores: []\nlog_level: loud\n", .invalidValue, "log_level"),
    ])
    func refused(text: String, kind: ConfigurationError.Kind, key: String) {
        do {
            _ = try parse(text)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.kind == kind, "\(error)")
            #expect(error.key == key, "\(error)")
            #expect(error.file == "test.yaml")
            #expect(error.description.hasPrefix("test.yaml"))
            #expect(!error.reason.isEmpty)
        }
    }

    @Test func unknownKeysSuggestTheClosest() {
        #expect(throws: ConfigurationError.self) { try parse("stores:\n  - {name: a, path: a.sqlite, modle: x}\n") }
        do { _ = try parse("stores:\n  - {name: a, path: a.sqlite, modle: x}\n") } catch {
            #expect(error.description.contains("did you mean 'model'?"))
            #expect(error.line == 2)
        }
    }

    @Test func overridesWin() throws {
        let configuration = try ConfigurationLoader().parse("stores: []\n", file: "t.yaml", overrides: .init(adminSocket: "/tmp/a.sock", logLevel: "debug"))
        #expect(configuration.adminSocket.path == "/tmp/a.sock")
        #expect(configuration.logLevel == "debug")
    }

    /// A socket path longer than a Unix socket holds (107 bytes and the NUL) is refused when the
    /// configuration is read — by `--check-config` as by the start — naming the key and the
    /// limit, from the file and from an override alike (issue 45).
    @Test func aSocketPathTooLongForAUnixSocketIsRefused() throws {
        let long = "/run/" + String(repeating: "s", count: 100) + "/admin.sock"
        for (text, overrides, key) in [
            ("stores: []\nsockets:\n  admin:\n    path: \(long)\n", ConfigurationLoader.Overrides(), "sockets.admin.path"),
            ("stores: []\n", ConfigurationLoader.Overrides(dataSocket: long), "sockets.data.path"),
        ] {
            let error = try #require(throws: ConfigurationError.self) { try ConfigurationLoader().parse(text, file: "t.yaml", overrides: overrides) }
            #expect(error.key == key, "\(error)")
            #expect(error.reason.contains("\(long.utf8.count) bytes long") && error.reason.contains("at most 107 bytes"), "\(error)")
        }
        // 107 bytes fit.
        let fits = "/tmp/" + String(repeating: "s", count: 102)
        #expect(fits.utf8.count == ConfigurationLoader.maxSocketPathBytes)
        #expect(try ConfigurationLoader().parse("stores: []\n", file: "t.yaml", overrides: .init(adminSocket: fits)).adminSocket.path == fits)
    }

    @Test func checkConfigRefusesWhatTheStartWould() throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        try sandbox.writeConfig()
        let long = sandbox.directory.path + "/" + String(repeating: "d", count: 110) + ".sock"
        let check = try runCommand(Paths.stratad, ["--config", sandbox.configPath, "--check-config", "--data-socket", long])
        #expect(check.status == 78, "\(check.output)")
        #expect(check.output.contains("sockets.data.path") && check.output.contains("at most 107 bytes"), "\(check.output)")
        let start = try runCommand(Paths.stratad, ["--config", sandbox.configPath, "--data-socket", long])
        #expect(start.status == 78, "\(start.output)")
    }

    @Test func interfaceFilesMatchTheServedDefinitions() throws {
        for (file, served) in [("io.strata.Admin", StrataAdmin.definition), ("io.strata.Store", StrataStore.definition)] {
            let text = try String(contentsOf: Paths.packageRoot.appendingPathComponent("varlink/\(file).varlink"), encoding: .utf8)
            #expect(text.trimmingCharacters(in: .newlines) == served.trimmingCharacters(in: .newlines), "the build generates the definition from varlink/\(file).varlink: rebuild")
        }
    }

    @Test func schedulerSettingsRoundTrip() throws {
        var settings = SchedulerSettings()
        try settings.set("idle_after", to: "30s")
        try settings.set("maintenance_window", to: "02:00-05:00")
        #expect(settings.value(of: "idle_after") == "30s")
        #expect(throws: SchedulerSettingError.self) { try settings.set("maintenance_window", to: "2-5") }
        #expect(throws: SchedulerSettingError.self) { try settings.set("nope", to: "1") }
    }
}
