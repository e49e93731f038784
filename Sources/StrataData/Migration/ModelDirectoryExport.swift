import Foundation

/// Writes the model directory of an application's Swift schemas: one YAML model file per
/// version and a `versions.yaml` manifest in migration order — what stratad and stratactl
/// read — so that the library and the daemon use one model.
///
/// ```swift
/// try ModelDirectoryExport.write([AircraftSchemaV1.self, AircraftSchemaV2.self, AircraftSchemaV3.self],
///                                to: URL(filePath: "config/models/Aircraft"))
/// ```
///
/// `stratactl model checksum DIR` then prints the checksums the classes have
/// (``VersionedSchema/objectModel()``), and a daemon serving the store accepts it.
public enum ModelDirectoryExport {
    /// Writes `schemas` (oldest first; the last is current) as a model directory at `url`
    /// (created if needed; files of the same names are replaced). Returns the files written.
    ///
    /// - Throws: ``ModelSchemaError``/``ModelError`` for an invalid schema, file system errors.
    @discardableResult
    public static func write(_ schemas: [any VersionedSchema.Type], to url: URL) throws -> [URL] {
        var models: [ObjectModel] = []
        for (index, schema) in schemas.enumerated() {
            var model = try schema.objectModel()
            model.nextVersion = schemas.indices.contains(index + 1) ? schemas[index + 1].versionName : nil
            models.append(model)
        }
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        var written: [URL] = []
        var manifest = "# Written by StrataData's ModelDirectoryExport from the Swift schemas; regenerate, do not edit.\n"
        manifest += "current: \(yamlString(models.last?.version ?? ""))\nversions:\n"
        for model in models {
            let name = fileName(model.version)
            let file = url.appending(path: name)
            try ModelFile.encode(model, format: .yaml).write(to: file, options: .atomic)
            written.append(file)
            manifest += "  - version: \(yamlString(model.version))\n    file: \(yamlString(name))\n"
        }
        let manifestURL = url.appending(path: "versions.yaml")
        try Data(manifest.utf8).write(to: manifestURL, options: .atomic)
        written.append(manifestURL)
        return written
    }

    /// `Aircraft 1.yaml` for `Aircraft 1` (path separators replaced).
    static func fileName(_ version: String) -> String {
        version.map { $0 == "/" || $0 == "\\" || $0 == ":" ? "_" : $0 }.reduce(into: "") { $0.append($1) } + ".yaml"
    }

    private static func yamlString(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
