import Foundation

/// The version graph of a progressive migration: each version names its successor with
/// `nextVersion` (or, without one, is followed by the next version of the directory), so old
/// versions can fold into one jump (`Post 1` → `Post 3`) and a broken version can be routed
/// around (`Post 2` names no store's path once `Post 1` points past it).
///
/// ```swift
/// let graph = ProgressiveMigrationGraph(directory: try ModelDirectory(url: modelsURL))
/// let path = try graph.path(fromChecksum: metadata.modelChecksum, storeVersion: metadata.modelVersion,
///                           to: "Post 4")
/// print(path)   // Post 1 -> Post 2 -> Post 3 -> Post 4
/// let manager = try path.manager(customStages: [splitContent])
/// try manager.migrateStore(at: storeURL)
/// ```
public struct ProgressiveMigrationGraph: Sendable {
    /// Every version, in the directory's order.
    public let versions: [ObjectModel]

    /// A graph of `versions`, linked by their `nextVersion`.
    public init(versions: [ObjectModel]) { self.versions = versions }
    /// The graph of a model directory's versions.
    public init(directory: ModelDirectory) { self.versions = directory.versions }

    /// The version a store at `version` migrates to next: its `nextVersion`, or the next
    /// version in directory order; nil for the last one.
    public func successor(of version: ObjectModel) -> ObjectModel? {
        if let next = version.nextVersion { return versions.first { $0.version == next } }
        guard let i = versions.firstIndex(where: { $0.version == version.version }), i + 1 < versions.count else { return nil }
        return versions[i + 1]
    }

    /// The path from the store's version (found by checksum) to `target` (a version name).
    ///
    /// - Throws: ``StagedMigrationError`` `storeVersionNotInChain` when no version has the
    ///   store's checksum, `noPath` when following successors never reaches `target` (it is
    ///   behind the store, jumped over, or after a version with no successor).
    public func path(fromChecksum checksum: String, storeVersion: String = "?", to target: String) throws(StagedMigrationError) -> ProgressiveMigrationPath {
        let names = versions.map(\.version).joined(separator: ", ")
        guard let destination = versions.first(where: { $0.version == target }) else {
            throw StagedMigrationError(.noPath, "the target version '\(target)' is not in the model (versions: \(names)); name one of these")
        }
        // Several versions may share a checksum; the store is at the latest of them.
        guard let start = versions.last(where: { $0.checksum == checksum }) else {
            throw StagedMigrationError(.storeVersionNotInChain, "the store is at version '\(storeVersion)' (checksum \(checksum)), which is none of the model's versions (\(names)); add that version's model file to the directory")
        }
        return try path(from: start, to: destination)
    }

    /// The path from one version to another, following successors.
    public func path(from start: ObjectModel, to destination: ObjectModel) throws(StagedMigrationError) -> ProgressiveMigrationPath {
        func index(_ m: ObjectModel) -> Int { versions.firstIndex { $0.version == m.version } ?? -1 }
        if index(destination) < index(start) {
            throw StagedMigrationError(.noPath, "no path from '\(start.version)' to '\(destination.version)': the store is already past it (downgrades are not supported)")
        }
        var path = [start]
        var current = start
        while current.version != destination.version && current.checksum != destination.checksum {
            guard let next = successor(of: current) else {
                throw StagedMigrationError(.noPath, "no path from '\(start.version)' to '\(destination.version)': '\(current.version)' is the last version and names no nextVersion; \(index(destination) < index(start) ? "the store is already past '\(destination.version)' (downgrades are not supported)" : "set its nextVersion")")
            }
            if path.contains(where: { $0.version == next.version }) {
                throw StagedMigrationError(.noPath, "no path from '\(start.version)' to '\(destination.version)': nextVersion links loop back to '\(next.version)' (\((path + [next]).map(\.version).joined(separator: " -> "))); fix the nextVersion of '\(current.version)'")
            }
            if index(next) > index(destination) && index(current) < index(destination) {
                throw StagedMigrationError(.noPath, "no path from '\(start.version)' to '\(destination.version)': '\(current.version)' jumps to '\(next.version)', over '\(destination.version)'; migrate to '\(next.version)' instead, or change the nextVersion of '\(current.version)'")
            }
            path.append(next)
            current = next
        }
        // Versions with the same checksum as their predecessor store data identically: no hop.
        var hopsPath: [ObjectModel] = []
        for model in path where hopsPath.last?.checksum != model.checksum { hopsPath.append(model) }
        if hopsPath.last?.version != path.last?.version, let final = path.last { hopsPath[hopsPath.count - 1] = final }
        let onPath = Set(path.map(\.version))
        let skipped = versions.filter { index($0) > index(start) && index($0) < index(destination) && !onPath.contains($0.version) }.map(\.version)
        return ProgressiveMigrationPath(versions: hopsPath, skipped: skipped, graph: versions)
    }
}

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
