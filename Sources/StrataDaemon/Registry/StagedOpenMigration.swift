import Foundation
import Logging
import Strata

/// The open of a hosted store, through the library's one entry point
/// (``DirectoryMigration/open(storeAt:directory:target:options:staged:stages:willMigrate:progress:)``),
/// which decides between the version graph and a lightweight migration at open. This type
/// turns what it hears into the daemon's words: the graph's progress into systemd's
/// `STATUS=` and `EXTEND_TIMEOUT_USEC=` and log lines, its failures into the store's reason.
///
/// Through the graph: from the version the store records to the configured one, hop by hop —
/// each hop a lightweight migration, or a custom stage of the store's stage file (`stages:`,
/// the SQL stages `stratactl migrate --stages` reads) where one goes exactly from the hop's
/// source to its destination — each hop committed on its own, cleanup deferred as configured.
/// Before each hop (the first one before the run's checkpoint, which may wait for another
/// process's lock) it sends `EXTEND_TIMEOUT_USEC` and a `STATUS=` line naming the hop
/// (`fleet: migrating Aircraft 2 → Aircraft 3 (stage 'move flightData into FlightData', 2 of 2)`).
/// A failing hop leaves the store at its last committed version; the failure names it, the
/// hop, the stage and the error, and says what to do (a reload resumes from there).
struct StagedOpenMigration {
    let configuration: StoreConfiguration
    let directory: ModelDirectory
    let target: ObjectModel
    let logger: Logger
    /// Where to copy the store before it migrates (`backup: true`; nil: no copy).
    var backup: URL? = nil
    var notifier = SystemdNotifier()

    /// How much more start-up time each hop asks systemd for (the registry's extender keeps
    /// asking every 2 s while a hop runs).
    static let hopTimeoutExtension: Duration = .seconds(10)

    // MARK: - Opening

    /// Opens the store at `url` for the target with `options` (whose lightweight migration
    /// runs when the graph does not apply); the store, or the failure with the version the
    /// store is at.
    func open(at url: URL, options: StoreOptions) -> Result<PersistentStore, StoreRegistry.StoreOpenFailure> {
        let started = ContinuousClock.now
        // `backup: true`: before the first hop when a hop destroys data (a custom stage may
        // destroy anything), otherwise online as the first deferred task.
        let configured = StagedMigrationOptions(deferCleanup: configuration.deferCleanup, busyTimeout: configuration.busyTimeout.seconds,
                                            logger: logger, allowsDroppingAllEntities: configuration.allowsDroppingAllEntities,
                                            onlineBackupURL: backup)
        var staged = configured
        staged.allowsDiscards = configuration.allowsDiscards
        // Readiness must not wait for a scan of each table a hop drops data from: the log
        // names what a hop discards; counted only when the counts decide (allow_discards: false).
        staged.countsDiscards = !configuration.allowsDiscards
        staged.walCheckpointing = options.walCheckpointing
        var route: DirectoryMigration.Route?
        do {
            let opened = try DirectoryMigration.open(
                storeAt: url, directory: directory, target: target, options: options, staged: staged, stages: loadStages,
                willMigrate: { chosen, metadata in
                    route = chosen
                    willMigrate(chosen, from: metadata)
                },
                progress: { progress in
                    // The first hop is announced before the run starts: the checkpoint before it may
                    // wait for another process's lock (busy_timeout), and systemd should know why.
                    guard let route, progress.phase == .hopStarted && progress.hop <= route.path.hops.count else { return }
                    announce(route, hop: progress.hop, rows: progress.hop > 1 ? progress.rowsTouched : nil)
                })
            if let report = opened.graphMigration {
                logger.notice("migrated store through the version graph", metadata: [
                    "strata.from": "\(report.startVersion)", "strata.to": "\(report.endVersion)", "strata.hops": "\(report.hops.count)",
                    "strata.rows": "\(report.hops.reduce(0) { $0 + $1.rowsWritten })", "strata.pending": "\(report.pendingDeferredTasks)",
                    "strata.ms": "\(Int((ContinuousClock.now - started).seconds * 1000))",
                ])
            }
            return .success(opened.store)
        } catch {
            switch error {
            case .store(let error): return .failure(StoreRegistry.StoreOpenFailure(reason: "\(error.code.rawValue): \(error.description)"))
            case .unknownVersion(let metadata): return .failure(StoreRegistry.StoreOpenFailure(reason: versionRefusal(metadata)))
            case .graph(let error): return .failure(failure(error.error, at: error.storeVersion, hop: error.hop, changed: error.changed))
            }
        }
    }

