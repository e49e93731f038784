import Foundation
import Strata
import Synchronization
import Testing
@testable import StrataDaemon
import StrataVarlink

/// A hosted store whose schema another process changes (the `sqlite3` shell, `stratactl
/// migrate`): the daemon checks it again at the next call, fails the store with a reason when
/// the model no longer matches, serves on (with a warning) when it still does, and is not
/// tripped by its own deferred work.
@Suite("stratad: schema changes made by other processes", .serialized, .timeLimit(.minutes(3)))
struct ExternalSchemaChangeTests {
    /// A daemon hosting `fleet` (Aircraft model, `version` or the current one).
    struct Fixture {
        let sandbox: DaemonSandbox
        let daemon: DaemonProcess
        var storePath: String { sandbox.path("fleet.sqlite") }

        init(version: String? = nil, seedRows: Int = 0) async throws {
            sandbox = try DaemonSandbox()
            if seedRows > 0 {
                let models = try ModelDirectory(url: URL(fileURLWithPath: Paths.aircraftModel))
                let store = try PersistentStore.open(at: URL(fileURLWithPath: sandbox.path("fleet.sqlite")), model: models.version(named: "Aircraft 1")!)
                let context = ObjectContext(store: store)
                for n in 0..<seedRows {
                    _ = try context.insert("Aircraft", values: ["tailNumber": "N\(n)", "aircraftType": n % 2 == 0 ? "A320" : "B737", "aircraftClass": "land"])
                }
                try context.save()
                try store.close()
            }
            let versionLine = version.map { "    version: \($0)\n" } ?? ""
            try sandbox.writeConfig(stores: [], extraStores: "  - name: fleet\n    path: \(sandbox.path("fleet.sqlite"))\n    model: \(Paths.aircraftModel)\n\(versionLine)    busy_timeout: 1s\n")
            daemon = try DaemonProcess(config: sandbox.configPath)
            try await waitForSocket(sandbox.dataSocket)
        }

        func call(_ method: String, _ parameters: [String: JSONValue]) async throws -> [String: JSONValue] {
            try await VarlinkClient.withConnection(to: sandbox.dataSocket) { try await $0.call(method, parameters) }
        }

        /// The error a call fails with (nil when it succeeds).
        func error(of method: String, _ parameters: [String: JSONValue]) async throws -> VarlinkError? {
            do {
                _ = try await call(method, parameters)
                return nil
            } catch let error as VarlinkError {
                return error
            }
        }

        func insert(_ tailNumber: String) async throws {
            _ = try await call("io.strata.Store.Insert", ["store": "fleet", "entity": "Aircraft",
                                                          "values": .object(["tailNumber": .string(tailNumber), "aircraftClass": "land"])])
        }

        static let fetchAll: [String: JSONValue] = ["store": "fleet", "entity": "Aircraft", "sort": ["tailNumber"]]

        func stores() async throws -> [JSONValue] {
            try await VarlinkClient.withConnection(to: sandbox.adminSocket) { try await $0.call("io.strata.Admin.ListStores")["stores"]?.arrayValue ?? [] }
        }

        /// Runs the sqlite3 shell on the hosted store, as an operator would.
        func sqlite3(_ sql: String) throws {
            let result = try runCommand("/usr/bin/sqlite3", [storePath, sql])
            #expect(result.status == 0, "sqlite3 \(sql): \(result.output)")
        }

        func stratactl(_ arguments: [String]) throws -> (status: Int32, output: String) {
            try runCommand(Paths.stratactl, arguments + ["--socket", sandbox.adminSocket])
        }

        func finish() async {
            await daemon.stop()
            sandbox.remove()
        }
    }

    /// Runs `body` with a fixture whose daemon is stopped however `body` ends.
    func withFixture(version: String? = nil, seedRows: Int = 0, _ body: (Fixture) async throws -> Void) async throws {
        let fixture = try await Fixture(version: version, seedRows: seedRows)
        do {
            try await body(fixture)
        } catch {
            await fixture.finish()
            throw error
        }
        await fixture.finish()
    }

