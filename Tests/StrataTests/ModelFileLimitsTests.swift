import Foundation
import Testing
@testable import Strata

/// Model files from outside cannot hang or crash a reader: alias bombs, deep nesting, huge
/// files and FIFOs are refused up front with an error naming the file and the limit.
@Suite("Model files: limits")
struct ModelFileLimitsTests {
    /// Nine levels of ten aliases each: 10^9 nodes once expanded, 1 KB of text.
    static let aliasBomb: String = {
        var text = "version: V1\nentities:\n  - name: A\n    userInfo:\n      a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for level in 1...9 {
            text += "      a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ") + "]\n"
        }
        return text
    }()

    @Test("A YAML alias bomb is refused before it is expanded")
    func aliasBombIsRefused() throws {
        #expect(Self.aliasBomb.utf8.count < 2000)
        let error = try #require(throws: ModelError.self) {
            try ModelFile.decode(Data(Self.aliasBomb.utf8), format: .yaml, file: "bomb.yaml")
        }
        #expect(error.code == .invalidFile)
        #expect(error.description.contains("bomb.yaml"))
        #expect(error.description.contains("alias"))
        #expect(error.description.contains("1000000 nodes"))
        #expect(error.description.contains("line "))
    }

    @Test("An alias bomb in a mapping key (hashed by the YAML composer) is refused too")
    func aliasBombInKeysIsRefused() throws {
        var text = "a0: &a0 {k: [x, x, x, x, x, x, x, x, x, x]}\n"
        for level in 1...9 {
            text += "a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ") + "]\n"
        }
        text += "? *a9\n: value\n"
        #expect(throws: ModelError.self) { try ModelFile.decode(Data(text.utf8), format: .yaml) }
    }

    @Test("Aliases of ordinary size still work", arguments: [10, 1000])
    func ordinaryAliasesWork(count: Int) throws {
        let uses = (0..<count).map { "      k\($0): *shared" }.joined(separator: "\n")
        let text = "version: V1\nentities:\n  - name: A\n    attributes: [{name: x, type: string}]\n    userInfo:\n      shared: &shared value\n\(uses)\n"
        let model = try ModelFile.decode(Data(text.utf8), format: .yaml)
        #expect(model.entities[0].userInfo["k0"] == "value")
        #expect(model.entities[0].userInfo.count == count + 1)
    }

    @Test("Nesting past the limit is refused (YAML flow, YAML block and JSON)", arguments: [
        (ModelFileFormat.yaml, String(repeating: "[", count: 100_000)),
        (.yaml, (0..<300).map { String(repeating: "  ", count: $0) + "k:" }.joined(separator: "\n") + " v\n"),
        (.json, String(repeating: "[", count: 100_000)),
    ])
    func deepNestingIsRefused(format: ModelFileFormat, text: String) throws {
        let error = try #require(throws: ModelError.self) { try ModelFile.decode(Data(text.utf8), format: format, file: "deep") }
        #expect(error.code == .invalidFile)
        #expect(error.description.contains("nest"), "\(error)")
    }

    @Test("A model file larger than ModelFile.maxFileSize is refused without reading it")
    func hugeFileIsRefused() throws {
        let directory = TemporaryDirectory("model-limits")
        let url = directory.file("Huge.yaml")
        #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
        // A sparse file: its size is what counts, no need to write 16 MiB.
        #expect(truncate(url.path, off_t(ModelFile.maxFileSize + 1)) == 0)
        let error = try #require(throws: ModelError.self) { try ModelFile.load(contentsOf: url) }
        #expect(error.code == .unreadableFile)
        #expect(error.description.contains(url.path))
        #expect(error.description.contains("ModelFile.maxFileSize"))
    }

    @Test("A FIFO given as a model file, manifest or Core Data contents is refused without blocking")
    func fifoIsRefused() throws {
        let directory = TemporaryDirectory("model-fifo")
        let file = directory.file("V1.yaml")
        #expect(mkfifo(file.path, 0o600) == 0)
        let error = try #require(throws: ModelError.self) { try ModelFile.load(contentsOf: file) }
        #expect(error.code == .unreadableFile)
        #expect(error.description.contains("FIFO"))

        let models = directory.file("models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        #expect(mkfifo(models.appending(path: "versions.yaml").path, 0o600) == 0)
        let manifestError = try #require(throws: ModelError.self) { try ModelDirectory(url: models) }
        #expect(manifestError.description.contains("FIFO"))

        let bundle = directory.file("M.xcdatamodel")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        #expect(mkfifo(bundle.appending(path: "contents").path, 0o600) == 0)
        let coreDataError = try #require(throws: ModelError.self) { try ModelFile.load(contentsOf: bundle) }
        #expect(coreDataError.description.contains("FIFO"))
    }

    @Test("Core Data contents nested 100,000 elements deep are refused (the tree's destruction overflowed the stack)")
    func deepCoreDataContentsAreRefused() throws {
        let directory = TemporaryDirectory("coredata-deep")
        let version = directory.file("Deep.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        let xml = "<?xml version=\"1.0\"?>\n<model>" + String(repeating: "<entity name=\"A\">", count: 100_000)
            + String(repeating: "</entity>", count: 100_000) + "</model>"
        try Data(xml.utf8).write(to: version.appending(path: "contents"))
        let error = try #require(throws: ModelError.self) { try ModelFile.load(contentsOf: version) }
        #expect(error.code == .invalidFile)
        #expect(error.description.contains("nested more than 200 levels"), "\(error)")
    }

    @Test("Core Data contents with invalid UTF-8 in a tag are refused (XMLParser trapped on them; found by fuzzing)")
    func invalidUTF8CoreDataContentsAreRefused() throws {
        let directory = TemporaryDirectory("coredata-utf8")
        let version = directory.file("Bad.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        var xml = Data("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<model><entity name=\"A\"><attribute name=\"x\" optional=\"YES\"".utf8)
        let offset = xml.count
        xml.append(0x83)
        xml.append(contentsOf: Data("attributeType=\"String\"/></entity></model>\n".utf8))
        try xml.write(to: version.appending(path: "contents"))
        let error = try #require(throws: ModelError.self) { try ModelFile.load(contentsOf: version) }
        #expect(error.code == .invalidFile)
        #expect(error.description.contains("not valid UTF-8 (at byte offset \(offset))"), "\(error)")
    }

    @Test("A processing instruction without data is refused (XMLParser crashed on it; found by fuzzing)")
    func processingInstructionIsRefused() throws {
        let directory = TemporaryDirectory("coredata-pi")
        let version = directory.file("PI.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        let xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<model><?xm?><entity name=\"A\"/></model>\n"
        try Data(xml.utf8).write(to: version.appending(path: "contents"))
        let error = try #require(throws: ModelError.self) { try ModelFile.load(contentsOf: version) }
        #expect(error.code == .invalidFile)
        #expect(error.description.contains("processing instructions (<?…?>) are not part of a Core Data model (at byte offset 46)"), "\(error)")
        // One whose name only starts like the declaration (found by fuzzing too).
        try Data("<?xmli?><model/>".utf8).write(to: version.appending(path: "contents"))
        let declarationLike = try #require(throws: ModelError.self) { try ModelFile.load(contentsOf: version) }
        #expect(declarationLike.description.contains("(at byte offset 0)"), "\(declarationLike)")
        // The XML declaration alone is fine.
        try Data("<?xml version=\"1.0\"?>\n<model><entity name=\"A\"><attribute name=\"x\" attributeType=\"String\"/></entity></model>\n".utf8)
            .write(to: version.appending(path: "contents"))
        #expect(try ModelFile.load(contentsOf: version).entities.map(\.name) == ["A"])
    }

    @Test("An XML entity-expansion bomb in Core Data contents is refused")
    func coreDataEntityBombIsRefused() throws {
        let directory = TemporaryDirectory("coredata-bomb")
        let version = directory.file("Bomb.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        var xml = "<?xml version=\"1.0\"?>\n<!DOCTYPE model [\n<!ENTITY a0 \"lol\">\n"
        for level in 1...9 { xml += "<!ENTITY a\(level) \"" + String(repeating: "&a\(level - 1);", count: 10) + "\">\n" }
        xml += "]>\n<model><entity name=\"A\"><attribute name=\"x\" attributeType=\"String\" defaultValueString=\"&a9;\"/></entity></model>\n"
        try Data(xml.utf8).write(to: version.appending(path: "contents"))
        let error = try #require(throws: ModelError.self) { try ModelFile.load(contentsOf: version) }
        #expect(error.code == .invalidFile)
        #expect(error.description.contains("invalid XML"), "\(error)")
    }

    @Test("A model of 400 entities with relationships and indexes loads and validates")
    func largeModelLoads() throws {
        // Loading was cubic in the entity count (20 s for 400); the benchmark
        // `strata-bench limits` measures the scaling, this test checks the result.
        var lines = ["version: Big 1", "entities:"]
        let count = 400
        for i in 0..<count {
            lines += [
                "  - name: E\(i)",
                "    attributes: [{name: a, type: string}, {name: b, type: int64}]",
                "    relationships:",
                "      - {name: next, destination: E\((i + 1) % count), inverse: previous}",
                "      - {name: previous, destination: E\((i + count - 1) % count), inverse: next, toMany: true}",
                "    indexes: [{name: byA, elements: [a]}]",
            ]
        }
        let model = try ModelFile.decode(Data(lines.joined(separator: "\n").utf8), format: .yaml)
        #expect(model.entities.count == count)
        #expect(model.validationErrors().isEmpty)
        let layout = StorageLayout(model: model)
        #expect(layout.tables.count == count)
        #expect(layout.entity("E399")?.relationships["next"] == .foreignKey(column: "next_id", destinationTable: "E0"))
    }
}
