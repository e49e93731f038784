import Foundation
import Strata
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// Numbers, predicates, ids, YAML and paths from outside — a configuration file, a setting,
/// a client's call — are bounded: each out-of-range value gets an error that states the range,
/// never a trap, and the daemon keeps serving.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct InputBoundsTests {
    // MARK: - Configuration values (found trapping in DurationText)

    func parse(_ text: String) throws(ConfigurationError) -> DaemonConfiguration {
        try ConfigurationLoader(checksModels: false).parse(text, file: "test.yaml")
    }

    @Test("Out-of-range configuration values are refused with their range", arguments: [
        ("limits:\n  idle_timeout: 1e308\n", "limits.idle_timeout", "between 1s and 24h"),
        ("limits:\n  idle_timeout: 99999999999999999999h\n", "limits.idle_timeout", "between 1s and 24h"),
        ("limits:\n  idle_timeout: 0s\n", "limits.idle_timeout", "between 1s and 24h"),
        ("limits:\n  shutdown_timeout: 1e308\n", "limits.shutdown_timeout", "between 0s and 1h"),
        ("limits:\n  shutdown_timeout: -5s\n", "limits.shutdown_timeout", "between 0s and 1h"),
        ("limits:\n  max_connections: 0\n", "limits.max_connections", "between 1 and 65536"),
        ("limits:\n  max_connections: 99999999999999999999\n", "limits.max_connections", "between 1 and 65536"),
        ("limits:\n  max_message_size: 999999999999999MiB\n", "limits.max_message_size", "between 1KiB and 64MiB"),
        ("stores:\n  - {name: a, path: a.sqlite, model: m, busy_timeout: 1e308}\n", "stores[0].busy_timeout", "between 0s and 1h"),
        ("stores:\n  - {name: a, path: a.sqlite, model: m, busy_timeout: nan}\n", "stores[0].busy_timeout", "between 0s and 1h"),
        ("scheduler:\n  idle_after: 1e308\n", "scheduler.idle_after", "between 0s and 24h"),
        ("scheduler:\n  batch_budget: 99999999999999999999h\n", "scheduler.batch_budget", "between 1ms and 10s"),
        ("scheduler:\n  cpu_pressure: 1e308\n", "scheduler.cpu_pressure", "between 0 and 100"),
        ("scheduler:\n  load_per_core: nan\n", "scheduler.load_per_core", "between 0 and 1000"),
    ])
    func outOfRangeIsRefused(body: String, key: String, range: String) throws {
        let text = (body.hasPrefix("stores:") ? "" : "stores: []\n") + body
        let error = try #require(throws: ConfigurationError.self) { try parse(text) }
        #expect(error.kind == .invalidValue, "\(error)")
        #expect(error.key == key, "\(error)")
        #expect(error.reason.contains(range), "\(error)")
    }

    @Test("Durations and sizes of any text parse without trapping")
    func durationTextNeverTraps() {
        for text in ["1e308", "1e308s", "99999999999999999999h", "9223372036854775807ms", "-1s", "nan", "inf", "-inf", "1e-308", "", "h", "1e15m"] {
            if let duration = DurationText.parse(text) {
                #expect(duration <= DurationText.longest, "\(text)")
                _ = DurationText.format(duration)
            }
        }
        #expect(DurationText.parse("1e308") == nil)
        #expect(DurationText.parse("99999999999999999999h") == nil)
        #expect(DurationText.parse("250ms") == .milliseconds(250))
        #expect(DurationText.parse("100y") == nil)
        #expect(DurationText.format(.seconds(Int64.max)) != "")
        #expect(ByteSize.parse("999999999999999MiB") == nil)
        #expect(ByteSize.parse("9223372036854775807K") == nil)
        #expect(ByteSize.parse("2MiB") == 2 << 20)
    }

    @Test("A setting's out-of-range value is refused with the range", arguments: SchedulerSettings.keys)
    func settingsRefuseAbsurdValues(key: String) {
        var settings = SchedulerSettings()
        for value in ["1e308", "99999999999999999999h", "-1", "nan"] {
            do {
                try settings.set(key, to: value)
                // Only keys whose type is not a number may accept these texts.
                #expect(["signals", "maintenance_window"].contains(key) == false, "\(key)=\(value) accepted")
            } catch {
                #expect(error.reason.contains("between") || error.reason.contains("true or false") || error.reason.contains("window") || error.reason.contains("signal"), "\(key): \(error.reason)")
            }
        }
    }

    @Test("stratad exits 78 for an absurd duration in stratad.yaml, naming the key and range")
    func stratadRefusesAbsurdDuration() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        try sandbox.writeConfig(limits: "limits:\n  idle_timeout: 1e308\n")
        let result = try await runCommandOffThread(Paths.stratad, ["--config", sandbox.configPath])
        #expect(result.status == 78, "\(result.output)")
        #expect(result.output.contains("limits.idle_timeout: '1e308' is not a duration between 1s and 24h"), "\(result.output)")
    }

    @Test("An alias bomb or deep nesting in stratad.yaml is a syntax error")
    func configurationBombIsRefused() throws {
        var bomb = "stores: []\nx0: &x0 [a, a, a, a, a, a, a, a, a, a]\n"
        for level in 1...9 { bomb += "x\(level): &x\(level) [" + Array(repeating: "*x\(level - 1)", count: 10).joined(separator: ", ") + "]\n" }
        let error = try #require(throws: ConfigurationError.self) { try parse(bomb) }
        #expect(error.kind == .syntax)
        #expect(error.reason.contains("alias"))
        let deep = try #require(throws: ConfigurationError.self) { try parse("stores: " + String(repeating: "[", count: 50_000)) }
        #expect(deep.kind == .syntax)
        #expect(deep.reason.contains("nested more than"))
    }

    @Test("A FIFO given as the configuration file is refused without blocking")
    func fifoConfigurationIsRefused() throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        #expect(mkfifo(sandbox.configPath, 0o600) == 0)
        let error = try #require(throws: ConfigurationError.self) { try ConfigurationLoader().load(path: sandbox.configPath) }
        #expect(error.kind == .unreadable)
        #expect(error.reason.contains("FIFO"))
    }

    // MARK: - A live daemon under hostile calls

    @Test("Hostile calls get errors naming the limit, and the daemon keeps serving")
    func hostileCalls() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        try sandbox.writeConfig()
        let daemon = try DaemonProcess(config: sandbox.configPath)
        defer { daemon.signal(SIGKILL) }
        try await waitForSocket(sandbox.dataSocket)

        func call(_ method: String, _ parameters: [String: JSONValue], socket: String? = nil) async throws -> VarlinkError? {
            try await VarlinkClient.withConnection(to: socket ?? sandbox.dataSocket) { connection in
                do {
                    _ = try await connection.call(method, parameters)
                    return nil
                } catch let error as VarlinkError {
                    return error
                }
            }
        }
        let store: JSONValue = "aircraft"
        let deep = String(repeating: "(", count: 4096) + "tailNumber == 'x'" + String(repeating: ")", count: 4096)
        let nots = String(repeating: "NOT ", count: 1024) + "tailNumber == 'x'"
        let braces = "tailNumber IN " + String(repeating: "{", count: 4096) + "'x'" + String(repeating: "}", count: 4096)
        let chain = Array(repeating: "owner", count: 1500).joined(separator: ".") + ".name == 'x'"
        for (format, limit) in [(deep, "maxNestingDepth"), (nots, "maxNestingDepth"), (braces, "maxNestingDepth"), (chain, "maxKeyPathComponents")] {
            for method in ["io.strata.Store.Fetch", "io.strata.Store.Count"] {
                let error = try await call(method, ["store": store, "entity": "Aircraft", "predicate": .string(format)])
                #expect(error?.name == "io.strata.Store.InvalidPredicate", "\(method): \(String(describing: error))")
                #expect(error?.reason.contains(limit) == true, "\(String(describing: error))")
            }
        }

        for id in [Int64.min, -1, 0] {
            let update = try await call("io.strata.Store.Update", ["store": store, "entity": "Aircraft", "id": .int(id), "values": [:]])
            let delete = try await call("io.strata.Store.Delete", ["store": store, "entity": "Aircraft", "id": .int(id)])
            let batch = try await call("io.strata.Store.Batch", ["store": store, "operations": [
                ["op": "insert", "entity": "Aircraft", "values": ["tailNumber": "F-OK"]],
                ["op": "delete", "entity": "Aircraft", "id": .int(id)],
            ]])
            for error in [update, delete, batch] {
                #expect(error?.name == "io.strata.Store.ObjectError", "\(String(describing: error))")
                #expect(error?.parameters["code"] == "invalidObjectID")
                #expect(error?.reason.contains("ids of saved objects are 1 to 9223372036854775807") == true)
            }
            #expect(batch?.parameters["operation"] == .int(1))
        }

        for value in ["1e308", "99999999999999999999h"] {
            let error = try await call("io.strata.Admin.SetSetting", ["key": "idle_after", "value": .string(value)], socket: sandbox.adminSocket)
            #expect(error?.name == "io.strata.Admin.InvalidSetting", "\(String(describing: error))")
            #expect(error?.reason.contains("between 0s and 24h") == true)
        }

        // Still serving, and nothing was written by the refused batch.
        let count = try await VarlinkClient.withConnection(to: sandbox.dataSocket) { connection in
            try await connection.call("io.strata.Store.Count", ["store": store, "entity": "Aircraft"])
        }
        #expect(count["count"] == .int(0))
        #expect(!daemon.log.contains("Fatal error"))
    }

    // MARK: - Stores that must not open

    /// A model directory whose two versions share no entity: `A 1` (Post) then `B 1` (Aircraft).
    func writeDisjointModels(in sandbox: DaemonSandbox) throws -> String {
        let directory = sandbox.path("disjoint")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "version: A 1\nentities:\n  - {name: Post, attributes: [{name: title, type: string}]}\n".write(toFile: directory + "/A 1.yaml", atomically: true, encoding: .utf8)
        try "version: B 1\nentities:\n  - {name: Aircraft, attributes: [{name: tailNumber, type: string}]}\n".write(toFile: directory + "/B 1.yaml", atomically: true, encoding: .utf8)
        try "versions: [A 1.yaml, B 1.yaml]\n".write(toFile: directory + "/versions.yaml", atomically: true, encoding: .utf8)
        return directory
    }

    /// Creates a store with `version` of `directory` holding `rows` posts.
    func seedPosts(at path: String, directory: String, version: String, rows: Int) throws {
        let models = try ModelDirectory(url: URL(fileURLWithPath: directory))
        let store = try PersistentStore.open(at: URL(fileURLWithPath: path), model: try #require(models.version(named: version)))
        let context = ObjectContext(store: store)
        for i in 0..<rows { _ = try context.insert("Post", values: ["title": "post \(i)"]) }
        try context.save()
        try store.close()
    }

    func postRows(_ path: String) throws -> Int {
        let store = try PersistentStore.open(at: URL(fileURLWithPath: path), model: PersistentStore.metadata(at: URL(fileURLWithPath: path)).model,
                                             options: StoreOptions(createIfMissing: false, readOnly: true))
        defer { try? store.close() }
        return try ObjectContext(store: store).count(FetchRequest(entityName: "Post"))
    }

    @Test("A FIFO store, a store of another model directory and a migration dropping every entity fail alone; the rest serves")
    func storesThatMustNotOpen() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        let disjoint = try writeDisjointModels(in: sandbox)
        #expect(mkfifo(sandbox.path("fifo.sqlite"), 0o600) == 0)
        try await offThread {
            // A Post store configured with the Aircraft model directory.
            try self.seedPosts(at: sandbox.path("posts.sqlite"), directory: disjoint, version: "A 1", rows: 50)
            // Stores at 'A 1' of a directory whose current version 'B 1' drops every entity.
            try self.seedPosts(at: sandbox.path("guarded.sqlite"), directory: disjoint, version: "A 1", rows: 5)
            try self.seedPosts(at: sandbox.path("forced.sqlite"), directory: disjoint, version: "A 1", rows: 5)
        }
        let aircraft = Paths.aircraftModel
        try sandbox.writeConfig(stores: ["aircraft"], extraStores: """
              - {name: fifo, path: \(sandbox.path("fifo.sqlite")), model: \(aircraft)}
              - {name: posts, path: \(sandbox.path("posts.sqlite")), model: \(aircraft)}
              - {name: guarded, path: \(sandbox.path("guarded.sqlite")), model: \(disjoint)}
              - {name: forced, path: \(sandbox.path("forced.sqlite")), model: \(disjoint), allow_dropping_all_entities: true}

            """)
        let notify = NotifyListener(path: sandbox.path("notify.sock"))
        defer { notify.close() }
        let daemon = try DaemonProcess(config: sandbox.configPath, environment: ["NOTIFY_SOCKET": notify.path])
        defer { daemon.signal(SIGKILL) }
        let ready = await notify.wait { $0.contains("READY=1") }
        // 'forced' migrated with its drops deferred: "2 stores ready, 1 with deferred work pending, 3 failed".
        #expect(ready?.contains("STATUS=2 stores ready") == true && ready?.contains("3 failed") == true, "\(ready ?? "none")\n\(daemon.log)")
        let stores = try await VarlinkClient.withConnection(to: sandbox.adminSocket) { admin in
            try await admin.call("io.strata.Admin.ListStores")["stores"]?.arrayValue ?? []
        }
        let byName = Dictionary(uniqueKeysWithValues: stores.map { ($0["name"]?.stringValue ?? "", $0) })
        #expect(byName["aircraft"]?["state"] == "ready")
        #expect(byName["forced"]?["state"] == "ready")
        #expect(byName["forced"]?["modelVersion"] == "B 1")

        let fifo = byName["fifo"]?["error"]?.stringValue ?? ""
        #expect(fifo.contains("notRegularFile") && fifo.contains("FIFO"), "\(fifo)")

        let posts = byName["posts"]?["error"]?.stringValue ?? ""
        let checksum = try PersistentStore.metadata(at: URL(fileURLWithPath: sandbox.path("posts.sqlite"))).modelChecksum
        for part in ["wrongModelDirectory", "store 'posts'", "'A 1'", checksum, aircraft, "left untouched"] {
            #expect(posts.contains(part), "missing \(part) in: \(posts)")
        }

        let guarded = byName["guarded"]?["error"]?.stringValue ?? ""
        #expect(guarded.contains("drop every entity of the store ('Post')") && guarded.contains("allow_dropping_all_entities"), "\(guarded)")

        daemon.signal(SIGTERM)
        _ = await daemon.waitForExit()
        #expect(try await offThread { try self.postRows(sandbox.path("posts.sqlite")) } == 50)
        #expect(try await offThread { try self.postRows(sandbox.path("guarded.sqlite")) } == 5)
        #expect(try PersistentStore.metadata(at: URL(fileURLWithPath: sandbox.path("posts.sqlite"))).deferred.isEmpty)
    }
}