    @Test func aDroppedColumnFailsTheStoreUntilFixedAndReloaded() async throws {
        try await withFixture { fixture in
            for n in 1...3 { try await fixture.insert("F-GSP\(n)") }
            try fixture.sqlite3("ALTER TABLE Aircraft DROP COLUMN aircraftClass")

            // Every call now gets the reason, not "no such column".
            for (method, parameters) in [("io.strata.Store.Fetch", Fixture.fetchAll),
                                         ("io.strata.Store.Insert", ["store": "fleet", "entity": "Aircraft", "values": ["tailNumber": "F-GSP9"]])] {
                let error = try #require(try await fixture.error(of: method, parameters), "\(method) succeeded on a broken schema")
                #expect(error.name == "io.strata.Store.StoreUnavailable", "\(error)")
                let reason = error.reason
                #expect(reason.contains("was changed outside stratad and no longer matches model 'Aircraft 3'"), "\(reason)")
                #expect(reason.contains("column Aircraft.aircraftClass (attribute Aircraft.aircraftClass) is missing"), "\(reason)")
                #expect(reason.contains("run `stratactl reload`") && reason.contains("stratactl migrate"), "\(reason)")
                #expect(!reason.contains("no such column"), "\(reason)")
            }
            let failed = try await fixture.stores()
            #expect(failed.first?["state"]?.stringValue == "failed")
            #expect(failed.first?["error"]?.stringValue?.contains("column Aircraft.aircraftClass") == true)
            let listing = try fixture.stratactl(["stores"])
            #expect(listing.status == 0 && listing.output.contains("failed") && listing.output.contains("aircraftClass"), "\(listing.output)")
            #expect(fixture.daemon.log.contains("no longer matches its model; the store is failed"), "\(fixture.daemon.log)")

            // A reload with the schema still broken keeps it failed, with the same reason.
            #expect(try fixture.stratactl(["reload"]).status == 0)
            #expect(try await fixture.stores().first?["error"]?.stringValue?.contains("column Aircraft.aircraftClass (attribute Aircraft.aircraftClass) is missing") == true)

            // The operator puts the column back and reloads: the store serves its rows again.
            try fixture.sqlite3("ALTER TABLE Aircraft ADD COLUMN aircraftClass TEXT")
            let reload = try fixture.stratactl(["reload"])
            #expect(reload.status == 0, "\(reload.output)")
            #expect(try await fixture.stores().first?["state"]?.stringValue == "ready")
            let objects = try await fixture.call("io.strata.Store.Fetch", Fixture.fetchAll)["objects"]?.arrayValue ?? []
            #expect(objects.map { $0["tailNumber"]?.stringValue } == ["F-GSP1", "F-GSP2", "F-GSP3"])
            try await fixture.insert("F-GSP4")
        }
    }

    @Test func anAddedIndexKeepsTheStoreServingWithAWarning() async throws {
        try await withFixture { fixture in
            try await fixture.insert("F-GSP1")
            try fixture.sqlite3("CREATE INDEX byType ON Aircraft(aircraftType)")
            let objects = try await fixture.call("io.strata.Store.Fetch", Fixture.fetchAll)["objects"]?.arrayValue ?? []
            #expect(objects.count == 1)
            try await fixture.insert("F-GSP2")
            #expect(try await fixture.stores().first?["state"]?.stringValue == "ready")
            let log = fixture.daemon.log
            #expect(log.contains("warning stratad: the store's schema was changed outside stratad; it still matches model 'Aircraft 3', serving on"), "\(log)")
            #expect(log.contains("index byType on Aircraft is not in model 'Aircraft 3'"), "\(log)")
            // Checked once per change, not once per call.
            #expect(log.components(separatedBy: "changed outside stratad").count == 2, "\(log)")
        }
    }

    @Test func aDroppedTableFailsTheStore() async throws {
        try await withFixture { fixture in
            try await fixture.insert("F-GSP1")
            try fixture.sqlite3("ALTER TABLE FlightData RENAME TO FlightDataOld")
            let error = try #require(try await fixture.error(of: "io.strata.Store.Count", ["store": "fleet", "entity": "Aircraft"]))
            #expect(error.name == "io.strata.Store.StoreUnavailable")
            #expect(error.reason.contains("table FlightData (entity FlightData) is missing"), "\(error.reason)")
        }
    }

