import Foundation

/// Migrates a store through an ordered list of stages, one committed hop at a time
/// (Core Data's `NSStagedMigrationManager`, with every hop explicit, atomic and resumable).
///
/// ```swift
/// let models = try ModelDirectory(url: URL(filePath: "config/models/Aircraft"))
/// let v1 = models.version(named: "Aircraft 1")!, v2 = models.version(named: "Aircraft 2")!
/// let v3 = models.version(named: "Aircraft 3")!
/// let manager = StagedMigrationManager(stages: [
///     .lightweight([v1.checksum, v2.checksum], label: "add flightData"),
///     .custom(from: ModelReference(model: v2, checksum: v2.checksum),
///             to: ModelReference(model: v3, checksum: v3.checksum),
///             label: "move flightData into FlightData", didMigrate: moveFlightData),
/// ], models: models.versions)
/// let report = try manager.migrateStore(at: url, options: .init(deferCleanup: true)) { progress in
///     print(progress)
/// }
/// ```
///
/// The stages form one chain of versions: each stage starts where the previous one ends.
/// ``validate()`` checks the chain before anything runs (duplicate versions, gaps, stages that
/// go backwards, checksums no model has, references whose checksum changed); running also
/// checks that the store's version is in the chain and that every hop can be inferred. Then
/// each hop runs in its own transaction and records itself in the store's history, so a
/// failure or a kill leaves the store at the last completed version and running again resumes
/// from there.
public struct StagedMigrationManager: Sendable {
    /// The stages, in order.
    public var stages: [MigrationStage]
    /// The model versions lightweight stages' checksums are looked up in (a model directory's
    /// versions, usually); custom stages' models are added to them.
    public var models: [ObjectModel]

    /// A manager running `stages` in order; `models` are the versions custom stages may name.
    public init(stages: [MigrationStage], models: [ObjectModel] = []) {
        self.stages = stages
        self.models = models
    }

    /// A manager over `directory`'s versions.
    public init(stages: [MigrationStage], directory: ModelDirectory) {
        self.init(stages: stages, models: directory.versions)
    }

    // MARK: - Validation

