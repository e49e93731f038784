import ArgumentParser
import Foundation
import Strata
import StrataUnits

/// `stratactl migrate`: runs (or, with `--dry-run`, shows) a progressive migration of a store
/// file offline, hop by hop, with a progress bar.
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store file to a model version, one committed hop at a time.",
        discussion: """
            The path follows the model directory's version graph (each version's nextVersion, \
            else the next version listed) from the store's version, found by its checksum, to \
            --to. Each hop is a lightweight migration, or a custom stage from the stage file \
            (--stages, default DIR/stages.yaml) whose SQL runs in the hop's transaction. Each hop \
            commits on its own: an interrupted migration leaves the store at its last completed \
            version, and running the command again resumes. --dry-run prints the path and each \
            hop's plan and writes nothing.

            A migration after which none of the store's entities is left (every table dropped, \
            usually a store given another application's model directory) is refused with exit \
            status 3 unless --force is given.

            Examples:
              stratactl migrate var/post.sqlite --model config/models/Post --to "Post 4" --dry-run
              stratactl migrate var/aircraft.sqlite --model config/models/Aircraft \\
                  --stages Examples/StagedMigration/Aircraft/stages.yaml --defer --backup var/aircraft-before.sqlite
            """
    )

    @Argument(help: "The store file to migrate.") var store: String
    @Option(help: "The model directory (versions.yaml, model files, optional stages.yaml).") var model: String
    @Option(help: "The version to migrate to (default: the directory's current version).") var to: String?
    @Option(help: "A stage file with custom stages (default: stages.yaml in the model directory, if any).") var stages: String?
    @Option(help: "A Core Data mapping model (.xcmappingmodel) for a hop, run as a generated custom stage (repeatable; with an .xcdatamodeld, those beside it are found by themselves).") var mapping: [String] = []
    @Flag(name: .customLong("dry-run"), help: "Print the path and the plan of each hop; write nothing.") var dryRun = false
    @Flag(name: .customLong("defer"), help: "Record cleanup in the deferred ledger instead of running it now.") var deferCleanup = false
    @Option(help: "Write a backup of the store here (VACUUM INTO) before the first hop.") var backup: String?
    @Flag(help: "Allow a migration after which none of the store's entities is left (it drops all the store's data); refused otherwise (exit 3).") var force = false
    @Flag(name: .customLong("no-discard"), help: "Refuse (exit 3) a lightweight hop that would discard stored data; the store stays at the last completed version.") var noDiscard = false
    @Flag(help: "Do not draw the progress bar.") var quiet = false
    @OptionGroup var output: OutputOptions

    func run() throws {
        do {
            let storeURL = URL(fileURLWithPath: store)
            let directory = try ModelDirectory(url: URL(fileURLWithPath: model))
            let target = to ?? directory.current.version
            let customStages = try loadStages(directory)
            let metadata = try PersistentStore.metadata(at: storeURL)
            // The same migration stratad runs at open (DirectoryMigration).
            let migration = DirectoryMigration(directory: directory, targetVersion: target, customStages: customStages)
            let route = try migration.route(from: metadata)
            let path = route.path
            if let start = path.versions.first?.version, let broken = directory.unreadableVersions(between: start, and: target).first {
                throw ModelError(broken.error.code, "the migration from '\(start)' to '\(target)' passes version '\(broken.name)', which cannot be read: \(broken.error.reason); fix that version (nothing was changed)",
                                 file: broken.error.file, version: broken.name, entity: broken.error.entity, property: broken.error.property)
            }
            let manager = route.manager
            let unused = route.unusedCustomStages.map(\.label)
            var options = StagedMigrationOptions(deferCleanup: deferCleanup, backupURL: backup.map { URL(fileURLWithPath: $0) },
                                                 allowsDroppingAllEntities: force)
            options.logger.logLevel = .error
            options.allowsDiscards = !noDiscard
            if dryRun {
                try printDryRun(path: path, manager: manager, storeURL: storeURL, unused: unused, options: options,
                                generatedStages: try Self.mappingStages(mapping, model: model, directory: directory))
                return
            }
            let bar = ProgressBar(enabled: !quiet && !output.json)
            let report: StagedMigrationReport
            do {
                report = try migration.run(route, storeAt: storeURL, from: metadata, options: options) { progress in
                    bar.update(fraction: progress.fraction, label: progress.description)
                }
            } catch {
                throw error.error
            }
            bar.finish()
            DiscardOutput.warn(report)
            if output.json {
                var object: [String: Any] = [
                    "store": storeURL.path, "from": report.startVersion, "to": report.endVersion,
                    "path": path.versions.map(\.version), "pendingDeferredTasks": report.pendingDeferredTasks,
                    "hops": report.hops.map { ["stage": $0.stageLabel, "from": $0.fromVersion, "to": $0.toVersion,
                                               "rowsWritten": $0.rowsWritten, "synchronousOperations": $0.synchronousOperations,
                                               "ms": $0.duration.milliseconds, "discarded": DiscardOutput.json($0)] as [String: Any] },
                    "warnings": report.discardWarnings,
                ]
                if let url = report.backupURL { object["backup"] = url.path }
                try printJSON(object)
                return
            }
            if report.hops.isEmpty {
                print("\(storeURL.path) is already at '\(report.endVersion)'; nothing to do.")
                return
            }
            print("Migrated \(storeURL.path): \(report.startVersion) -> \(report.endVersion) (\(report.hops.count) hop(s))")
            for hop in report.hops {
                print("  \(hop.fromVersion) -> \(hop.toVersion)  [\(hop.stageLabel)]  \(hop.rowsWritten) row(s) written")
                for line in DiscardOutput.lines(hop, indent: "    ") { print(line) }
            }
            if let url = report.backupURL { print("Backup: \(url.path)") }
            if report.pendingDeferredTasks > 0 {
                print("\(report.pendingDeferredTasks) deferred cleanup task(s) pending: run `stratactl deferred finish \(storeURL.path)`.")
            }
        } catch let error as ExitCode {
            throw error
        } catch {
            throw ExitStatus.fail(error)
        }
    }

    private func loadStages(_ directory: ModelDirectory) throws -> [MigrationStage] {
        let mappings = try Self.mappingStages(mapping, model: model, directory: directory).map(\.stage)
        if let stages { return try MigrationStageFile.load(contentsOf: URL(fileURLWithPath: stages), directory: directory) + mappings }
        let implicit = URL(fileURLWithPath: model).appendingPathComponent(MigrationStageFile.defaultName)
        guard FileManager.default.fileExists(atPath: implicit.path) else { return mappings }
        return try MigrationStageFile.load(contentsOf: implicit, directory: directory) + mappings
    }

    /// The stages generated from `--mapping` files and, for a Core Data bundle, the mapping
    /// models beside it.
    static func mappingStages(_ given: [String], model: String, directory: ModelDirectory) throws -> [CoreDataMappingStage] {
        let urls = given.map { URL(fileURLWithPath: $0).standardizedFileURL }
        let bundle = URL(fileURLWithPath: model)
        let beside = bundle.pathExtension.lowercased() == "xcdatamodeld" ? CoreDataMappingModel.mappingModels(besideBundleAt: bundle, except: urls) : []
        return try CoreDataMappingStage.load(urls, directory: directory) + CoreDataMappingStage.load(beside, directory: directory, implicit: true)
    }

    private func printDryRun(path: ProgressiveMigrationPath, manager: StagedMigrationManager, storeURL: URL, unused: [String],
                             options: StagedMigrationOptions, generatedStages: [CoreDataMappingStage]) throws {
        let hops = try manager.plannedHops(forStoreAt: storeURL, options: options)
        if output.json {
            try printJSON([
                "store": storeURL.path, "path": path.versions.map(\.version), "skipped": path.skipped, "unusedCustomStages": unused,
                "hops": hops.map { hop, plan in
                    ["stage": hop.stageLabel, "custom": hop.isCustom, "from": hop.source.version, "to": hop.destination.version,
                     "operations": plan.operations.map { op -> [String: Any] in
                         var o: [String: Any] = ["mode": op.isDeferrable ? "deferred" : "sync", "summary": op.summary]
                         if !op.discards.isEmpty { o["discards"] = PlanDataCounts.json(op.discards, counts: nil) }
                         return o
                     },
                     "requirements": PlanDataCounts.json(plan.requirements, counts: nil)] as [String: Any]
                },
            ])
            return
        }
        print("Path: \(path)")
        for (i, (hop, plan)) in hops.enumerated() {
            print("Hop \(i + 1)/\(hops.count): \(hop.source.version) -> \(hop.destination.version)  [\(hop.isCustom ? "custom: " : "")\(hop.stageLabel)]")
            if plan.isEmpty { print("  nothing to do: the versions have the same storage") }
            for op in plan.operations {
                print("  \(op.isDeferrable ? "DEFERRED" : "SYNC    ")  \(op.summary)")
                for line in PlanDataCounts.discardLines(op.discards, counts: nil) { print("            \(line)") }
            }
            for line in PlanDataCounts.requirementLines(plan.requirements, counts: nil) { print("  \(line)") }
            for generated in generatedStages where generated.label == hop.stageLabel {
                print("  STAGE    didMigrate generated from \(generated.mappingModel.lastPathComponent):")
                for statement in generated.statements { print("            \(statement)") }
                if generated.statements.isEmpty { print("            (nothing: the lightweight hop does what the mapping model says)") }
            }
        }
        if hops.isEmpty { print("The store is already at '\(path.versions.last?.version ?? "?")'.") }
        for label in unused { print("note: custom stage '\(label)' is not on the path (folded or routed around); its handlers will not run") }
        print("Dry run: nothing was changed.")
    }
}
