import Foundation
import Strata
import Testing

@Suite("stratactl inspect", .timeLimit(.minutes(10)))
struct CLIInspectTests {
    @Test func textShowsMetadataEntitiesAndFile() throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        let before = try Data(contentsOf: fixture.storeURL)
        let result = try CLIFixture.stratactl("inspect", fixture.store)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        let out = result.stdout
        let metadata = try PersistentStore.metadata(at: fixture.storeURL)
        #expect(out.contains("Identifier  \(metadata.storeIdentifier)"))
        #expect(out.contains("Model       Aircraft 3 (checksum \(fixture.model.checksum))"))
        #expect(out.contains("created"))
        #expect(out.contains("Deferred migration work: none pending"))
        #expect(out.range(of: #"Aircraft\s+Aircraft\s+5\n"#, options: .regularExpression) != nil, "\(out)")
        #expect(out.range(of: #"FlightData\s+FlightData\s+0\n"#, options: .regularExpression) != nil, "\(out)")
        #expect(out.contains("Journal mode  wal"))
        #expect(out.contains("Auto-vacuum   incremental"))
        #expect(!out.contains("Integrity"))
        // Read-only: the store file is byte for byte the same.
        #expect(try Data(contentsOf: fixture.storeURL) == before)
    }

    @Test func jsonHasEveryPart() throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        let result = try CLIFixture.stratactl("inspect", "--json", fixture.store)
        #expect(result.status == 0, "\(result)")
        let json = try #require(try CLIFixture.json(result.stdout) as? [String: Any])
        #expect(json["modelVersion"] as? String == "Aircraft 3")
        #expect(json["modelChecksum"] as? String == fixture.model.checksum)
        #expect((json["storeIdentifier"] as? String)?.count == 36)
        #expect((json["history"] as? [[String: Any]])?.first?["kind"] as? String == "created")
        #expect((json["deferred"] as? [Any])?.isEmpty == true)
        let entities = try #require(json["entities"] as? [[String: Any]])
        let aircraft = try #require(entities.first { $0["name"] as? String == "Aircraft" })
        #expect(aircraft["table"] as? String == "Aircraft")
        #expect(aircraft["objects"] as? Int == 5)
        let file = try #require(json["file"] as? [String: Any])
        #expect(file["journalMode"] as? String == "wal")
        #expect((file["pageCount"] as? Int ?? 0) > 0)
        #expect(file["pageSize"] as? Int == 4096)
        #expect(json["integrity"] == nil)
    }

    @Test func checkReportsIntegrity() throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        let text = try CLIFixture.stratactl("inspect", "--check", fixture.store)
        #expect(text.status == 0, "\(text)")
        #expect(text.stdout.contains("Integrity: ok"))
        let json = try CLIFixture.stratactl("inspect", "--check", "--json", fixture.store)
        let integrity = try #require((try CLIFixture.json(json.stdout) as? [String: Any])?["integrity"] as? [String: Any])
        #expect(integrity["ok"] as? Bool == true)
        #expect((integrity["problems"] as? [Any])?.isEmpty == true)
    }

    @Test func checkFindsCorruption() throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        // Scribble over the b-tree page of the Aircraft table's byPrimaryColor index.
        try CLICorruption.damageIndex("Aircraft_byPrimaryColor", of: fixture.storeURL)
        let result = try CLIFixture.stratactl("inspect", "--check", fixture.store)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.range(of: #"Integrity: \d+ problems? found"#, options: .regularExpression) != nil, "\(result)")
        #expect(result.stdout.contains("malformed") || result.stdout.contains("out of range"), "\(result)")
        // A fetch through the damaged index fails as corrupt, with advice.
        let fetch = try CLIFixture.stratactl("fetch", fixture.store, "Aircraft", "--where", "colorScheme.primary == %@", "--arg", "red")
        #expect(fetch.status == 1, "\(fetch)")
        #expect(fetch.stderr.contains("corrupt"), "\(fetch)")
        #expect(fetch.stderr.contains("stratactl inspect --check"), "\(fetch)")
    }

    @Test(arguments: [
        ("missing.sqlite", nil, "the store does not exist"),
        ("notes.txt", Data("hello, not a database\n".utf8), "not an SQLite database"),
        ("empty.sqlite", Data(), "the store does not exist"),
    ] as [(String, Data?, String)])
    func refusesFilesThatAreNotStores(name: String, contents: Data?, message: String) throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        let path = contents.map { fixture.file(name, $0) } ?? fixture.path(name)
        let result = try CLIFixture.stratactl("inspect", path)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("stratactl: store \(path): "), "\(result)")
        #expect(result.stderr.contains(message), "\(result)")
        if let contents { #expect(try Data(contentsOf: URL(filePath: path)) == contents) }
    }

    @Test func refusesSQLiteDatabaseThatIsNotAStore() throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        let path = try CLICorruption.plainSQLiteDatabase(in: fixture)
        let result = try CLIFixture.stratactl("inspect", path)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("not a Strata store"), "\(result)")
        #expect(result.stderr.contains("pilots"), "\(result)")
    }
}
