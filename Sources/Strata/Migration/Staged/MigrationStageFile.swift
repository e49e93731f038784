import Foundation
import Yams

/// Custom stages written as SQL, for migrations run without app code (`stratactl migrate`,
/// the daemon): a YAML file of stages whose handlers are SQL scripts.
///
/// ```yaml
/// # stages.yaml, next to a model directory's versions.yaml (or passed with --stages)
/// stages:
///   - label: move flightData into FlightData
///     from: Aircraft 2                 # version names in the model directory
///     to: Aircraft 3
///     toChecksum: GBJKbgTC…=           # optional pins (checked like ModelReference)
///     willMigrate: |                   # SQL on the source schema (optional)
///       UPDATE Aircraft SET flightData = NULL WHERE length(flightData) = 0;
///     didMigrate: |                    # SQL on the destination schema; columns and tables the
///       INSERT INTO FlightData(_pk, _version, data, aircraft_id)   # hop removed are still there
///       SELECT _pk, 1, flightData, _pk FROM Aircraft WHERE flightData IS NOT NULL;
/// ```
///
/// Each script runs inside the stage's transaction; an SQL error rolls the stage back.
public enum MigrationStageFile {
    /// The file a model directory may hold next to its manifest.
    public static let defaultName = "stages.yaml"

    /// Loads the stages of `url`, resolving version names in `directory`.
    ///
    /// - Throws: ``StagedMigrationError`` (`unresolvableReference`, `checksumMismatch`) naming
    ///   the file, the stage and what to fix.
    public static func load(contentsOf url: URL, directory: ModelDirectory) throws(StagedMigrationError) -> [MigrationStage] {
        let text: String
        do {
            text = String(decoding: try InputFile.read(url.path, limit: ModelFile.maxFileSize, limitName: "ModelFile.maxFileSize"), as: UTF8.self)
        } catch {
            throw StagedMigrationError(.unresolvableReference, "cannot read the stage file \(url.path): \(error.reason)")
        }
        let root: Any?
        do {
            try YAMLPreflight.check(text)
        } catch {
            throw StagedMigrationError(.unresolvableReference, "the stage file \(url.path), line \(error.line): \(error.message)")
        }
        do {
            root = try Yams.load(yaml: text)
        } catch {
            throw StagedMigrationError(.unresolvableReference, "the stage file \(url.path) is not valid YAML: \(error)")
        }
        guard let dictionary = root as? [String: Any], let list = dictionary["stages"] as? [[String: Any]] else {
            throw StagedMigrationError(.unresolvableReference, "the stage file \(url.path) must hold `stages:`, a list of {label, from, to, willMigrate, didMigrate}")
        }
        var stages: [MigrationStage] = []
        for (i, entry) in list.enumerated() {
            let where_ = "the stage file \(url.path), stage \(i + 1)"
            guard let from = entry["from"] as? String, let to = entry["to"] as? String else {
                throw StagedMigrationError(.unresolvableReference, "\(where_): give `from` and `to` (version names of \(directory.versions.map(\.version).joined(separator: ", ")))")
            }
            for name in [from, to] where directory.version(named: name) == nil {
                throw StagedMigrationError(.unresolvableReference, "\(where_): no version '\(name)' in the model directory (versions: \(directory.versions.map(\.version).joined(separator: ", ")))")
            }
            let label = entry["label"] as? String ?? "\(from) -> \(to)"
            let source = ModelReference(model: directory.version(named: from)!, checksum: entry["fromChecksum"] as? String)
            let destination = ModelReference(model: directory.version(named: to)!, checksum: entry["toChecksum"] as? String)
            stages.append(.custom(from: source, to: destination, label: label,
                                  willMigrate: sqlHandler(entry["willMigrate"] as? String),
                                  didMigrate: sqlHandler(entry["didMigrate"] as? String)))
        }
        return stages
    }

    private static func sqlHandler(_ sql: String?) -> MigrationStage.Handler? {
        guard let sql else { return nil }
        return { (stage: MigrationStageContext) throws -> Void in try stage.execute(sql: sql) }
    }
}