    /// Resolves every stage and checks that they form one forward chain, without touching any store.
    ///
    /// - Throws: ``StagedMigrationError`` saying what to fix: `emptyChain`, `unknownChecksum`,
    ///   `unresolvableReference`, `checksumMismatch`, `backwardsStage`, `gap`, `duplicateVersion`.
    @discardableResult
    public func validate() throws(StagedMigrationError) -> StagedMigrationChain {
        guard !stages.isEmpty else {
            throw StagedMigrationError(.emptyChain, "the staged migration has no stages; add at least one stage")
        }
        // Resolve each stage to its versions.
        var resolved: [(stage: MigrationStage, versions: [ObjectModel])] = []
        var known = models
        for (i, stage) in stages.enumerated() {
            switch stage.kind {
            case .lightweight(let checksums):
                guard !checksums.isEmpty else {
                    throw StagedMigrationError(.emptyChain, "stage \(i + 1) ('\(stage.label)') lists no version; list at least one checksum", stage: i + 1, stageLabel: stage.label)
                }
                var versions: [ObjectModel] = []
                for checksum in checksums {
                    guard let model = known.last(where: { $0.checksum == checksum }) else {
                        let list = known.isEmpty ? "no model versions were given; pass `models:` (e.g. a model directory's versions)"
                            : "known versions: " + known.map { "'\($0.version)' (\($0.checksum))" }.joined(separator: ", ")
                        throw StagedMigrationError(.unknownChecksum, "stage \(i + 1) ('\(stage.label)') lists checksum \(checksum), which no known model version has (\(list)); fix the checksum or add the model version", stage: i + 1, stageLabel: stage.label)
                    }
                    versions.append(model)
                }
                resolved.append((stage, versions))
            case .custom(let from, let to, _, _):
                let source: ObjectModel, destination: ObjectModel
                do {
                    source = try from.resolve()
                    destination = try to.resolve()
                } catch {
                    var located = error
                    located.reason = "stage \(i + 1) ('\(stage.label)'): " + error.reason
                    located.stage = i + 1
                    located.stageLabel = stage.label
                    throw located
                }
                known += [source, destination]
                resolved.append((stage, [source, destination]))
            }
        }
        // Each hop must go forward.
        func name(_ m: ObjectModel) -> String { "'\(m.version)' (\(m.checksum))" }
        let order = models.map(\.checksum)
        for (i, entry) in resolved.enumerated() {
            for (a, b) in zip(entry.versions, entry.versions.dropFirst()) {
                if a.checksum == b.checksum {
                    throw StagedMigrationError(entry.stage.isCustom ? .backwardsStage : .duplicateVersion,
                        "stage \(i + 1) ('\(entry.stage.label)') goes from \(name(a)) to \(name(b)), which has the same checksum: the hop goes nowhere; remove it",
                        stage: i + 1, stageLabel: entry.stage.label)
                }
                if let ia = order.firstIndex(of: a.checksum), let ib = order.firstIndex(of: b.checksum), ib < ia {
                    throw StagedMigrationError(.backwardsStage,
                        "stage \(i + 1) ('\(entry.stage.label)') goes backwards, from \(name(a)) (version \(ia + 1) of the model) to \(name(b)) (version \(ib + 1)); stages must follow the model's version order — swap them or remove the stage",
                        stage: i + 1, stageLabel: entry.stage.label)
                }
            }
        }
        // Stages must join: each starts where the previous one ends.
        for i in resolved.indices.dropFirst() {
            let previous = resolved[i - 1], current = resolved[i]
            let end = previous.versions.last!, start = current.versions.first!
            guard end.checksum != start.checksum else { continue }
            throw StagedMigrationError(.gap,
                "stage \(i + 1) ('\(current.stage.label)') starts at \(name(start)), but stage \(i) ('\(previous.stage.label)') ends at \(name(end)): the chain has a gap; add a stage from '\(end.version)' to '\(start.version)', or start stage \(i + 1) at '\(end.version)'",
                stage: i + 1, stageLabel: current.stage.label)
        }
        // No version twice (a later stage coming back to a version is going backwards).
        var seen: [String: (stage: Int, version: String)] = [:]
        var chain: [ObjectModel] = []
        var hops: [StagedMigrationHop] = []
        for (i, entry) in resolved.enumerated() {
            for (j, model) in entry.versions.enumerated() {
                if i > 0 && j == 0 { continue }   // the joint with the previous stage
                if let first = seen[model.checksum] {
                    let backwards = entry.stage.isCustom && j == entry.versions.count - 1 && first.stage < i + 1
                    throw StagedMigrationError(backwards ? .backwardsStage : .duplicateVersion,
                        backwards
                            ? "stage \(i + 1) ('\(entry.stage.label)') goes back to \(name(model)), which stage \(first.stage) already migrated past; remove the stage or point it at a later version"
                            : "version \(name(model)) appears twice in the chain (stage \(first.stage) and stage \(i + 1), '\(entry.stage.label)'); each version may appear once — remove the duplicate checksum",
                        stage: i + 1, stageLabel: entry.stage.label)
                }
                seen[model.checksum] = (i + 1, model.version)
                chain.append(model)
            }
            for (a, b) in zip(entry.versions, entry.versions.dropFirst()) {
                var will: MigrationStage.Handler?, did: MigrationStage.Handler?
                if case .custom(_, _, let w, let d) = entry.stage.kind { will = w; did = d }
                hops.append(StagedMigrationHop(stage: i + 1, stageLabel: entry.stage.label, isCustom: entry.stage.isCustom,
                                               source: a, destination: b, willMigrate: will, didMigrate: did))
            }
        }
        return StagedMigrationChain(versions: chain, hops: hops)
    }
}
