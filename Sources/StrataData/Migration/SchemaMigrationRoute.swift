import Foundation

/// A ``SchemaMigrationPlan`` resolved for one store: the Strata stages that take it from its
/// version to the target schema, with undeclared pairs inferred and equal checksums merged.
/// Built — and refused — before anything is written.
public struct SchemaMigrationRoute: Sendable {
    /// One step of the route, as printed in errors and logs.
    public struct Step: Sendable, Hashable, CustomStringConvertible {
        /// The step's versions.
        public var from: String, to: String
        /// `declared lightweight`, `inferred lightweight`, `custom`, `no-op (equal checksums)`.
        public var kind: String
        /// `Aircraft 1 → Aircraft 2: inferred lightweight`.
        public var description: String { "\(from) → \(to): \(kind)" }
    }

    /// The steps from the store's version to the target, in order.
    public let steps: [Step]
    /// The Strata stages they run as.
    public let stages: [MigrationStage]
    /// The manager that runs them.
    public let manager: StagedMigrationManager

    /// Resolves `plan` for a store at `storeChecksum` towards `target`.
    ///
    /// - Throws: ``SchemaMigrationPlanError`` (with the plan printed) when the target or the
    ///   store's version is not in the plan, a stage names schemas that are not consecutive,
    ///   an undeclared change cannot be inferred, or a custom stage joins equal checksums.
    init(plan: any SchemaMigrationPlan.Type, target: any VersionedSchema.Type, storeChecksum: String) throws {
        let schemas = plan.schemas
        let models = try schemas.map { try $0.objectModel() }
        let printed = Self.print(plan, models: models)
        func fail(_ reason: String) -> SchemaMigrationPlanError { SchemaMigrationPlanError(reason: reason, plan: printed) }
        guard let targetIndex = schemas.firstIndex(where: { ObjectIdentifier($0) == ObjectIdentifier(target) }) else {
            throw fail("the schema \(target.versionName) is not among the plan's schemas; add it to \(plan).schemas")
        }
        guard let startIndex = models[...targetIndex].lastIndex(where: { $0.checksum == storeChecksum }) else {
            throw fail("the store's model (checksum \(storeChecksum)) is none of the plan's schemas up to \(target.versionName); add the schema the store was written with")
        }
        // Declared stages by their source position; each must join consecutive schemas.
        var declared: [Int: SchemaMigrationStage] = [:]
        for stage in plan.stages {
            guard let from = schemas.firstIndex(where: { ObjectIdentifier($0) == ObjectIdentifier(stage.fromVersion) }), schemas.indices.contains(from + 1),
                  ObjectIdentifier(schemas[from + 1]) == ObjectIdentifier(stage.toVersion) else {
                throw fail("the stage \(stage.fromVersion.versionName) → \(stage.toVersion.versionName) does not join two consecutive schemas of the plan; declare one stage per consecutive pair")
            }
            declared[from] = stage
        }
        var steps: [Step] = []
        var stages: [MigrationStage] = []
        var lightweightRun: [String] = [models[startIndex].checksum]
        func closeRun() {
            if lightweightRun.count > 1 { stages.append(.lightweight(lightweightRun, label: "lightweight")) }
        }
        for index in startIndex..<targetIndex {
            let source = models[index], destination = models[index + 1]
            let names = (schemas[index].versionName, schemas[index + 1].versionName)
            if source.checksum == destination.checksum {
                if case .custom? = declared[index] {
                    throw fail("the custom stage \(names.0) → \(names.1) joins two schemas with the same checksum: there is nothing to migrate; make the schemas differ or drop the stage")
                }
                steps.append(Step(from: names.0, to: names.1, kind: "no-op (equal checksums)"))
                continue
            }
            switch declared[index] {
            case .custom(_, _, let will, let did)?:
                closeRun()
                lightweightRun = [destination.checksum]
                var willHandler: MigrationStage.Handler?
                var didHandler: MigrationStage.Handler?
                if let will { willHandler = { stage in try Self.run(will, stage) } }
                if let did { didHandler = { stage in try Self.run(did, stage) } }
                stages.append(MigrationStage.custom(from: ModelReference(model: source, checksum: source.checksum),
                                                    to: ModelReference(model: destination, checksum: destination.checksum),
                                                    label: "\(names.0) → \(names.1)", willMigrate: willHandler, didMigrate: didHandler))
                steps.append(Step(from: names.0, to: names.1, kind: "custom"))
            case .lightweight?, nil:
                let isDeclared = declared[index] != nil
                do {
                    _ = try MigrationPlan.infer(from: source, to: destination)
                } catch {
                    throw fail("\(names.0) → \(names.1) is \(isDeclared ? "declared lightweight" : "not declared") and cannot be inferred: \(error); declare a custom stage for it")
                }
                lightweightRun.append(destination.checksum)
                steps.append(Step(from: names.0, to: names.1, kind: isDeclared ? "declared lightweight" : "inferred lightweight"))
            }
        }
        closeRun()
        self.steps = steps
        self.stages = stages
        self.manager = StagedMigrationManager(stages: stages, models: models)
    }

    /// Runs a typed handler on a stage's context and saves what it left unsaved.
    private static func run(_ handler: (SchemaMigrationContext) throws -> Void, _ stage: MigrationStageContext) throws {
        let typed = SchemaMigrationContext(stage: stage)
        try handler(typed)
        try typed.context.save()
    }

    /// The plan as a list: schemas with checksums, then declared stages.
    static func print(_ plan: any SchemaMigrationPlan.Type, models: [ObjectModel]) -> String {
        var lines = ["\(plan):"]
        for (schema, model) in zip(plan.schemas, models) {
            lines.append("  schema \(schema.versionName) (\(schema.versionIdentifier)) checksum \(model.checksum)")
        }
        for stage in plan.stages {
            let kind: String
            if case .custom = stage { kind = "custom" } else { kind = "lightweight" }
            lines.append("  stage \(stage.fromVersion.versionName) → \(stage.toVersion.versionName): \(kind)")
        }
        return lines.joined(separator: "\n")
    }
}

/// A migration plan that cannot run against a store: thrown before anything is written.
public struct SchemaMigrationPlanError: Error, Sendable, CustomStringConvertible {
    /// What is wrong and what to do.
    public var reason: String
    /// The plan, printed (schemas with checksums, declared stages).
    public var plan: String

    /// The reason, then the plan.
    public var description: String { "migration plan refused, nothing was written: \(reason)\n\(plan)" }
}
