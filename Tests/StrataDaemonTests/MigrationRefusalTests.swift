import Foundation
import Strata
import Testing
@testable import StrataDaemon
import StrataVarlink

/// The daemon opens stores with migration at open: a hop that would leave stored objects
/// invalid is refused there too, before any write; the store is reported as failed and the
/// others serve.
@Suite("stratad: a migration that would leave objects invalid")
struct MigrationRefusalTests {
    @Test func refusedMigrationFailsOnlyThatStore() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        // A model directory whose current version adds a non-optional attribute without a default.
        let models = URL(fileURLWithPath: sandbox.path("models"))
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        let v1 = ObjectModel(version: "Note 1", entities: [Entity("Note", attributes: [Attribute("title", .string)])])
        let v2 = ObjectModel(version: "Note 2", entities: [Entity("Note", attributes: [Attribute("title", .string), Attribute("owner", .string, isOptional: false)])])
        try ModelFile.encode(v1, format: .json).write(to: models.appendingPathComponent("Note 1.json"))
        try ModelFile.encode(v2, format: .json).write(to: models.appendingPathComponent("Note 2.json"))
        try "versions: [Note 1.json, Note 2.json]\n".write(to: models.appendingPathComponent("versions.yaml"), atomically: true, encoding: .utf8)
        let url = URL(fileURLWithPath: sandbox.path("notes.sqlite"))
        let store = try PersistentStore.open(at: url, model: v1)
        let context = ObjectContext(store: store)
        for title in ["a", "b"] { _ = try context.insert("Note", values: ["title": title]) }
        try context.save()
        try store.close()

        try sandbox.writeConfig(stores: ["aircraft"], extraStores: "  - name: notes\n    path: \(url.path)\n    model: \(models.path)\n    busy_timeout: 1s\n")
        let daemon = try DaemonProcess(config: sandbox.configPath)
        var states: [String?] = []
        var error: String?
        for _ in 0..<100 {
            if let stores = try? await VarlinkClient.withConnection(to: sandbox.adminSocket, { admin in
                try await admin.call("io.strata.Admin.ListStores")["stores"]?.arrayValue ?? []
            }) {
                states = stores.map { $0["state"]?.stringValue }
                error = stores.last?["error"]?.stringValue
                if states == ["ready", "failed"] { break }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(states == ["ready", "failed"], "\(daemon.log)")
        #expect(error?.contains("2 existing 'Note' objects would have no value for non-optional 'owner'") == true, "\(error ?? "none")")
        #expect(try PersistentStore.metadata(at: url).modelVersion == "Note 1")
        await daemon.stop()
    }
}
