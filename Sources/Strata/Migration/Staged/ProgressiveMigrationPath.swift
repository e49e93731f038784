import Foundation

/// A path through a ``ProgressiveMigrationGraph``.
public struct ProgressiveMigrationPath: Sendable, CustomStringConvertible {
    /// The versions visited, the store's first (one per distinct checksum).
    public let versions: [ObjectModel]
    /// Versions between the ends that the path does not visit (folded or routed around).
    public let skipped: [String]
    let graph: [ObjectModel]

    /// The hops, as (from, to) pairs.
    public var hops: [(from: ObjectModel, to: ObjectModel)] { zip(versions, versions.dropFirst()).map { ($0, $1) } }
    /// Whether there is nothing to migrate (fewer than two versions).
    public var isEmpty: Bool { versions.count < 2 }

    /// `A -> B -> C`, with the skipped versions.
    public var description: String {
        versions.map(\.version).joined(separator: " -> ") + (skipped.isEmpty ? "" : " (skips \(skipped.joined(separator: ", ")))")
    }

    /// A staged migration manager over the path: each hop is lightweight, unless one of
    /// `customStages` goes exactly from its source to its destination (by checksum).
    ///
    /// - Throws: ``StagedMigrationError`` when a custom stage's references cannot be resolved.
    public func manager(customStages: [MigrationStage] = []) throws(StagedMigrationError) -> StagedMigrationManager {
        var custom: [String: MigrationStage] = [:]
        for stage in customStages {
            guard case .custom(let from, let to, _, _) = stage.kind else { continue }
            custom["\(try from.resolve().checksum)>\(try to.resolve().checksum)"] = stage
        }
        var stages: [MigrationStage] = []
        var pending: [ObjectModel] = []
        func flush() {
            if pending.count > 1 {
                stages.append(.lightweight(pending.map(\.checksum), label: "lightweight \(pending.map(\.version).joined(separator: " -> "))"))
            }
            pending = []
        }
        for (from, to) in hops {
            if let stage = custom["\(from.checksum)>\(to.checksum)"] {
                flush()
                stages.append(stage)
                pending = [to]
            } else {
                if pending.isEmpty { pending = [from] }
                pending.append(to)
            }
        }
        flush()
        if stages.isEmpty, let only = versions.first { stages = [.lightweight([only.checksum], label: "already at \(only.version)")] }
        return StagedMigrationManager(stages: stages, models: graph)
    }

    /// The custom stages of `stages` that the path does not use (it folds or routes around them).
    public func unusedCustomStages(_ stages: [MigrationStage]) -> [MigrationStage] {
        let pairs = Set(hops.map { "\($0.from.checksum)>\($0.to.checksum)" })
        return stages.filter { stage in
            guard case .custom(let from, let to, _, _) = stage.kind,
                  let a = try? from.resolve(), let b = try? to.resolve() else { return false }
            return !pairs.contains("\(a.checksum)>\(b.checksum)")
        }
    }
}
