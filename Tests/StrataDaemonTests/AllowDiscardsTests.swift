import Foundation
import Strata
import StrataDaemon
import StrataVarlink
import Testing

/// `allow_discards: false` on a store: a migration at open that would discard stored data is
/// refused before any write, with what it would discard, and the store stays at its version;
/// the other stores serve, and a store whose migration discards nothing opens. Allowed, the
/// hop is logged naming what it discards, without counting it (no scan before `READY=1`).
@Suite(.timeLimit(.minutes(3)))
struct AllowDiscardsTests {
    @Test func configurationReadsAllowDiscards() throws {
        let text = """
            stores:
              - {name: a, path: a.sqlite, model: m, allow_discards: false}
              - {name: b, path: b.sqlite, model: m}
            """
        let configuration = try ConfigurationLoader(checksModels: false).parse(text, file: "test.yaml")
        #expect(configuration.stores[0].allowsDiscards == false)
        #expect(configuration.stores[1].allowsDiscards == true)
        expectRefused("stores:\n  - {name: a, path: a.sqlite, model: m, allow_discards: maybe}\n", key: "stores[0].allow_discards", reason: "maybe") {
            (text: String) throws(ConfigurationError) in try ConfigurationLoader(checksModels: false).parse(text, file: "test.yaml")
        }
    }

    /// `N 1` (Note with title and body) then `N 2` (body removed).
    func writeModels(in sandbox: DaemonSandbox) throws -> String {
        let directory = sandbox.path("notes")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "version: N 1\nentities:\n  - {name: Note, attributes: [{name: title, type: string}, {name: body, type: string, optional: true}]}\n"
            .write(toFile: directory + "/N 1.yaml", atomically: true, encoding: .utf8)
        try "version: N 2\nentities:\n  - {name: Note, attributes: [{name: title, type: string}]}\n"
            .write(toFile: directory + "/N 2.yaml", atomically: true, encoding: .utf8)
        try "versions: [N 1.yaml, N 2.yaml]\n".write(toFile: directory + "/versions.yaml", atomically: true, encoding: .utf8)
        return directory
    }

    func seed(at path: String, directory: String, bodies: Int) throws {
        let models = try ModelDirectory(url: URL(fileURLWithPath: directory))
        let store = try PersistentStore.open(at: URL(fileURLWithPath: path), model: try #require(models.version(named: "N 1")))
        let context = ObjectContext(store: store)
        for i in 0..<10 { _ = try context.insert("Note", values: i < bodies ? ["title": "note \(i)", "body": "text \(i)"] : ["title": "note \(i)"]) }
        try context.save()
        try store.close()
    }

    @Test("A migration at open that would discard values is refused with its count; one that discards nothing opens")
    func refusedAtOpen() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        let models = try writeModels(in: sandbox)
        try await offThread {
            try self.seed(at: sandbox.path("lossy.sqlite"), directory: models, bodies: 7)
            try self.seed(at: sandbox.path("empty.sqlite"), directory: models, bodies: 0)
            try self.seed(at: sandbox.path("allowed.sqlite"), directory: models, bodies: 7)
        }
        try sandbox.writeConfig(stores: [], extraStores: """
              - {name: lossy, path: \(sandbox.path("lossy.sqlite")), model: \(models), allow_discards: false, backup: false}
              - {name: empty, path: \(sandbox.path("empty.sqlite")), model: \(models), allow_discards: false, backup: false}
              - {name: allowed, path: \(sandbox.path("allowed.sqlite")), model: \(models), backup: false}

            """)
        let notify = NotifyListener(path: sandbox.path("notify.sock"))
        defer { notify.close() }
        let daemon = try DaemonProcess(config: sandbox.configPath, environment: ["NOTIFY_SOCKET": notify.path])
        defer { daemon.signal(SIGKILL) }
        let ready = await notify.wait { $0.contains("READY=1") }
        #expect(ready?.contains("1 failed") == true, "\(ready ?? "none")\n\(daemon.log)")
        let stores = try await VarlinkClient.withConnection(to: sandbox.adminSocket) { admin in
            try await admin.call("io.strata.Admin.ListStores")["stores"]?.arrayValue ?? []
        }
        var byName: [String: JSONValue] = [:]
        for store in stores { if let name = store["name"]?.stringValue { byName[name] = store } }
        let lossy = byName["lossy"]?["error"]?.stringValue ?? ""
        #expect(lossy.contains("would discard 7 non-null values of attribute Note.body"), "\(lossy)")
        #expect(lossy.contains("allow_discards: false") && lossy.lowercased().contains("nothing was changed"), "\(lossy)")
        #expect(byName["lossy"]?["state"]?.stringValue == "failed", "\(String(describing: byName["lossy"]))")
        #expect(byName["empty"]?["state"]?.stringValue == "ready", "\(String(describing: byName["empty"]))")
        #expect(byName["allowed"]?["state"]?.stringValue == "ready", "\(String(describing: byName["allowed"]))")
        // Allowed, the hop is said out loud but not counted: readiness waits for no scan.
        #expect(daemon.log.contains("the values of attribute Note.body (not counted)"), "\(daemon.log)")
        daemon.signal(SIGTERM)
        _ = await daemon.waitForExit()
        let metadata = try PersistentStore.metadata(at: URL(fileURLWithPath: sandbox.path("lossy.sqlite")))
        #expect(metadata.modelVersion == "N 1")
        let bodies = try await offThread { () throws -> Int in
            let store = try PersistentStore.open(at: URL(fileURLWithPath: sandbox.path("lossy.sqlite")), model: metadata.model,
                                                 options: StoreOptions(createIfMissing: false, readOnly: true))
            defer { try? store.close() }
            return try ObjectContext(store: store).count(FetchRequest(entityName: "Note", predicate: try FetchPredicate(format: "body != nil")))
        }
        #expect(bodies == 7)
        #expect(try PersistentStore.metadata(at: URL(fileURLWithPath: sandbox.path("empty.sqlite"))).modelVersion == "N 2")
    }
}