    @Test func aMigrationByAnotherProcessSaysWhichVersionToConfigure() async throws {
        try await withFixture(version: "Aircraft 1", seedRows: 10) { fixture in
            #expect(try await fixture.call("io.strata.Store.Count", ["store": "fleet", "entity": "Aircraft"])["count"]?.intValue == 10)
            let migrate = try runCommand(Paths.stratactl, ["migrate", fixture.storePath, "--model", Paths.aircraftModel, "--to", "Aircraft 2"])
            #expect(migrate.status == 0, "\(migrate.output)")
            let error = try #require(try await fixture.error(of: "io.strata.Store.Count", ["store": "fleet", "entity": "Aircraft"]))
            #expect(error.name == "io.strata.Store.StoreUnavailable")
            #expect(error.reason.contains("the store's metadata names model 'Aircraft 2'"), "\(error.reason)")
            #expect(error.reason.contains("set `version: Aircraft 2` for store 'fleet'"), "\(error.reason)")
        }
    }

    @Test func deferredWorkChangesTheSchemaWithoutTrippingTheCheck() async throws {
        try await withFixture(version: "Aircraft 2", seedRows: 3000) { fixture in
            let pending = try await VarlinkClient.withConnection(to: fixture.sandbox.adminSocket) {
                try await $0.call("io.strata.Admin.Pending", ["store": "fleet"])
            }
            let tasks = pending["stores"]?.arrayValue?.first?["tasks"]?.arrayValue ?? []
            #expect(tasks.contains { $0["kind"]?.stringValue == "rewriteTable" }, "\(pending)")
            // Clients keep calling while the rewrite creates its shadow table and triggers, copies,
            // swaps and drops.
            let ended = Mutex(false)
            let finishing = Task {
                defer { ended.withLock { $0 = true } }
                return try await VarlinkClient.withConnection(to: fixture.sandbox.adminSocket) {
                    try await $0.callMore("io.strata.Admin.FinishDeferred", ["store": "fleet", "wait": true, "now": true]) { _ in }
                }
            }
            var failures: [String] = []
            var calls = 0
            while true {
                let done = ended.withLock { $0 }
                do {
                    let count = try await fixture.call("io.strata.Store.Count", ["store": "fleet", "entity": "Aircraft"])["count"]?.intValue
                    if count != 3000 { failures.append("count \(count.map(String.init) ?? "nil")") }
                } catch {
                    failures.append("\(error)")
                }
                calls += 1
                if done { break }
            }
            let reply = try await finishing.value
            #expect(reply["state"]?.stringValue == "finished", "\(reply)")
            #expect(failures.isEmpty, "\(failures.prefix(5))")
            #expect(try await fixture.stores().first?["state"]?.stringValue == "ready")
            let log = fixture.daemon.log
            #expect(log.contains("schema changed (deferred work); it still matches the model"), "no check ran after \(calls) calls: \(log)")
            #expect(!log.contains("changed outside stratad"), "\(log)")
        }
    }

    @Test func deferredWorkOnABrokenSchemaFailsTheStoreInstead() async throws {
        try await withFixture(version: "Aircraft 2", seedRows: 100) { fixture in
            try fixture.sqlite3("ALTER TABLE Aircraft DROP COLUMN aircraftType")
            // No call came in: the cleanup run is the first to look.
            let reply = try await VarlinkClient.withConnection(to: fixture.sandbox.adminSocket) {
                try await $0.callMore("io.strata.Admin.FinishDeferred", ["store": "fleet", "wait": true, "now": true]) { _ in }
            }
            let error = reply["results"]?.arrayValue?.first?["error"]?.stringValue ?? ""
            #expect(error.contains("column Aircraft.aircraftType (attribute Aircraft.aircraftType) is missing"), "\(reply)")
            let stores = try await fixture.stores()
            #expect(stores.first?["state"]?.stringValue == "failed")
            #expect(!fixture.daemon.log.contains("no such column"), "\(fixture.daemon.log)")
        }
    }
}
