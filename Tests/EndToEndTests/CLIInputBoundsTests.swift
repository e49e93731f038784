import Foundation
import Strata
import Testing

/// `stratactl` refuses hostile input with a clear message and a documented exit status, where
/// it crashed (deep predicates), hung (FIFOs, YAML alias bombs) or lost data (a migration that
/// drops every entity).
@Suite("stratactl: bounded input", .timeLimit(.minutes(10)))
struct CLIInputBoundsTests {
    /// Runs `stratactl` on its own thread: these tests start many processes, and blocking the
    /// cooperative pool with them would delay the suite's timing-sensitive daemon tests.
    func stratactl(_ arguments: [String]) async throws -> BuiltBinary.Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try BuiltBinary.run("stratactl", arguments) }) }
        }
    }

    @Test("fetch and count refuse 4 KB of nesting with exit 2, naming the limit", arguments: [
        String(repeating: "(", count: 4096) + "tailNumber == 'x'" + String(repeating: ")", count: 4096),
        String(repeating: "NOT ", count: 1024) + "tailNumber == 'x'",
        "tailNumber IN " + String(repeating: "{", count: 4096) + "'x'" + String(repeating: "}", count: 4096),
        Array(repeating: "owner", count: 1500).joined(separator: ".") + ".name == 'x'",
    ])
    func deepPredicatesAreRefused(format: String) async throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        for command in ["fetch", "count"] {
            let result = try await stratactl([command, fixture.store, "Aircraft", "--where", format])
            #expect(result.status == 2, "\(command): \(result.status) \(result.stderr.prefix(300))")
            #expect(result.stderr.hasPrefix("stratactl: "))
            #expect(result.stderr.contains("maxNestingDepth") || result.stderr.contains("maxKeyPathComponents"), "\(result.stderr.prefix(300))")
        }
    }

    @Test("Offline commands refuse a FIFO store path at once (exit 1)")
    func fifoStoreIsRefused() async throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        let fifo = fixture.path("fifo.sqlite")
        #expect(mkfifo(fifo, 0o600) == 0)
        let models = BuiltBinary.packageRoot.appending(path: "config/models/Aircraft").path
        let commands: [[String]] = [
            ["inspect", fifo], ["fetch", fifo, "Aircraft"], ["count", fifo, "Aircraft"], ["deferred", "list", fifo],
            ["deferred", "finish", fifo], ["plan", fifo, "--model", models], ["migrate", fifo, "--model", models],
        ]
        for arguments in commands {
            let result = try await stratactl(arguments)
            #expect(result.status == 1, "\(arguments): \(result)")
            #expect(result.stderr.contains("FIFO"), "\(arguments): \(result.stderr)")
        }
    }

    @Test("model validate refuses a YAML alias bomb quickly (exit 1)")
    func aliasBombIsRefused() async throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        var text = "version: V1\nentities:\n  - name: A\n    userInfo:\n      a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for level in 1...9 { text += "      a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ") + "]\n" }
        let path = fixture.file("bomb.yaml", Data(text.utf8))
        for command in [["model", "validate", path], ["model", "checksum", path]] {
            let result = try await stratactl(command)
            #expect(result.status == 1, "\(result)")
            #expect((result.stdout + result.stderr).contains("alias"), "\(result)")
        }
    }

    @Test("migrate refuses to drop every entity of the store (exit 3) unless --force")
    func migrateRefusesDroppingEverything() async throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        // A directory whose versions share no entity: the Aircraft store's version, then a Post-only one.
        let directory = fixture.directory.appending(path: "models")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var current = fixture.model
        current.nextVersion = nil
        try ModelFile.encode(current, format: .yaml).write(to: directory.appending(path: "a.yaml"))
        let post = ObjectModel(version: "Post only", entities: [Entity("Post", attributes: [Attribute("title", .string)])])
        try ModelFile.encode(post, format: .yaml).write(to: directory.appending(path: "b.yaml"))
        try Data("versions: [a.yaml, b.yaml]\n".utf8).write(to: directory.appending(path: "versions.yaml"))

        let refused = try await stratactl(["migrate", fixture.store, "--model", directory.path, "--quiet"])
        #expect(refused.status == 3, "\(refused)")
        #expect(refused.stderr.contains("drop every entity of the store ('Aircraft', 'FlightData')"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--force"))
        #expect(try await stratactl(["count", fixture.store, "Aircraft"]).stdout == "5\n")

        let forced = try await stratactl(["migrate", fixture.store, "--model", directory.path, "--quiet", "--force"])
        #expect(forced.status == 0, "\(forced)")
        #expect(try PersistentStore.metadata(at: fixture.storeURL).modelVersion == "Post only")
    }

    @Test("deferred finish refuses batch and pause values out of range (exit 2)", arguments: [
        ["--batch-ms", "0"], ["--batch-ms", "9223372036854775807"], ["--pause-ms=-1"], ["--pause-ms", "60001"],
        ["--idle-batch-ms=-1"], ["--idle-batch-ms", "10001"],
    ])
    func finishOptionsAreRanged(options: [String]) async throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        let result = try await stratactl(["deferred", "finish", fixture.store] + options)
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("between"), "\(result.stderr)")
    }
}
