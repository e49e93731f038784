import Foundation
import GRDB
import Testing
@testable import Strata

/// `stratactl import-coredata`, `plan`, `model checksum` and `migrate` run as processes on
/// Core Data fixtures: output, exit statuses, and that bad input writes nothing.
@Suite("stratactl import-coredata and Core Data bundles", .enabled(if: StratactlProcess.executable != nil, "stratactl is not built"))
struct CoreDataImportCommandTests {
    static func arguments(_ fixture: CoreDataFixture, _ extra: [String] = []) -> [String] {
        ["import-coredata", "--model", fixture.bundle.path, "--store", fixture.store.path, "--out", fixture.out.path] + extra
    }

    @Test("imports, prints counts per entity and draws progress on stderr")
    func text() throws {
        let fixture = try CoreDataImportBadInputTests.library()
        let result = try StratactlProcess.run(Self.arguments(fixture))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Imported \(fixture.store.path) into \(fixture.out.path)\n"))
        #expect(result.stdout.contains("Core Data store \(CoreDataFixture.storeUUID), version identifiers: v2\n"))
        #expect(result.stdout.contains("Version: Library 2 (the only version with the store's layout)\n"))
        #expect(result.stdout.contains("  ENTITY    OBJECTS\n  Author    2\n  Book      3\n  Magazine  1\n  Tag       2\n  links of Item.tags: 3"), "\(result.stdout)")
        #expect(result.stderr.contains("100% done"), "a progress line per step when stderr is not a terminal: \(result.stderr)")
        #expect(try PersistentStore.metadata(at: fixture.out).modelVersion == "Library 2")
    }