    private func willMigrate(_ route: DirectoryMigration.Route, from metadata: StoreMetadata) {
        for stage in route.unusedCustomStages {
            logger.notice("custom stage not on the store's path; its SQL does not run", metadata: [
                "strata.stage": "\(stage.label)", "strata.path": "\(route.path)",
            ])
        }
        logger.notice("migrating store through the version graph", metadata: [
            "strata.from": "\(metadata.modelVersion)", "strata.to": "\(target.version)", "strata.path": "\(route.path)",
            "strata.hops": "\(route.path.hops.count)", "strata.stages_file": "\(configuration.stagesFile ?? "none")",
        ])
    }

    private func announce(_ route: DirectoryMigration.Route, hop number: Int, rows: Int64?) {
        let path = route.path
        let hop = path.hops[number - 1]
        let label = route.customLabel(ofHop: number)
        let status = Self.status(store: configuration.name, from: hop.from.version, to: hop.to.version, number: number,
                                 count: path.hops.count, customLabel: label)
        notifier.extendTimeout(by: Self.hopTimeoutExtension)
        notifier.status(status)
        var fields: Logger.Metadata = ["strata.from": "\(hop.from.version)", "strata.to": "\(hop.to.version)",
                                       "strata.stage": "\(label ?? "lightweight")", "strata.hop": "\(number)/\(path.hops.count)"]
        if let rows { fields["strata.rows"] = "\(rows)" }
        logger.info("\(status)", metadata: fields)
    }

    /// The custom stages of the stage file (none without `stages:`). The file is read at every
    /// open, so a reload after fixing it runs the fixed SQL.
    func loadStages() throws(StagedMigrationError) -> [MigrationStage] {
        guard let file = configuration.stagesFile else { return [] }
        return try MigrationStageFile.load(contentsOf: URL(fileURLWithPath: file), directory: directory)
    }

    // MARK: - Messages

    /// Why a store whose metadata records a version that the configured model directory
    /// does not have (by checksum, nor by name) was not opened.
    func versionRefusal(_ metadata: StoreMetadata) -> String {
        let versions = directory.versions.map { "'\($0.version)' (\($0.checksum))" }.joined(separator: ", ")
        return "wrongModelDirectory: store '\(configuration.name)' (\(configuration.path)) was written with model version '\(metadata.modelVersion)' (checksum \(metadata.modelChecksum)), which is not a version of the configured model directory \(configuration.modelDirectory) (\(versions)); the store was left untouched. Point the store's `model:` at the directory of its model, or add its version to that directory"
    }

    /// `fleet: migrating Aircraft 2 → Aircraft 3 (stage 'move flightData into FlightData', 2 of 2)`.
    static func status(store: String, from: String, to: String, number: Int, count: Int, customLabel: String?) -> String {
        let kind = customLabel.map { "stage '\($0)'" } ?? "lightweight"
        return "\(store): migrating \(from) → \(to) (\(kind), \(number) of \(count))"
    }

    /// The store's failure: the code, the version the store is at, the hop and its stage, the
    /// error, and what to do.
    private func failure(_ error: StagedMigrationError, at version: String, hop: DirectoryMigrationError.Hop?, changed: Bool = false) -> StoreRegistry.StoreOpenFailure {
        // The same code as a refusal of the lightweight migration at open (docs/Daemon.md).
        let code = error.code == .dropsEveryEntity ? "migrationRefused" : error.code.rawValue
        var text = "\(code): store '\(configuration.name)' is at '\(version)'"
        if let hop {
            let kind = hop.customLabel.map { "stage '\($0)' of \(configuration.stagesFile ?? "the stage file")" } ?? "lightweight"
            text += "; the migration from '\(hop.from)' to '\(hop.to)' (\(kind), hop \(hop.number) of \(hop.count)) failed: \(error.reason)"
        } else {
            text += "; the migration to '\(target.version)' cannot run: \(error.reason)"
        }
        if let hop, hop.customLabel == nil, [.notInferable, .invalidObjects].contains(error.code) {
            if let file = configuration.stagesFile {
                text += ". This hop needs a custom stage: add one from '\(hop.from)' to '\(hop.to)' to \(file)"
            } else {
                text += ". This hop needs a custom stage: write a stage file with a stage from '\(hop.from)' to '\(hop.to)' (docs/StagedMigration.md) and add `stages: FILE` to store '\(configuration.name)' in the configuration"
            }
        }
        text += changed
            ? ". The hops before it are committed; after fixing, reload (`stratactl reload` or `systemctl reload stratad`) and the migration resumes from '\(version)'"
            : ". Nothing was changed; after fixing, reload (`stratactl reload` or `systemctl reload stratad`)"
        // One line (a stage's SQL in SQLite's message spans several): `stratactl stores` is a table.
        let oneLine = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        return StoreRegistry.StoreOpenFailure(reason: oneLine, version: version)
    }
}
