import Foundation

/// The migration of a store described by a model directory and a target version — what
/// stratad runs when it opens a configured store and what `stratactl migrate` runs: through
/// the directory's version graph from the version the store records to the target, hop by hop,
/// each hop a lightweight migration or a custom stage where one goes exactly from the hop's
/// source to its destination, each committed on its own (the backup rule, deferral and the
/// data-loss guard come with ``StagedMigrationOptions``). When it fails, the error names the
/// version the store is at and the hop that failed.
///
/// ```swift
/// let migration = DirectoryMigration(directory: directory, targetVersion: "Aircraft 3", customStages: stages)
/// let metadata = try PersistentStore.metadata(at: url)
/// if migration.applies(to: metadata) {
///     let route = try migration.route(from: metadata)
///     try migration.run(route, storeAt: url, from: metadata) { print($0) }
/// }
/// ```
public struct DirectoryMigration: Sendable {
    /// The model directory whose version graph the migration follows.
    public let directory: ModelDirectory
    /// The version to reach.
    public let targetVersion: String
    /// Custom stages (a stage file's); a hop that one covers runs it instead of inference.
    public let customStages: [MigrationStage]

    /// A migration of `directory`'s stores to `targetVersion`.
    public init(directory: ModelDirectory, targetVersion: String, customStages: [MigrationStage] = []) {
        self.directory = directory
        self.targetVersion = targetVersion
        self.customStages = customStages
    }

    /// Whether the store at `metadata` migrates through the graph: its checksum is a version of
    /// the directory that comes before the target. Any other store (one at the target, one whose
    /// version the directory knows only by name, one past the target) opens as it is.
    public func applies(to metadata: StoreMetadata) -> Bool {
        guard let target = directory.version(named: targetVersion), metadata.modelChecksum != target.checksum,
              let start = directory.versions.lastIndex(where: { $0.checksum == metadata.modelChecksum }),
              let end = directory.versions.firstIndex(where: { $0.version == targetVersion }) else { return false }
        return start < end
    }

    /// The hops from the store's version to the target, with the manager that runs them.
    public func route(from metadata: StoreMetadata) throws(StagedMigrationError) -> Route {
        let path = try ProgressiveMigrationGraph(directory: directory)
            .path(fromChecksum: metadata.modelChecksum, storeVersion: metadata.modelVersion, to: targetVersion)
        return Route(path: path, manager: try path.manager(customStages: customStages), customStages: customStages)
    }

    /// Migrates the store at `url`, recorded at `metadata`, along `route`. `progress` hears the
    /// first hop start before the run (whose checkpoint may wait for another process's lock),
    /// then every step of the run (``StagedMigrationProgress``).
    ///
    /// - Throws: ``DirectoryMigrationError``: the version the store is at, the failing hop,
    ///   whether earlier hops committed, and the ``StagedMigrationError``.
    @discardableResult
    public func run(_ route: Route, storeAt url: URL, from metadata: StoreMetadata, options: StagedMigrationOptions = StagedMigrationOptions(),
                    progress: ((StagedMigrationProgress) -> Void)? = nil) throws(DirectoryMigrationError) -> StagedMigrationReport {
        let hops = route.path.hops
        var committed = metadata.modelVersion
        var committedHops = 0
        if let first = hops.first {
            progress?(StagedMigrationProgress(phase: .hopStarted, stage: 0, stageCount: hops.count, stageLabel: route.customLabel(ofHop: 1) ?? "lightweight",
                                              hop: 1, hopCount: hops.count, fromVersion: first.from.version, toVersion: first.to.version,
                                              rowsTouched: 0, rowsWritten: 0))
        }
        do {
            // The metadata the caller read is not read again.
            return try route.manager.migrateStore(at: url, options: options, metadata: metadata) { step in
                if step.phase == .hopCommitted { (committed, committedHops) = (step.toVersion, step.hop) }
                // The first hop's start was announced above.
                if step.phase == .hopStarted && step.hop == 1 { return }
                progress?(step)
            }
        } catch {
            // The whole path is refused before anything is written (every entity dropped): no one hop.
            var index = committedHops < hops.count && error.code != .dropsEveryEntity ? committedHops : nil
            if error.code == .notInferable {
                // Refused while every hop is inferred, before anything was written: the first
                // lightweight hop that cannot be.
                index = hops.indices.first { route.customLabel(ofHop: $0 + 1) == nil
                    && (try? MigrationPlan.infer(from: hops[$0].from, to: hops[$0].to)) == nil } ?? index
            }
            let failing = index.map { i in
                DirectoryMigrationError.Hop(from: hops[i].from.version, to: hops[i].to.version, number: i + 1, count: hops.count,
                                            customLabel: route.customLabel(ofHop: i + 1))
            }
            let version = error.completedVersion ?? committed
            throw DirectoryMigrationError(error: error, storeVersion: version, hop: failing, changed: version != metadata.modelVersion)
        }
    }

    /// The hops a migration takes and the manager that runs them.
    public struct Route: Sendable {
        /// The versions from the store's to the target.
        public let path: ProgressiveMigrationPath
        /// The staged migration that runs the hops.
        public let manager: StagedMigrationManager
        /// The labels of the custom stages on the path, by hop number (1-based).
        public let customLabels: [Int: String]
        /// Custom stages not on the path (folded or routed around): their SQL does not run.
        public let unusedCustomStages: [MigrationStage]

        init(path: ProgressiveMigrationPath, manager: StagedMigrationManager, customStages: [MigrationStage]) {
            self.path = path
            self.manager = manager
            var labels: [Int: String] = [:]
            for stage in customStages {
                guard case .custom(let from, let to, _, _) = stage.kind,
                      let source = try? from.resolve(), let destination = try? to.resolve() else { continue }
                for (i, hop) in path.hops.enumerated() where hop.from.checksum == source.checksum && hop.to.checksum == destination.checksum {
                    labels[i + 1] = stage.label
                }
            }
            self.customLabels = labels
            self.unusedCustomStages = path.unusedCustomStages(customStages)
        }

        /// The custom stage's label for hop `number` (1-based); nil for a lightweight hop.
        public func customLabel(ofHop number: Int) -> String? { customLabels[number] }
    }
}
