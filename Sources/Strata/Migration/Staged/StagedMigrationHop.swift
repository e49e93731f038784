import Foundation

/// One hop of a staged migration: from a version to the next, inferred, with a custom stage's handlers.
public struct StagedMigrationHop: Sendable {
    /// The stage's 1-based position and label.
    public let stage: Int
    /// The stage's label.
    public let stageLabel: String
    /// Whether the stage is custom (has handlers).
    public let isCustom: Bool
    /// The model migrated from.
    public let source: ObjectModel
    /// The model migrated to.
    public let destination: ObjectModel
    let willMigrate: MigrationStage.Handler?
    let didMigrate: MigrationStage.Handler?

    /// Infers the hop's lightweight plan.
    public func plan() throws(StagedMigrationError) -> MigrationPlan {
        do {
            return try MigrationPlan.infer(from: source, to: destination)
        } catch {
            throw StagedMigrationError(.notInferable,
                "stage \(stage) ('\(stageLabel)'), hop '\(source.version)' -> '\(destination.version)': \(error.reason)\(isCustom ? "" : "; split it with an intermediate version and a custom stage")",
                stage: stage, stageLabel: stageLabel, underlying: "\(error)")
        }
    }
}