    @Test("--json prints the report; --quiet draws no progress")
    func json() throws {
        let fixture = try CoreDataImportBadInputTests.library()
        let result = try StratactlProcess.run(Self.arguments(fixture, ["--json", "--quiet"]))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["importedVersion"] as? String == "Library 2")
        #expect(object["method"] as? String == "layout")
        #expect(object["coreDataStoreUUID"] as? String == CoreDataFixture.storeUUID)
        #expect(object["objects"] as? [String: Int] == ["Author": 2, "Book": 3, "Magazine": 1, "Tag": 2])
        #expect(object["links"] as? [String: Int] == ["Item.tags": 3])
        #expect(object["warnings"] as? [String] == [])
    }

    @Test("--to with --stages migrates after the import")
    func migrateWithStages() throws {
        let fixture = try CoreDataImportBadInputTests.library()
        let stages = fixture.directory.file("stages.yaml")
        try "stages:\n  - {label: rank, from: Library 2, to: Library 3, didMigrate: \"UPDATE \\\"Author\\\" SET \\\"rank\\\" = 1;\"}\n"
            .write(to: stages, atomically: true, encoding: .utf8)
        let result = try StratactlProcess.run(Self.arguments(fixture, ["--to", "Library 3", "--stages", stages.path, "--quiet"]))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Migrated: Library 2 -> Library 3 (1 hop(s))"))
        #expect(try PersistentStore.metadata(at: fixture.out).modelVersion == "Library 3")
    }

    /// A bad input, how to make it, and its exit status.
    struct BadInput: Sendable, CustomTestStringConvertible {
        var name: String
        var status: Int32
        var message: String
        var extra: [String] = []
        var make: @Sendable (CoreDataFixture) throws -> Void
        var testDescription: String { name }
    }

    static let badInputs: [BadInput] = [
        BadInput(name: "not SQLite", status: 10, message: "not an SQLite database") { try Data(repeating: 0x41, count: 200).write(to: $0.store) },
        BadInput(name: "not a Core Data store", status: 11, message: "not a Core Data store") { fixture in
            try FileManager.default.removeItem(at: fixture.store)
            let queue = try DatabaseQueue(path: fixture.store.path)
            try queue.write { try $0.execute(sql: "CREATE TABLE t (x)") }
            try queue.close()
        },
        BadInput(name: "corrupt Z_METADATA", status: 11, message: "Z_METADATA.Z_PLIST") { try CoreDataFixture.writeStore(at: $0.store, metadata: Data("garbage".utf8)) },
        BadInput(name: "version not in the bundle", status: 12, message: "no version of Library.xcdatamodeld has the store's layout") {
            try FileManager.default.removeItem(at: $0.bundle.appending(path: "Library 2.xcdatamodel"))
        },
        BadInput(name: "bundle that does not parse", status: 13, message: "the model bundle cannot be read") { try Data("x".utf8).write(to: $0.bundle.appending(path: ".xccurrentversion")) },
        BadInput(name: "destination exists", status: 14, message: "already exists") { try Data("keep".utf8).write(to: $0.out) },
        BadInput(name: "missing external file", status: 1, message: "object Z_PK 2, property 'cover'") {
            try FileManager.default.removeItem(at: $0.supportDirectory.appending(path: CoreDataFixture.externalName))
        },
        BadInput(name: "a refused migration", status: 3, message: "2 existing 'Author' objects would have no value for non-optional 'rank'", extra: ["--to", "Library 3"]) { _ in },
        BadInput(name: "unknown --to version", status: 2, message: "--to 'Library 9' is not a version", extra: ["--to", "Library 9"]) { _ in },
        BadInput(name: "--stages without --to", status: 2, message: "--stages needs --to", extra: ["--stages", "x.yaml"]) { _ in },
    ]

    @Test("each bad input has its own exit status and message; nothing is written, the original is untouched", arguments: badInputs)
    func badInput(_ bad: BadInput) throws {
        let fixture = try CoreDataImportBadInputTests.library()
        try bad.make(fixture)
        let before = try fixture.fingerprint()
        let outBefore = fixture.outputListing()
        let outBytes = try? Data(contentsOf: fixture.out)
        let result = try StratactlProcess.run(Self.arguments(fixture, bad.extra + ["--quiet"]))
        #expect(result.status == bad.status, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains(bad.message), "\(result.stderr)")
        #expect(try fixture.fingerprint() == before)
        #expect(fixture.outputListing() == outBefore)
        #expect((try? Data(contentsOf: fixture.out)) == outBytes)
    }

    // MARK: - Bundles and plans

    @Test("model checksum reports a broken version for itself and prints the others")
    func checksumBrokenVersion() throws {
        let fixture = CoreDataFixture()
        let url = try CoreDataFixture.appBundle(count: 3, current: 3, broken: [2], in: fixture)
        let result = try StratactlProcess.run(["model", "checksum", url.path])
        #expect(result.status == 1)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("App\t"))
        #expect(lines[1] == "App 2\t-\tunreadable")
        #expect(lines[2].hasPrefix("App 3\t") && lines[2].hasSuffix("\tcurrent"))
        #expect(result.stderr.contains("version 'App 2'"), "\(result.stderr)")
    }

    @Test("model checksum of a bundle with Transformable attributes succeeds")
    func checksumTransformable() throws {
        let fixture = CoreDataFixture()
        let url = try CoreDataFixture.appBundle(count: 2, current: 2, in: fixture)
        let result = try StratactlProcess.run(["model", "checksum", "--json", url.path])
        #expect(result.status == 0, "\(result.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        #expect(rows.map { $0["version"] as? String } == ["App", "App 2"])
        #expect(rows.last?["current"] as? Bool == true)
    }

    @Test("migrate refuses a path through a version that cannot be read")
    func migrateThroughBrokenVersion() throws {
        let fixture = CoreDataFixture()
        let url = try CoreDataFixture.appBundle(count: 3, current: 3, broken: [2], in: fixture)
        let store = fixture.directory.file("app.sqlite")
        try PersistentStore.open(at: store, model: try ModelDirectory(url: url).version(named: "App")!).close()
        let result = try StratactlProcess.run(["migrate", store.path, "--model", url.path, "--to", "App 3", "--quiet"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("passes version 'App 2', which cannot be read"), "\(result.stderr)")
        #expect(try PersistentStore.metadata(at: store).modelVersion == "App")
    }

    @Test("plan marks steps that discard data with how many values they drop, and requirements with how many objects break them")
    func planCounts() throws {
        let temp = TemporaryStore()
        try MigrationSafetyTests.seededStore(temp)
        let v2 = MigrationTestModels.model("Aircraft 2", [
            MigrationTestModels.aircraft(attributes: [Attribute("tailNumber", .string, isOptional: false), Attribute("seats", .int16), Attribute("serial", .string, isOptional: false)]),
            MigrationTestModels.owner(),
        ])
        let file = temp.directory.file("Aircraft 2.json")
        try ModelFile.encode(v2, format: .json).write(to: file)
        let result = try StratactlProcess.run(["plan", temp.url.path, "--to", file.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("            DISCARDS 1 non-null value of attribute Aircraft.photo\n"), "\(result.stdout)")
        #expect(result.stdout.contains("  REQUIRES  existing objects: 'Aircraft.serial': a value is required (add non-optional attribute) — 3 stored object(s) do not"), "\(result.stdout)")
        let offline = try StratactlProcess.run(["plan", "--from", temp.directory.file("Aircraft 2.json").path, "--to", temp.directory.file("Aircraft 2.json").path])
        #expect(offline.status == 0)
        let json = try StratactlProcess.run(["plan", temp.url.path, "--to", file.path, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let discards = (object["operations"] as? [[String: Any]] ?? []).compactMap { $0["discards"] as? [[String: Any]] }.flatMap { $0 }
        #expect(discards.map { $0["what"] as? String } == ["attribute Aircraft.photo"])
        #expect(discards.first?["nonNullValues"] as? Int == 1)
        #expect((object["requirements"] as? [[String: Any]])?.first?["violatingObjects"] as? Int == 3)
    }

    @Test("plan without a store names what a step discards")
    func planWithoutStore() throws {
        let temp = TemporaryDirectory("plan")
        let v1 = temp.file("v1.json"), v2 = temp.file("v2.json")
        try ModelFile.encode(MigrationTestModels.base, format: .json).write(to: v1)
        try ModelFile.encode(MigrationTestModels.model("Aircraft 2", [MigrationTestModels.aircraft(relationships: []), Entity("Owner", attributes: [Attribute("nickname", .string)])]), format: .json).write(to: v2)
        let result = try StratactlProcess.run(["plan", "--from", v1.path, "--to", v2.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("DISCARDS the values of attribute Owner.name"), "\(result.stdout)")
        #expect(result.stdout.contains("DISCARDS the values of to-one relationship Aircraft.owner"), "\(result.stdout)")
    }
}
