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
