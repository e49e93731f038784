import Foundation

/// The syntax of a model file.
public enum ModelFileFormat: String, Sendable, CaseIterable {
    case json
    case yaml

    /// The format a file name's extension denotes: `.json`, `.yaml` or `.yml`.
    public init?(pathExtension: String) {
        switch pathExtension.lowercased() {
        case "json": self = .json
        case "yaml", "yml": self = .yaml
        default: return nil
        }
    }
}

/// Reads and writes model files: one ``ObjectModel`` version per file, in JSON or YAML.
///
/// The format maps one to one to ``ObjectModel``; `docs/ModelFiles.md` describes every key.
///
/// ```yaml
/// version: Aircraft 1
/// nextVersion: Aircraft 2
/// entities:
///   - name: Aircraft
///     attributes:
///       - {name: tailNumber, type: string, optional: false}
///       - {name: photo, type: data}
///     composites:
///       - name: colorScheme
///         elements:
///           - {name: primary, type: string}
///     indexes:
///       - {name: byPrimaryColor, elements: [colorScheme.primary]}
/// ```
///
/// ```swift
/// let model = try ModelFile.load(contentsOf: URL(filePath: "config/models/Aircraft/Aircraft 1.yaml"))
/// let json = try ModelFile.encode(model, format: .json)
/// assert(try ModelFile.decode(json, format: .json) == model)
/// ```
public enum ModelFile {
    /// Decodes one model version and validates it (``ObjectModel/validated()``).
    ///
    /// Errors are ``ModelError``s that name `file` (when given), the version, the entity and
    /// the property, the line, and what to fix: an unknown key (typos are never ignored), a
    /// missing `type`, a default of the wrong type (``ModelError/Code/invalidDefault``), a
    /// relationship placed inside a composite (``ModelError/Code/relationshipInComposite``),
    /// and every problem ``ObjectModel/validationErrors()`` finds.
    public static func decode(_ data: Data, format: ModelFileFormat, file: String? = nil) throws(ModelError) -> ObjectModel {
        let model = try decodeUnvalidated(data, format: format, file: file)
        do {
            return try model.validated()
        } catch {
            throw file.map { error.inFile($0, version: model.version) } ?? error
        }
    }

    /// Decodes a model file without validating the model: syntax and format errors only.
    /// Use ``ObjectModel/validationErrors()`` on the result to list every model problem at once.
    public static func decodeUnvalidated(_ data: Data, format: ModelFileFormat, file: String? = nil) throws(ModelError) -> ObjectModel {
        let (model, problems) = try decodeCollectingProblems(data, format: format, file: file)
        if let first = problems.first { throw first }
        return model
    }

    /// Decodes a model file; problems that do not stop decoding (defaults of the wrong type)
    /// are returned with the model, each naming the file and version.
    static func decodeCollectingProblems(_ data: Data, format: ModelFileFormat, file: String?) throws(ModelError) -> (ObjectModel, [ModelError]) {
        func attach(_ error: ModelError, version: String?) -> ModelError {
            var e = error
            e.file = e.file ?? file
            e.version = e.version ?? version
            return e
        }
        let root: ModelFileNode
        do throws(ModelFileSyntaxError) {
            switch format {
            case .json:
                root = try ModelFileNode.parseJSON(data)
            case .yaml:
                guard let text = String(data: data, encoding: .utf8) else {
                    throw ModelFileSyntaxError(message: "the file is not UTF-8 text", line: nil)
                }
                root = try ModelFileNode.parseYAML(text)
            }
        } catch {
            let place = error.line.map { "line \($0): " } ?? ""
            throw attach(ModelError(.invalidFile, place + error.message), version: nil)
        }
        let decoder = ModelFileDecoder(file: file)
        do {
            let model = try decoder.decodeModel(root)
            return (model, decoder.problems.map { attach($0, version: model.version) })
        } catch {
            throw attach(error, version: decoder.version)
        }
    }

    /// Encodes a model version. The output is deterministic — mapping keys sorted, entities
    /// and properties in declaration order, keys with default values left out — and decodes
    /// back to an equal model (defaults are normalized to their attribute's type:
    /// `.int(1)` for a `double` attribute reads back as `.double(1)`).
    ///
    /// Throws ``ModelError/Code/invalidDefault`` for a default that is not a value of its
    /// attribute's type (or an infinite or NaN number, which JSON cannot hold).
    public static func encode(_ model: ObjectModel, format: ModelFileFormat) throws(ModelError) -> Data {
        let node = try ModelFileEncoder.encode(model)
        switch format {
        case .json: return Data(node.jsonText().utf8)
        case .yaml: return Data(node.yamlText().utf8)
        }
    }

    /// Loads a model version by the file's extension: `.json`, `.yaml` / `.yml`, a Core Data
    /// `.xcdatamodel` directory, or an `.xcdatamodeld` bundle (its current version).
    ///
    /// Errors name the file by `url.path`.
    public static func load(contentsOf url: URL) throws(ModelError) -> ObjectModel {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw ModelError(.unreadableFile, "no such file or directory", file: url.path)
        }
        let ext = url.pathExtension.lowercased()
        switch ext {
        case "xcdatamodel":
            return try CoreDataModelImporter.importVersion(at: url)
        case "xcdatamodeld":
            let bundle = try CoreDataModelBundle(url: url)
            return try bundle.current.result.get()
        default:
            guard let format = ModelFileFormat(pathExtension: ext) else {
                throw ModelError(.unreadableFile, "unknown model file extension '.\(url.pathExtension)'; use .json, .yaml, .yml, .xcdatamodel or .xcdatamodeld", file: url.path)
            }
            return try decode(readFile(url), format: format, file: url.path)
        }
    }

    /// The largest model file (or manifest, or Core Data `contents`) read: 16 MiB. A model
    /// of a thousand entities is a few hundred kilobytes.
    public static let maxFileSize = 16 << 20

    /// Reads a file's bytes, turning I/O failures into ``ModelError/Code/unreadableFile``.
    /// Only a regular file of at most ``maxFileSize`` bytes is read; a FIFO or device is
    /// refused without blocking.
    static func readFile(_ url: URL) throws(ModelError) -> Data {
        do {
            return try InputFile.read(url.path, limit: maxFileSize, limitName: "ModelFile.maxFileSize")
        } catch {
            throw ModelError(.unreadableFile, error.reason, file: url.path)
        }
    }
}
