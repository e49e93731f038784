import Foundation

/// A Core Data mapping model turned into a Strata custom stage for the hop between its two
/// versions (``CoreDataMappingTranslator``): the hop's lightweight part, then the generated
/// SQL as its `didMigrate`, in the hop's transaction; the result is validated before the
/// hop commits, like every custom stage's.
///
/// ```swift
/// let directory = try ModelDirectory(url: URL(filePath: "Cars.xcdatamodeld"))
/// let stages = try CoreDataMappingStage.load([URL(filePath: "Cars2ToCars3.xcmappingmodel")], directory: directory)
/// print(stages[0].statements)   // ["UPDATE \"Car\" SET \"fullName\" = upper(\"name\");"]
/// let manager = try path.manager(customStages: stages.map(\.stage))
/// ```
public struct CoreDataMappingStage: Sendable {
    /// The mapping model it was generated from.
    public var mappingModel: URL
    /// The hop's source version.
    public var fromVersion: String
    /// The hop's destination version.
    public var toVersion: String
    /// The stage's label: `mapping model Cars2ToCars3.xcmappingmodel`.
    public var label: String
    /// The generated `didMigrate` SQL, one statement per element (empty: the lightweight hop
    /// does everything the mapping model says).
    public var statements: [String]
    /// The custom stage.
    public var stage: MigrationStage

    /// Reads and translates the mapping models at `urls` against `directory`'s versions.
    /// With `implicit` (mapping models found beside the bundle), one that maps between
    /// versions `directory` does not have is skipped instead of refused.
    ///
    /// - Throws: ``CoreDataMappingError``, before anything is written.
    public static func load(_ urls: [URL], directory: ModelDirectory, implicit: Bool = false) throws(CoreDataMappingError) -> [CoreDataMappingStage] {
        var stages: [CoreDataMappingStage] = []
        for url in urls {
            let mapping = try CoreDataMappingModel(url: url)
            let names = directory.versions.map(\.version)
            guard let from = mapping.sourceVersion, let to = mapping.destinationVersion,
                  let source = directory.version(named: from), let destination = directory.version(named: to) else {
                if implicit { continue }
                let recorded = "\(mapping.sourceVersion.map { "'\($0)'" } ?? "no source model") -> \(mapping.destinationVersion.map { "'\($0)'" } ?? "no destination model")"
                throw CoreDataMappingError(.unknownVersion, "it maps \(recorded) (its recorded model paths), which are not both versions of \(directory.url?.lastPathComponent ?? "the model") (\(names.joined(separator: ", "))); pass the mapping model of this bundle's hop", file: url.path)
            }
            let statements = try CoreDataMappingTranslator(mapping: mapping, source: source, destination: destination).statements()
            let label = "mapping model \(url.lastPathComponent)"
            let sql = statements.joined(separator: "\n")
            let stage = MigrationStage.custom(
                from: ModelReference(model: source, checksum: nil), to: ModelReference(model: destination, checksum: nil), label: label,
                didMigrate: statements.isEmpty ? nil : sqlHandler(sql))
            stages.append(CoreDataMappingStage(mappingModel: url, fromVersion: from, toVersion: to, label: label, statements: statements, stage: stage))
        }
        return stages
    }

    private static func sqlHandler(_ sql: String) -> MigrationStage.Handler {
        { (stage: MigrationStageContext) throws -> Void in try stage.execute(sql: sql) }
    }
}
