import ArgumentParser
import Foundation
import Strata

/// `stratactl plan`: what a lightweight migration would do, like `terraform plan`. Writes nothing.
struct PlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Show the migration plan between two model versions, or from a store to a version.",
        discussion: """
            Each operation is marked SYNC (runs in one transaction when the store opens) or \
            DEFERRED (cleanup recorded in the store's ledger and finished later, online). An \
            operation that throws stored data away is followed by a DISCARDS line naming the \
            data (an attribute's values, a relationship's links or order, an entity's objects); \
            with a store, it says how many non-null values or objects it drops. REQUIRES lines \
            list what the objects already stored must satisfy for the migration to go ahead (a \
            non-optional attribute without a default, a non-optional to-one, a to-many count); \
            with a store, each says how many objects break it — a migration then refuses to run \
            unless a custom stage fills them. With a store, the rows each operation touches are \
            estimated from the store. Nothing is written.

            Examples:
              stratactl plan --from "config/models/Aircraft/Aircraft 1.yaml" --to "config/models/Aircraft/Aircraft 2.yaml"
              stratactl plan --from "Aircraft 1" --model config/models/Aircraft --to "Aircraft 2"
              stratactl plan var/aircraft.sqlite --model config/models/Aircraft --to "Aircraft 2"
            """
    )

    @Argument(help: "A store file to plan from (its embedded model is the source).") var store: String?
    @Option(help: "The source: a model file, or a version name in --model (instead of a store).") var from: String?
    @Option(help: "The destination: a model file, or a version name in --model.") var to: String?
    @Option(help: "A model directory (with --to VERSION; default: its current version).") var model: String?
    @Option(help: "A Core Data mapping model (.xcmappingmodel) whose generated stage to show (repeatable; needs --model; with an .xcdatamodeld, those beside it are shown too).") var mapping: [String] = []
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if !mapping.isEmpty && model == nil { throw ValidationError("--mapping needs --model: the mapping model's versions are looked up in it") }
        if store == nil && from == nil { throw ValidationError("give a STORE or --from MODEL") }
        if store != nil && from != nil { throw ValidationError("give either a STORE or --from, not both") }
        if to == nil && model == nil { throw ValidationError("give --to (a model file or version) or --model DIR") }
    }

    func run() throws {
        do {
            let source: ObjectModel
            var storeURL: URL?
            if let store {
                storeURL = URL(fileURLWithPath: store)
                source = try PersistentStore.metadata(at: storeURL!).model
            } else {
                source = try resolveSource(from!)
            }
            let destination = try resolveDestination()
            if let storeURL, let model, source.checksum != destination.checksum,
               let path = try? ProgressiveMigrationGraph(directory: ModelDirectory(url: URL(fileURLWithPath: model)))
                   .path(fromChecksum: source.checksum, storeVersion: source.version, to: destination.version),
               path.hops.count > 1 {
                try printPath(path, store: storeURL)
                return
            }
            let plan = try MigrationPlan.infer(from: source, to: destination)
            let generated = try model.map { try MigrateCommand.mappingStages(mapping, model: $0, directory: ModelDirectory(url: URL(fileURLWithPath: $0))) }?
                .filter { $0.fromVersion == plan.sourceVersion && $0.toVersion == plan.destinationVersion } ?? []
            let rows = try storeURL.map { try Self.estimateRows(plan, store: $0) } ?? [:]
            let counts = try storeURL.map { try PlanDataCounts(plan: plan, store: $0) }
            if output.json {
                try printJSON([
                    "from": ["version": plan.sourceVersion, "checksum": plan.sourceChecksum],
                    "to": ["version": plan.destinationVersion, "checksum": plan.destinationChecksum],
                    "operations": plan.operations.enumerated().map { i, op -> [String: Any] in
                        var o: [String: Any] = ["mode": op.isDeferrable ? "deferred" : "sync", "summary": op.summary,
                                                "kind": String(String(describing: op.kind).prefix { $0 != "(" })]
                        if let t = op.table { o["table"] = t; if let r = rows[t] { o["rows"] = r } }
                        if let e = op.entity { o["entity"] = e }
                        if let p = op.property { o["property"] = p }
                        if !op.discards.isEmpty { o["discards"] = PlanDataCounts.json(op.discards, counts: counts?.discarded[i]) }
                        return o
                    },
                    "requirements": PlanDataCounts.json(plan.requirements, counts: counts?.violations),
                    "generatedStages": generated.map { ["mappingModel": $0.mappingModel.path, "label": $0.label, "didMigrate": $0.statements] as [String: Any] },
                ])
                return
            }
            print("Plan: \(plan.sourceVersion) -> \(plan.destinationVersion)")
            if plan.isEmpty {
                print("  nothing to do: the versions have the same storage")
                return
            }
            for (i, op) in plan.operations.enumerated() {
                let rowText = op.table.flatMap { rows[$0] }.map { " (~\($0) rows)" } ?? ""
                print("  \(op.isDeferrable ? "DEFERRED" : "SYNC    ")  \(op.summary)\(rowText)")
                for line in PlanDataCounts.discardLines(op.discards, counts: counts?.discarded[i]) { print("            \(line)") }
            }
            for line in PlanDataCounts.requirementLines(plan.requirements, counts: counts?.violations) { print("  \(line)") }
            for stage in generated {
                print("  STAGE    didMigrate generated from \(stage.mappingModel.lastPathComponent):")
                for statement in stage.statements { print("            \(statement)") }
                if stage.statements.isEmpty { print("            (nothing: the lightweight hop does what the mapping model says)") }
            }
            print("\(plan.synchronous.count) synchronous, \(plan.deferrable.count) deferrable operation(s). Nothing was changed.")
        } catch let error as ExitCode {
            throw error
        } catch {
            throw ExitStatus.fail(error)
        }
    }

    /// A progressive path of several hops: the versions, then each hop's plan (or why it needs
    /// a custom stage).
    private func printPath(_ path: ProgressiveMigrationPath, store: URL) throws {
        var hops: [[String: Any]] = []
        var lines = ["Path: \(path.versions.map(\.version).joined(separator: " -> "))" + (path.skipped.isEmpty ? "" : " (skips \(path.skipped.joined(separator: ", ")))")]
        for (from, to) in path.hops {
            var hop: [String: Any] = ["from": from.version, "to": to.version]
            lines.append("Hop \(from.version) -> \(to.version):")
            do {
                let plan = try MigrationPlan.infer(from: from, to: to)
                // Counts need the data the earlier hops leave: only the first hop is counted.
                let counts = from.checksum == path.versions.first?.checksum ? try PlanDataCounts(plan: plan, store: store) : nil
                hop["operations"] = plan.operations.enumerated().map { i, op -> [String: Any] in
                    var o: [String: Any] = ["mode": op.isDeferrable ? "deferred" : "sync", "summary": op.summary]
                    if !op.discards.isEmpty { o["discards"] = PlanDataCounts.json(op.discards, counts: counts?.discarded[i]) }
                    return o
                }
                hop["requirements"] = PlanDataCounts.json(plan.requirements, counts: counts?.violations)
                if plan.isEmpty { lines.append("  nothing to do: the versions have the same storage") }
                for (i, op) in plan.operations.enumerated() {
                    lines.append("  \(op.isDeferrable ? "DEFERRED" : "SYNC    ")  \(op.summary)")
                    lines += PlanDataCounts.discardLines(op.discards, counts: counts?.discarded[i]).map { "            \($0)" }
                }
                lines += PlanDataCounts.requirementLines(plan.requirements, counts: counts?.violations).map { "  \($0)" }
            } catch {
                hop["customStageRequired"] = "\(error)"
                lines.append("  CUSTOM STAGE REQUIRED: \(error)")
            }
            hops.append(hop)
        }
        if output.json {
            try printJSON(["store": store.path, "path": path.versions.map(\.version), "skipped": path.skipped, "hops": hops])
        } else {
            print(lines.joined(separator: "\n"))
            print("Run `stratactl migrate \(store.path) --model \(model ?? "DIR") --to \"\(path.versions.last?.version ?? "")\" --dry-run` for the staged migration. Nothing was changed.")
        }
    }

    private func resolveDestination() throws -> ObjectModel {
        if let model {
            let directory = try ModelDirectory(url: URL(fileURLWithPath: model))
            guard let to else { return directory.current }
            return try Self.version(to, in: directory, model)
        }
        return try ModelFile.load(contentsOf: URL(fileURLWithPath: to!))
    }

    /// `--from`: a model file that exists, else a version name in `--model`.
    private func resolveSource(_ from: String) throws -> ObjectModel {
        if FileManager.default.fileExists(atPath: from) { return try ModelFile.load(contentsOf: URL(fileURLWithPath: from)) }
        guard let model else {
            throw ExitStatus.fail("no model file '\(from)'; to name a version, give its model directory too: --from \"\(from)\" --model DIR",
                                  code: ExitStatus.usage)
        }
        return try Self.version(from, in: try ModelDirectory(url: URL(fileURLWithPath: model)), model)
    }

    private static func version(_ name: String, in directory: ModelDirectory, _ path: String) throws -> ObjectModel {
        guard let version = directory.version(named: name) else {
            throw ExitStatus.fail("model directory \(path) has no version '\(name)' (versions: \(directory.versions.map(\.version).joined(separator: ", ")))",
                                  code: ExitStatus.usage)
        }
        return version
    }

    /// Row estimates per table (the primary-key span: no full scan).
    static func estimateRows(_ plan: MigrationPlan, store: URL) throws -> [String: Int64] {
        let metadata = try PersistentStore.metadata(at: store)
        let opened = try PersistentStore.open(at: store, model: metadata.model, options: StoreOptions(createIfMissing: false, readOnly: true))
        defer { try? opened.close() }
        return try opened.estimatedRowCounts(ofTables: Set(plan.operations.compactMap(\.table)))
    }
}
