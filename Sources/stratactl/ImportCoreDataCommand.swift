import ArgumentParser
import Foundation
import Logging
import Strata
import StrataUnits

/// `stratactl import-coredata`: a Core Data SQLite store into a new Strata store.
struct ImportCoreDataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-coredata",
        abstract: "Import a Core Data SQLite store into a new Strata store, then migrate it.",
        discussion: """
            Reads the Core Data store from a private copy (the store, its -wal and -shm are \
            copied to a private temporary directory; the originals stay byte-identical and no \
            file appears next to them; rows that only live in the -wal are imported). Finds \
            the version of the model bundle the store was written with by comparing the \
            store's tables and columns with each version's Core Data layout (--from names it \
            when several versions have the same layout), writes a new Strata store at that \
            version, keeping every object's primary key, and, with --to, migrates it through \
            the bundle's versions like `stratactl migrate` (lightweight hops, custom SQL stages \
            from --stages). The new store appears at --out only when everything succeeded. \
            The mapping is described in docs/CoreDataImport.md.

            Exit status: 0 imported; 1 failure (a missing externally stored file, a value \
            that cannot be read, an I/O error); 2 usage; 3 the migration to --to was refused \
            or failed; 10 the store is not an SQLite file; 11 it is not a Core Data store (or \
            its Z_METADATA is unreadable); 12 its version is not in the bundle (or not uniquely, \
            or not the --from version); 13 the model bundle cannot be read; 14 --out already \
            exists. Nothing is written in any of these cases. A hop that discards stored data \
            (values of a removed attribute, links of a removed relationship, objects of a \
            removed entity) is reported (a warning on standard error, DISCARDED lines, the \
            JSON warnings with counts); with --no-discard it is refused (exit 3). --dry-run \
            runs everything on a scratch copy, prints the report, and creates nothing.

            Examples:
              stratactl import-coredata --model App.xcdatamodeld \\
                  --store App.sqlite --out var/app.sqlite
              stratactl import-coredata --model App.xcdatamodeld \\
                  --store App.sqlite --out var/app.sqlite \\
                  --to "App 3" --stages stages.yaml --json
            """
    )

    @Option(help: "The Core Data model bundle (.xcdatamodeld) the store was written with.", completion: .file())
    var model: String
    @Option(help: "The Core Data SQLite store (its -wal and -shm are read too).", completion: .file())
    var store: String
    @Option(help: "The Strata store to create (must not exist).", completion: .file())
    var out: String
    @Option(help: "The store's version, when its layout matches several versions of the bundle.")
    var from: String?
    @Option(help: "Migrate the imported store to this version of the bundle.")
    var to: String?
    @Option(help: "A stage file (YAML) with custom SQL stages for the migration (see docs/StagedMigration.md).", completion: .file())
    var stages: String?
    @Option(help: "A Core Data mapping model (.xcmappingmodel) for a hop of the migration to --to (repeatable; those beside the bundle are found by themselves).", completion: .file())
    var mapping: [String] = []
    @Flag(name: .customLong("defer"), help: "Leave the migration's cleanup in the deferred ledger instead of running it now.")
    var deferCleanup = false
    @Flag(name: .customLong("dry-run"), help: "Run the import and migration on a scratch copy and print what they would do (objects, hops, DISCARDS with counts); --out is not created.")
    var dryRun = false
    @Flag(name: .customLong("no-discard"), help: "Refuse (exit 3, nothing written) a migration hop that would discard stored data.")
    var noDiscard = false
    @Flag(help: "Do not draw the progress bar.")
    var quiet = false
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if stages != nil && to == nil { throw ValidationError("--stages needs --to: stages run during the migration to --to") }
    }

    func run() throws {
        var logger = Logger(label: "io.strata.stratactl")
        logger.logLevel = .error   // discards are written as `stratactl: warning:` lines instead
        var options = CoreDataStoreImporter.Options(fromVersion: from, toVersion: to, stageFile: stages.map { URL(fileURLWithPath: $0) },
                                                    deferCleanup: deferCleanup, logger: logger)
        options.mappingModels = mapping.map { URL(fileURLWithPath: $0) }
        options.allowsDiscards = !noDiscard
        let report: CoreDataImportReport
        let bar = ProgressBar(enabled: !quiet && !output.json)
        do {
            let importer = try CoreDataStoreImporter(bundle: URL(fileURLWithPath: model), options: options)
            if let to, importer.bundle.version(named: to) == nil {
                throw UsageError("--to '\(to)' is not a version of \(model) (versions: \(importer.bundle.versions.map(\.name).joined(separator: ", ")))")
            }
            let progress: (CoreDataImportProgress) -> Void = { progress in bar.update(fraction: progress.fraction, label: progress.description) }
            report = dryRun ? try importer.dryRun(at: URL(fileURLWithPath: store), destination: URL(fileURLWithPath: out), progress: progress)
                : try importer.importStore(at: URL(fileURLWithPath: store), to: URL(fileURLWithPath: out), progress: progress)
            bar.finish()
        } catch {
            bar.finish()
            throw ExitStatus.fail(error)
        }
        DiscardOutput.warn(report.migration)
        if output.json {
            var object = Self.json(report)
            object["dryRun"] = dryRun
            try printJSON(object)
        } else {
            print(Self.text(report, dryRun: dryRun))
        }
    }

    // MARK: - Output

    static func text(_ report: CoreDataImportReport, dryRun: Bool = false) -> String {
        var lines = [dryRun ? "Dry run: would import \(report.source.path) into \(report.destination.path) (nothing was written)"
                            : "Imported \(report.source.path) into \(report.destination.path)"]
        lines.append("Core Data store \(report.coreDataStoreUUID ?? "(no NSStoreUUID)"), version identifiers: \(report.coreDataVersionIdentifiers.isEmpty ? "none" : report.coreDataVersionIdentifiers.joined(separator: ", "))")
        lines.append("Version: \(report.importedVersion) (\(describe(report.method)))")
        for (current, stale) in report.staleEntityNames.sorted(by: { $0.key < $1.key }) {
            lines.append("Entity \(current) is listed in Z_PRIMARYKEY under its old name \(stale) (renamed by renaming identifier)")
        }
        let width = max(6, (report.objects.keys.map(\.count).max() ?? 0))
        lines.append("  " + "ENTITY".padding(toLength: width, withPad: " ", startingAt: 0) + "  OBJECTS")
        for entity in report.objects.keys.sorted() {
            lines.append("  " + entity.padding(toLength: width, withPad: " ", startingAt: 0) + "  \(report.objects[entity]!)")
        }
        for key in report.links.keys.sorted() { lines.append("  links of \(key): \(report.links[key]!)") }
        if let migration = report.migration {
            lines.append("Migrated: \(migration.startVersion) -> \(migration.endVersion) (\(migration.hops.count) hop(s))")
            for hop in migration.hops {
                lines.append("  \(hop.fromVersion) -> \(hop.toVersion)  [\(hop.stageLabel)]  \(hop.rowsWritten) row(s) written")
                lines += DiscardOutput.lines(hop, indent: "    ")
            }
            if migration.pendingDeferredTasks > 0 {
                lines.append("\(migration.pendingDeferredTasks) deferred cleanup task(s) pending: run `stratactl deferred finish \(report.destination.path)`.")
            }
        }
        if !report.warnings.isEmpty {
            lines.append("Warnings:")
            lines += report.warnings.map { "  - \($0)" }
        }
        return lines.joined(separator: "\n")
    }

    static func describe(_ method: CoreDataVersionMatch.Method) -> String {
        switch method {
        case .layout: return "the only version with the store's layout"
        case .versionIdentifier: return "chosen by the store's version identifier among versions with its layout"
        case .entityHashes: return "chosen by the entities of the store's version hashes among versions with its layout"
        case .given: return "given with --from"
        }
    }

    static func json(_ report: CoreDataImportReport) -> [String: Any] {
        var object: [String: Any] = [
            "source": report.source.path, "destination": report.destination.path,
            "coreDataStoreUUID": report.coreDataStoreUUID ?? NSNull(), "coreDataVersionIdentifiers": report.coreDataVersionIdentifiers,
            "importedVersion": report.importedVersion, "method": report.method.rawValue, "finalVersion": report.finalVersion,
            "objects": report.objects, "links": report.links, "warnings": report.warnings, "staleEntityNames": report.staleEntityNames,
            "ms": report.duration.milliseconds,
        ]
        if let migration = report.migration {
            object["migration"] = [
                "from": migration.startVersion, "to": migration.endVersion, "pendingDeferredTasks": migration.pendingDeferredTasks,
                "hops": migration.hops.map { ["stage": $0.stageLabel, "from": $0.fromVersion, "to": $0.toVersion, "rowsWritten": $0.rowsWritten,
                                              "discarded": DiscardOutput.json($0)] as [String: Any] },
            ] as [String: Any]
        }
        return object
    }
}
