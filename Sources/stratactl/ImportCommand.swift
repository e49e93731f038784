import ArgumentParser
import Foundation
import Logging
import Strata

/// `stratactl import STORE --model PATH [--version V] [--entity E] JSONFILE`
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Insert objects from a JSON file into a store, creating the store if needed.",
        discussion: """
            JSONFILE holds JSON lines (one object per line) or one JSON array of objects; "-" \
            reads standard input. Each object names its entity in "_entity" (or --entity gives \
            it) and sets attributes by name, composites as nested objects \
            ({"colorScheme": {"primary": "red"}}); dates are ISO 8601 text or seconds since \
            1970, data is base64. Keys starting with "_" and relationship names are ignored, \
            so `stratactl fetch --json` output imports back.

            The store is created with the model version if it does not exist; an existing \
            store must have been written with exactly that version (exit 3 otherwise). Objects \
            are saved in batches (--batch-size, one transaction each); a failing object stops \
            the import, naming its line, after the batches already saved.

            Examples:
              stratactl import var/aircraft.sqlite --model config/models/Aircraft --entity Aircraft aircraft.jsonl
              stratactl fetch old.sqlite Aircraft --json | stratactl import new.sqlite --model Aircraft.yaml -
            """
    )

    @Argument(help: "The store file (created if missing).", completion: .file())
    var store: String

    @Option(name: .long, help: "A model file or a model directory.", completion: .file())
    var model: String

    @Option(name: .long, help: "The model version to use (default: the directory's current version).")
    var version: String?

    @Option(name: .long, help: "The entity of objects without an \"_entity\" key.")
    var entity: String?

    @Option(name: .long, help: "Objects per save (one transaction each).")
    var batchSize: Int = 1000

    @Argument(help: "JSON lines or a JSON array; - for standard input.", completion: .file())
    var file: String

    @OptionGroup var output: OutputOptions

    struct Result: Encodable {
        var store: String
        var modelVersion: String
        var inserted: [String: Int]
    }

    func run() throws {
        let result = try ExitStatus.reporting { () throws -> Result in
            guard batchSize > 0 else { throw UsageError("--batch-size must be positive (got \(batchSize))") }
            let objectModel = try loadModel()
            let records = try readRecords()
            var logger = Logger(label: "io.strata.stratactl")
            logger.logLevel = .warning
            let persistentStore = try PersistentStore.open(at: URL(filePath: store), model: objectModel, options: StoreOptions(logger: logger))
            defer { try? persistentStore.close() }
            let context = ObjectContext(store: persistentStore)
            var inserted: [String: Int] = [:]
            var pending = 0
            for (line, record) in records {
                guard let name = record["_entity"] as? String ?? entity else {
                    throw UsageError("\(file):\(line): the object has no \"_entity\" key; add one or pass --entity")
                }
                do {
                    let object = try context.insert(name)
                    try object.setValues(fromJSON: record)
                } catch {
                    throw LineError(file: file, line: line, underlying: error)
                }
                inserted[name, default: 0] += 1
                pending += 1
                if pending == batchSize {
                    try save(context, upTo: line)
                    pending = 0
                }
            }
            if pending > 0 { try save(context, upTo: records.last?.line ?? 0) }
            return Result(store: store, modelVersion: objectModel.version, inserted: inserted)
        }
        if output.json {
            try JSONOutput.print(result)
        } else {
            let parts = result.inserted.keys.sorted().map { "\(result.inserted[$0]!) \($0)" }
            print("imported \(parts.isEmpty ? "nothing" : parts.joined(separator: ", ")) into \(store) (model \(result.modelVersion))")
        }
    }

    private func save(_ context: ObjectContext, upTo line: Int) throws {
        do {
            try context.save()
            context.reset()
        } catch {
            throw LineError(file: file, line: line, underlying: error, inBatchEnding: true)
        }
    }

    private func loadModel() throws -> ObjectModel {
        let url = URL(filePath: model)
        if ModelPath.isDirectoryOfVersions(url) {
            let directory = try ModelDirectory(url: url)
            guard let version else { return directory.current }
            guard let found = directory.version(named: version) else {
                throw UsageError("\(model): no version '\(version)'; the versions are \(directory.versions.map(\.version).joined(separator: ", "))")
            }
            return found
        }
        let loaded = try ModelFile.load(contentsOf: url)
        if let version, version != loaded.version {
            throw UsageError("\(model) holds version '\(loaded.version)', not '\(version)'")
        }
        return loaded
    }

    /// The objects of the input with their line numbers (1 for every element of an array).
    private func readRecords() throws -> [(line: Int, record: [String: Any])] {
        let data: Data
        do {
            data = file == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(filePath: file))
        } catch {
            throw UsageError("cannot read \(file): \(error.localizedDescription)")
        }
        let text = String(decoding: data, as: UTF8.self)
        if text.drop(while: \.isWhitespace).first == "[" {
            guard let array = try? JSONSerialization.jsonObject(with: data) as? [Any] else {
                throw UsageError("\(file): not a valid JSON array")
            }
            return try array.enumerated().map { i, element in
                guard let object = element as? [String: Any] else { throw UsageError("\(file): element \(i) of the array is not an object") }
                return (1, object)
            }
        }
        var records: [(line: Int, record: [String: Any])] = []
        for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { continue }
            guard let object = (try? JSONSerialization.jsonObject(with: Data(trimmed.utf8))) as? [String: Any] else {
                throw UsageError("\(file):\(i + 1): not a JSON object")
            }
            records.append((i + 1, object))
        }
        return records
    }
}

/// An import error located in the input file.
struct LineError: Error, CustomStringConvertible {
    var file: String
    var line: Int
    var underlying: any Error
    var inBatchEnding = false

    var description: String {
        "\(file):\(line): \(inBatchEnding ? "saving the batch ending here failed: " : "")\(underlying)"
    }
}
