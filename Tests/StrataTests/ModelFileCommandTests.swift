import Foundation
import Testing
@testable import Strata

/// `stratactl model …` run as a process: output formats, exit codes, stderr.
///
/// `swift build` / `swift test` build `stratactl` next to the test bundle; when it is not
/// there (a test-only build), these tests are skipped, never passed.
@Suite("stratactl model", .enabled(if: StratactlProcess.executable != nil, "stratactl is not built"))
struct ModelFileCommandTests {
    @Test("checksum prints each version of a directory, marking the current one")
    func checksumDirectory() throws {
        let result = try StratactlProcess.run(["model", "checksum", ModelFileFixtures.configModels.appending(path: "Post").path])
        #expect(result.status == 0)
        #expect(result.stdout == """
            Post 1\tr8L8ZCwJGa41LM/9QhJASKJO1S6V1t6FgJubVOjCNF0=
            Post 2\txJ/LIaQFOleaS7HIHetWjozxTaURSfPx15lIGFgaYAA=
            Post 3\tH/2wrf2XxccdjHTLHo07lWvYWUAWj9sCXVA8Q1VfkSQ=
            Post 4\tndS1taoGb1crvjmWFHtyU1j+SQdqxzMt0OkGdM2qOZw=\tcurrent

            """)
        #expect(result.stderr.isEmpty)
    }

    @Test("checksum --json prints version, checksum and entity hashes")
    func checksumJSON() throws {
        let result = try StratactlProcess.run(["model", "checksum", "--json", ModelFileFixtures.fixture("Aircraft.xcdatamodeld").path])
        #expect(result.status == 0)
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        #expect(rows.map { $0["version"] as? String } == ["Aircraft 1", "Aircraft 2", "Aircraft 3"])
        #expect(rows.first?["checksum"] as? String == "t9H8hv/roRwesKvzB7dKlWa5vVS1R+2RjxdXQNUnG2M=")
        #expect((rows.last?["entityHashes"] as? [String: String])?.keys.sorted() == ["Aircraft", "FlightData"])
    }

    @Test("checksum of a missing path fails with the error on stderr")
    func checksumMissing() throws {
        let result = try StratactlProcess.run(["model", "checksum", "/nonexistent/Model.yaml"])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "stratactl: /nonexistent/Model.yaml: no such file or directory\n")
    }

    @Test("validate says valid and exits 0", arguments: ["config/models/Aircraft", "config/models/Post/Post 3.json", "Tests/StrataTests/Fixtures/models/Library.xcdatamodel"])
    func validateValid(path: String) throws {
        let result = try StratactlProcess.run(["model", "validate", ModelFileFixtures.packageRoot.appending(path: path).path])
        #expect(result.status == 0)
        #expect(result.stdout == "valid\n")
    }

    @Test("validate lists every problem and exits 1")
    func validateInvalid() throws {
        let dir = try TemporaryModelDirectory()
        try dir.write("V1.yaml", "version: V1\nentities:\n  - name: A\n    parent: Z\n    attributes: [{name: x, type: int16, default: 99999}]\n")
        let file = dir.url.appending(path: "V1.yaml").path
        let text = try StratactlProcess.run(["model", "validate", file])
        #expect(text.status == 1)
        #expect(text.stdout.contains("invalidDefault: \(file): version 'V1', entity 'A', property 'x'"))
        #expect(text.stdout.contains("unknownParent: \(file): version 'V1', entity 'A': parent entity 'Z' does not exist"))
        #expect(text.stdout.hasSuffix("2 problems found\n"))

        let json = try StratactlProcess.run(["model", "validate", "--json", file])
        #expect(json.status == 1)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(report["valid"] as? Bool == false)
        let errors = try #require(report["errors"] as? [[String: Any]])
        #expect(errors.map { $0["code"] as? String } == ["invalidDefault", "unknownParent"])
        #expect(errors.first?["property"] as? String == "x")
    }

    @Test("convert writes a model file that decodes to the same checksum")
    func convert() throws {
        let result = try StratactlProcess.run(["model", "convert", "--to", "json", "--version", "Aircraft 2", ModelFileFixtures.fixture("Aircraft.xcdatamodeld").path])
        #expect(result.status == 0)
        let model = try ModelFile.decode(Data(result.stdout.utf8), format: .json)
        #expect(model.version == "Aircraft 2")
        #expect(model.checksum == "UhqJ8O5nIeVQLR2zM4V7O7xeVEg3Q9GYWwNDh33PGdg=")

        let unknown = try StratactlProcess.run(["model", "convert", "--version", "Aircraft 9", ModelFileFixtures.fixture("Aircraft.xcdatamodeld").path])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no version 'Aircraft 9'; the versions are Aircraft 1, Aircraft 2, Aircraft 3"))
    }
}

enum StratactlProcess {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The `stratactl` built with the tests, if any.
    static let executable: URL? = {
        var candidates: [URL] = []
        if let bundle = Bundle.allBundles.first(where: { $0.bundlePath.hasSuffix(".xctest") }) {
            candidates.append(bundle.bundleURL.deletingLastPathComponent().appending(path: "stratactl"))
        }
        candidates.append(URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent().appending(path: "stratactl"))
        candidates.append(ModelFileFixtures.packageRoot.appending(path: ".build/debug/stratactl"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// `stratactl` was not found next to the tests nor in .build/debug.
    struct CommandNotBuilt: Error, CustomStringConvertible {
        var description: String { "stratactl is not built; run `swift build` first" }
    }

    static func run(_ arguments: [String]) throws -> Result {
        let process = Process()
        guard let executable else { throw CommandNotBuilt() }
        process.executableURL = executable
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self))
    }
}
