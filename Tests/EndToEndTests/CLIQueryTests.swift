import Foundation
import Testing

@Suite("stratactl fetch and count", .timeLimit(.minutes(10)))
struct CLIQueryTests {
    // MARK: - fetch

    @Test func fetchPrintsAnAlignedTable() throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        let result = try CLIFixture.stratactl("fetch", fixture.store, "Aircraft", "--where", "colorScheme.primary == %@", "--arg", "red",
                                              "--sort", "tailNumber:desc")
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(result)")
        let header = lines[0].split(separator: " ").map(String.init)
        #expect(header == ["_pk", "tailNumber", "aircraftType", "aircraftCategory", "aircraftClass", "photo",
                           "colorScheme.primary", "colorScheme.secondary", "colorScheme.tertiary"])
        #expect(lines[1].split(separator: " ").prefix(3) == ["3", "N12345", "B737"])
        #expect(lines[2].split(separator: " ").prefix(3) == ["1", "F-GSPT", "A320"])
        #expect(lines[3] == "(2 objects)")
        // Columns are aligned: every value of a column starts at the same offset.
        let column = try #require(lines[0].range(of: "colorScheme.primary")).lowerBound.utf16Offset(in: lines[0])
        for line in lines[1...2] {
            #expect(line.dropFirst(column).hasPrefix("red "), "\(line)")
        }
    }

    @Test func fetchJSONNestsCompositesAndHonoursSortLimitOffset() throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        let result = try CLIFixture.stratactl("fetch", fixture.store, "Aircraft", "--sort", "colorScheme.primary", "--sort", "tailNumber:desc",
                                              "--limit", "3", "--offset", "1", "--json")
        #expect(result.status == 0, "\(result)")
        let objects = try #require(try CLIFixture.json(result.stdout) as? [[String: Any]])
        #expect(objects.map { $0["tailNumber"] as? String } == ["D-AIZZ", "G-EUPT", "N12345"])
        let first = objects[0]
        #expect(first["_entity"] as? String == "Aircraft")
        #expect(first["_pk"] as? Int == 5)
        #expect(first["colorScheme.primary"] == nil)
        let colors = try #require(first["colorScheme"] as? [String: Any])
        #expect(colors["primary"] as? String == "blue")
        #expect(colors["secondary"] as? String == "grey")
        #expect(colors["tertiary"] is NSNull)
    }

    @Test func fetchWithNoMatchesPrintsAnEmptyResult() throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        let text = try CLIFixture.stratactl("fetch", fixture.store, "Aircraft", "--where", "tailNumber BEGINSWITH %@", "--arg", "Z")
        #expect(text.status == 0, "\(text)")
        #expect(text.stdout.hasSuffix("(0 objects)\n"))
        let json = try CLIFixture.stratactl("fetch", fixture.store, "Aircraft", "--where", "tailNumber BEGINSWITH %@", "--arg", "Z", "--json")
        #expect((try CLIFixture.json(json.stdout) as? [Any])?.isEmpty == true)
    }

    // MARK: - count and --arg values

    @Test func countPrintsTheNumber() throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        let all = try CLIFixture.stratactl("count", fixture.store, "Aircraft")
        #expect(all.status == 0, "\(all)")
        #expect(all.stdout == "5\n")
        let red = try CLIFixture.stratactl("count", fixture.store, "Aircraft", "--where", "colorScheme.primary == %@", "--arg", "red", "--json")
        let json = try #require(try CLIFixture.json(red.stdout) as? [String: Any])
        #expect(json["count"] as? Int == 2)
        #expect(json["entity"] as? String == "Aircraft")
    }

    @Test(arguments: [
        ("colorScheme.tertiary == %@", ["null"], 3),
        ("tailNumber == %@", ["\"F-GSPT\""], 1),
        ("tailNumber == %@", ["F-GSPT"], 1),
        ("aircraftType IN {%@, %@}", ["A320", "B737"], 3),
        ("%K == %@", ["colorScheme.secondary", "white"], 2),
    ])
    func argValuesAreParsed(format: String, values: [String], expected: Int) throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        let result = try BuiltBinary.run("stratactl", ["count", fixture.store, "Aircraft", "--where", format] + values.flatMap { ["--arg", $0] })
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "\(expected)\n", "\(result)")
    }

    // MARK: - Errors

    @Test func badPredicateShowsCaretAndExits2() throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        let result = try CLIFixture.stratactl("fetch", fixture.store, "Aircraft", "--where", "colorScheme.primary == ")
        #expect(result.status == 2, "\(result)")
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0].hasPrefix("stratactl: "), "\(result)")
        #expect(lines[0].contains("(at offset 23)"), "\(result)")
        #expect(lines[1] == "    colorScheme.primary == ")
        #expect(lines[2] == "    " + String(repeating: " ", count: 23) + "^")
    }

    @Test func unknownKeyPathNamesItWithCaret() throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        let result = try CLIFixture.stratactl("count", fixture.store, "Aircraft", "--where", "colorScheme.primry == %@", "--arg", "red")
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("primry"), "\(result)")
        #expect(result.stderr.contains("^"), "\(result)")
        let sort = try CLIFixture.stratactl("fetch", fixture.store, "Aircraft", "--sort", "tailNumbr")
        #expect(sort.status == 2, "\(sort)")
        #expect(sort.stderr.contains("tailNumbr"), "\(sort)")
    }

    @Test(arguments: ["fetch", "count"])
    func unknownEntitySuggestsNames(command: String) throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        let result = try CLIFixture.stratactl(command, fixture.store, "Aircrft")
        #expect(result.status == 2, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "stratactl: the model has no entity 'Aircrft'; did you mean 'Aircraft'?\n", "\(result)")
    }

    @Test(arguments: [
        (["--limit=-1"], "--limit must not be negative"),
        (["--offset=-3"], "--offset must not be negative"),
        (["--arg", "red"], "--arg given without --where"),
        (["--sort", "tailNumber:sideways"], "unknown sort option"),
        (["--limit", "abc"], "The value 'abc' is invalid for '--limit <limit>'"),
        (["--no-such-option"], "Unknown option '--no-such-option'"),
    ])
    func badOptionValuesExit2(options: [String], message: String) throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        let result = try BuiltBinary.run("stratactl", ["fetch", fixture.store, "Aircraft"] + options)
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains(message), "\(result)")
    }

    @Test(arguments: ["fetch", "count"])
    func missingAndForeignFilesExit1(command: String) throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        let missing = try CLIFixture.stratactl(command, fixture.path("nope.sqlite"), "Aircraft")
        #expect(missing.status == 1, "\(missing)")
        #expect(missing.stderr.contains("the store does not exist"), "\(missing)")
        #expect(!FileManager.default.fileExists(atPath: fixture.path("nope.sqlite")))
        let text = fixture.file("notes.txt", Data("just some text that is long enough to be a header, surely\n".utf8))
        let foreign = try CLIFixture.stratactl(command, text, "Aircraft")
        #expect(foreign.status == 1, "\(foreign)")
        #expect(foreign.stderr.contains("not an SQLite database"), "\(foreign)")
    }

    // MARK: - import

    @Test func fetchJSONImportsIntoANewStore() throws {
        let fixture = try CLIFixture()
        defer { fixture.remove() }
        let exported = try CLIFixture.stratactl("fetch", fixture.store, "Aircraft", "--json")
        let copy = fixture.path("copy.sqlite")
        let model = BuiltBinary.packageRoot.appending(path: "config/models/Aircraft").path
        let imported = try CLIFixture.stratactl("import", copy, "--model", model, "-", stdin: Data(exported.stdout.utf8))
        #expect(imported.status == 0, "\(imported)")
        #expect(imported.stdout.contains("imported 5 Aircraft"), "\(imported)")
        let again = try CLIFixture.stratactl("fetch", copy, "Aircraft", "--json")
        #expect(again.stdout == exported.stdout)
        // A store of another version is refused with exit status 3.
        let older = try CLIFixture.stratactl("import", copy, "--model", model, "--version", "Aircraft 1", "-", stdin: Data(exported.stdout.utf8))
        #expect(older.status == 3, "\(older)")
        #expect(older.stderr.contains("Aircraft 3"), "\(older)")
    }
}
