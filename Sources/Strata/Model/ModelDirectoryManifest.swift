import Foundation

/// The manifest of a model directory (`versions.yaml`): the version files in migration order
/// and the current version.
struct ModelDirectoryManifest {
    struct Entry {
        var file: String
        var version: String?
        var line: Int?
    }

    var entries: [Entry]
    var current: String?

    static let keys = ["current", "versions"]
    static let entryKeys = ["file", "version"]

    static func load(_ url: URL) throws(ModelError) -> ModelDirectoryManifest {
        let data = try ModelFile.readFile(url)
        do {
            return try parse(data, format: url.pathExtension.lowercased() == "json" ? .json : .yaml)
        } catch {
            throw error.inFile(url.path)
        }
    }

    static func parse(_ data: Data, format: ModelFileFormat) throws(ModelError) -> ModelDirectoryManifest {
        let root: ModelFileNode
        do throws(ModelFileSyntaxError) {
            switch format {
            case .json: root = try ModelFileNode.parseJSON(data)
            case .yaml: root = try ModelFileNode.parseYAML(String(decoding: data, as: UTF8.self))
            }
        } catch {
            throw ModelError(.invalidFile, (error.line.map { "line \($0): " } ?? "") + error.message)
        }
        let decoder = ModelFileDecoder(file: nil)
        let top = ModelFileDecoder.Location(path: "top level")
        let fields = try decoder.mapping(root, what: "a manifest", at: top)
        try fields.checkKeys(keys, in: "the manifest")
        let current = try fields["current"].map { n throws(ModelError) in try decoder.string(n, at: top.appending("current")) }
        let items = try decoder.list(fields.required("versions", in: "the manifest"), at: top.appending("versions"))
        var entries: [Entry] = []
        var seenFiles: Set<String> = []
        for (i, item) in items.enumerated() {
            let location = top.appending("versions[\(i)]")
            var entry: Entry
            if case .object = item.content {
                let f = try decoder.mapping(item, what: "a version entry", at: location)
                try f.checkKeys(entryKeys, in: "a version entry")
                entry = Entry(file: try decoder.string(f.required("file", in: "a version entry"), at: location.appending("file")),
                              version: try f["version"].map { n throws(ModelError) in try decoder.string(n, at: location.appending("version")) },
                              line: item.line)
            } else {
                entry = Entry(file: try decoder.string(item, at: location), version: nil, line: item.line)
            }
            guard seenFiles.insert(entry.file).inserted else {
                throw location.error(.duplicateName, "the file '\(entry.file)' is listed twice", line: item.line)
            }
            entries.append(entry)
        }
        return ModelDirectoryManifest(entries: entries, current: current)
    }
}
