import Foundation
import Logging
import Strata

/// The migration of a hosted store at open, through its model directory's version graph:
/// from the version the store records to the configured one, hop by hop — each hop a
/// lightweight migration, or a custom stage of the store's stage file (`stages:`, the SQL
/// stages `stratactl migrate --stages` reads) where one goes exactly from the hop's source to
/// its destination — each hop committed on its own, cleanup deferred as configured.
///
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
    /// Where to copy the store before the first hop (`backup: true`; nil: no copy).
    var backup: URL? = nil
    var notifier = SystemdNotifier()

    /// How much more start-up time each hop asks systemd for (the registry's extender keeps
    /// asking every 2 s while a hop runs).
    static let hopTimeoutExtension: Duration = .seconds(10)

    /// Whether the store at `metadata` is migrated through the graph: its checksum is a version
    /// of the directory that comes before the target. Any other store (one at the target, one
    /// whose version the directory knows only by name, one past the target) opens as before.
    static func applies(to metadata: StoreMetadata, directory: ModelDirectory, target: ObjectModel) -> Bool {
        guard metadata.modelChecksum != target.checksum,
              let start = directory.versions.lastIndex(where: { $0.checksum == metadata.modelChecksum }),
              let end = directory.versions.firstIndex(where: { $0.version == target.version }) else { return false }
        return start < end
    }

    // MARK: - Running

    /// Migrates the store at `url` (recorded at `metadata`) to the target; nil when it is there,
    /// else the failure, with the version the store is at.
    func run(at url: URL, from metadata: StoreMetadata) -> StoreRegistry.StoreOpenFailure? {
        let started = ContinuousClock.now
        let customStages: [MigrationStage]
        let path: ProgressiveMigrationPath
        let manager: StagedMigrationManager
        do {
            customStages = try loadStages()
            path = try ProgressiveMigrationGraph(directory: directory)
                .path(fromChecksum: metadata.modelChecksum, storeVersion: metadata.modelVersion, to: target.version)
            manager = try path.manager(customStages: customStages)
        } catch {
            return failure(error, at: metadata.modelVersion, hop: nil)
        }
        let customLabels = Self.customLabels(on: path, customStages)
        for stage in path.unusedCustomStages(customStages) {
            logger.notice("custom stage not on the store's path; its SQL does not run", metadata: [
                "strata.stage": "\(stage.label)", "strata.path": "\(path)",
            ])
        }
        logger.notice("migrating store through the version graph", metadata: [
            "strata.from": "\(metadata.modelVersion)", "strata.to": "\(target.version)", "strata.path": "\(path)",
            "strata.hops": "\(path.hops.count)", "strata.stages_file": "\(configuration.stagesFile ?? "none")",
        ])
        // `backup: true`: before the first hop when a hop destroys data (a custom stage may
        // destroy anything), otherwise online as the first deferred task.
        let options = StagedMigrationOptions(deferCleanup: configuration.deferCleanup, busyTimeout: configuration.busyTimeout.seconds,
                                             logger: logger, allowsDroppingAllEntities: configuration.allowsDroppingAllEntities,
                                             onlineBackupURL: backup)
        var committed = metadata.modelVersion
        var committedHops = 0
        func announce(hop number: Int, rows: Int64?) {
            let hop = path.hops[number - 1]
            let label = customLabels["\(hop.from.version)>\(hop.to.version)"]
            let status = Self.status(store: configuration.name, from: hop.from.version, to: hop.to.version, number: number,
                                     count: path.hops.count, customLabel: label)
            notifier.extendTimeout(by: Self.hopTimeoutExtension)
            notifier.status(status)
            var fields: Logger.Metadata = ["strata.from": "\(hop.from.version)", "strata.to": "\(hop.to.version)",
                                           "strata.stage": "\(label ?? "lightweight")", "strata.hop": "\(number)/\(path.hops.count)"]
            if let rows { fields["strata.rows"] = "\(rows)" }
            logger.info("\(status)", metadata: fields)
        }
        // The first hop is announced before the run starts: the checkpoint before it may wait
        // for another process's lock (busy_timeout), and systemd should know why.
        if !path.hops.isEmpty { announce(hop: 1, rows: nil) }
        do {
            let report = try manager.migrateStore(at: url, options: options) { progress in
                switch progress.phase {
                case .hopStarted where progress.hop > 1 && progress.hop <= path.hops.count:
                    announce(hop: progress.hop, rows: progress.rowsTouched)
                case .hopCommitted:
                    committed = progress.toVersion
                    committedHops = progress.hop
                default:
                    break
                }
            }
            logger.notice("migrated store through the version graph", metadata: [
                "strata.from": "\(report.startVersion)", "strata.to": "\(report.endVersion)", "strata.hops": "\(report.hops.count)",
                "strata.rows": "\(report.hops.reduce(0) { $0 + $1.rowsWritten })", "strata.pending": "\(report.pendingDeferredTasks)",
                "strata.ms": "\(Int((ContinuousClock.now - started).seconds * 1000))",
            ])
            return nil
        } catch {
            let hops = path.hops
            // The whole path is refused before anything is written (every entity dropped): no one hop.
            var index = committedHops < hops.count && error.code != .dropsEveryEntity ? committedHops : nil
            if error.code == .notInferable {
                // Refused while every hop is inferred, before anything was written: the first
                // lightweight hop that cannot be.
                index = hops.firstIndex { customLabels["\($0.from.version)>\($0.to.version)"] == nil
                    && (try? MigrationPlan.infer(from: $0.from, to: $0.to)) == nil } ?? index
            }
            let failing = index.map { i in
                FailingHop(from: hops[i].from.version, to: hops[i].to.version, number: i + 1, count: hops.count,
                           customLabel: customLabels["\(hops[i].from.version)>\(hops[i].to.version)"])
            }
            let version = error.completedVersion ?? committed
            return failure(error, at: version, hop: failing, changed: version != metadata.modelVersion)
        }
    }

    /// The custom stages of the stage file (none without `stages:`). The file is read at every
    /// open, so a reload after fixing it runs the fixed SQL.
    private func loadStages() throws(StagedMigrationError) -> [MigrationStage] {
        guard let file = configuration.stagesFile else { return [] }
        return try MigrationStageFile.load(contentsOf: URL(fileURLWithPath: file), directory: directory)
    }

    /// The labels of the custom stages the path runs, by hop (`from>to` version names).
    static func customLabels(on path: ProgressiveMigrationPath, _ stages: [MigrationStage]) -> [String: String] {
        var labels: [String: String] = [:]
        for stage in stages {
            guard case .custom(let from, let to, _, _) = stage.kind,
                  let source = try? from.resolve(), let destination = try? to.resolve() else { continue }
            for hop in path.hops where hop.from.checksum == source.checksum && hop.to.checksum == destination.checksum {
                labels["\(hop.from.version)>\(hop.to.version)"] = stage.label
            }
        }
        return labels
    }

    // MARK: - Messages

    /// `fleet: migrating Aircraft 2 → Aircraft 3 (stage 'move flightData into FlightData', 2 of 2)`.
    static func status(store: String, from: String, to: String, number: Int, count: Int, customLabel: String?) -> String {
        let kind = customLabel.map { "stage '\($0)'" } ?? "lightweight"
        return "\(store): migrating \(from) → \(to) (\(kind), \(number) of \(count))"
    }

    /// The hop a migration failed in.
    struct FailingHop {
        var from: String
        var to: String
        var number: Int
        var count: Int
        /// The custom stage's label; nil for a lightweight hop.
        var customLabel: String?
    }

    /// The store's failure: the code, the version the store is at, the hop and its stage, the
    /// error, and what to do.
    private func failure(_ error: StagedMigrationError, at version: String, hop: FailingHop?, changed: Bool = false) -> StoreRegistry.StoreOpenFailure {
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
