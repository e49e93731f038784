import Foundation
import GRDB
import Logging

/// Imports a Core Data SQLite store into a new Strata store, then (optionally) migrates it
/// through the model bundle's versions — the library side of `stratactl import-coredata`.
///
/// ```swift
/// let importer = try CoreDataStoreImporter(bundle: URL(filePath: "App.xcdatamodeld"),
///                                          options: .init(toVersion: "App 3"))
/// let report = try importer.importStore(at: URL(filePath: "App.sqlite"), to: URL(filePath: "var/app.sqlite"))
/// print(report.importedVersion, report.objects)   // "App 2" ["Item": 1200, "Tag": 40]
/// ```
///
/// The Core Data store is read from a private copy (its `-wal` and `-shm` too): the original
/// files stay byte-identical and nothing appears next to them; rows that live only in the
/// `-wal` are imported. The store's version is found by its layout
/// (``CoreDataVersionMatch``). Objects keep their primary keys; values are converted as
/// docs/CoreDataImport.md describes; binary data stored outside the database is read from
/// the store's `.<name>_SUPPORT/_EXTERNAL_DATA` directory. The new store is built under a
/// temporary name next to the destination and appears at the destination only when
/// everything — import and migration — succeeded.
public struct CoreDataStoreImporter: Sendable {
    /// How to import.
    public struct Options: Sendable {
        /// The store's version, when its layout does not single one out (`--from`).
        public var fromVersion: String?
        /// Migrate the imported store to this version (`--to`); nil stays at the store's version.
        public var toVersion: String?
        /// Custom stages for the migration (SQL stage files load with ``MigrationStageFile``).
        public var customStages: [MigrationStage]
        /// A stage file (YAML) with custom stages, resolved against the bundle's versions.
        public var stageFile: URL?
        /// Core Data mapping models (`.xcmappingmodel`) whose hops run as generated custom
        /// stages (``CoreDataMappingStage``; `--mapping`).
        public var mappingModels: [URL] = []
        /// Also use the `.xcmappingmodel`s beside the bundle (where Xcode keeps them) whose
        /// versions are the bundle's.
        public var findsMappingModels = true
        /// Allow migration hops that discard stored data (they are reported in
        /// ``CoreDataImportReport/warnings`` either way); off (`--no-discard`), such a lightweight
        /// hop fails the import (``CoreDataImportError/Code/migrationFailed``) and nothing is written.
        public var allowsDiscards = true
        /// Leave the migration's cleanup in the deferred ledger instead of running it.
        public var deferCleanup: Bool
        /// Where the import logs.
        public var logger: Logger

        /// Options: the store's version is found in the bundle, the import goes to the bundle's current version with no custom stages, and the cleanup runs before the import returns.
        public init(fromVersion: String? = nil, toVersion: String? = nil, customStages: [MigrationStage] = [],
                    stageFile: URL? = nil, deferCleanup: Bool = false, logger: Logger = Logger(label: "io.strata.coredata-import")) {
            self.fromVersion = fromVersion
            self.toVersion = toVersion
            self.customStages = customStages
            self.stageFile = stageFile
            self.deferCleanup = deferCleanup
            self.logger = logger
        }
    }

    /// The model bundle's versions.
    public let bundle: CoreDataModelBundle
    /// The importer's options.
    public var options: Options

    /// An importer for stores of `bundle`'s versions.
    public init(bundle: CoreDataModelBundle, options: Options = Options()) {
        self.bundle = bundle
        self.options = options
    }

    /// Reads the bundle at `url`.
    ///
    /// - Throws: ``CoreDataImportError/Code/unreadableModel`` when the bundle cannot be read
    ///   or none of its versions can.
    public init(bundle url: URL, options: Options = Options()) throws(CoreDataImportError) {
        let bundle: CoreDataModelBundle
        do {
            bundle = try CoreDataModelBundle(url: url)
        } catch {
            throw CoreDataImportError(.unreadableModel, "the model bundle cannot be read: \(error)")
        }
        self.init(bundle: bundle, options: options)
    }

    // MARK: - Identifying

    /// Finds the version the store at `url` was written with (``Options/fromVersion`` is
    /// checked instead when set). Reads a private copy; writes nothing.
    public func identifyVersion(ofStoreAt url: URL) throws(CoreDataImportError) -> CoreDataVersionMatch {
        try checkBundle()
        let copy = try CoreDataStoreCopy(source: url)
        defer { copy.discard() }
        return try CoreDataVersionMatch.match(copy, bundle: bundle, given: options.fromVersion).0
    }

    private func checkBundle() throws(CoreDataImportError) {
        guard !bundle.readableModels.isEmpty else {
            let problems = bundle.versions.compactMap { $0.error.map { "\n  - \($0)" } }.joined()
            throw CoreDataImportError(.unreadableModel, "no version of the model bundle \(bundle.url.path) can be read; fix them:\(problems)")
        }
    }

    // MARK: - Importing

    /// Imports the Core Data store at `source` into a new Strata store at `destination`
    /// (which must not exist), then migrates it to ``Options/toVersion``.
    ///
    /// Every bad input is refused before anything is written, in this order: a destination
    /// that exists, a bundle that cannot be read, a source that is missing, not SQLite, not a
    /// Core Data store or has unreadable metadata, a store whose version is not (or not
    /// uniquely) in the bundle, a migration that cannot be planned. Problems found while
    /// importing (a missing external file, an unreadable value) or migrating (a hop refused
    /// because objects would be invalid) remove the partial store.
    @discardableResult
    public func importStore(at source: URL, to destination: URL,
                            progress: ((CoreDataImportProgress) -> Void)? = nil) throws(CoreDataImportError) -> CoreDataImportReport {
        let started = ContinuousClock.now
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: destination.path + suffix) {
            throw CoreDataImportError(.destinationExists, "the destination \(destination.path + suffix) already exists; choose a new path or remove it (nothing was written)")
        }
        try checkBundle()
        let directory = try modelDirectory()
        if let target = options.toVersion { try checkTarget(target) }
        progress?(CoreDataImportProgress(phase: .copyingStore, fraction: 0, detail: source.lastPathComponent))
        let copy = try CoreDataStoreCopy(source: source)
        defer { copy.discard() }
        progress?(CoreDataImportProgress(phase: .matchingVersion, fraction: 0.02, detail: ""))
        let (match, mapping) = try CoreDataVersionMatch.match(copy, bundle: bundle, given: options.fromVersion)
        let migration = try plannedMigration(from: match.version, directory: directory)

        // Build the new store under a temporary name next to the destination.
        let parent = destination.deletingLastPathComponent()
        let createdParent = !FileManager.default.fileExists(atPath: parent.path)
        let temporary = parent.appending(path: ".\(destination.lastPathComponent).importing-\(UUID().uuidString.prefix(8))")
        func removeTemporary() {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: temporary.path + suffix) }
            if createdParent, (try? FileManager.default.contentsOfDirectory(atPath: parent.path))?.isEmpty == true {
                try? FileManager.default.removeItem(at: parent)
            }
        }
        do {
            let (counts, warnings) = try importRows(copy: copy, mapping: mapping, match: match, into: temporary, progress: progress)
            var report = CoreDataImportReport(
                source: source, destination: destination, coreDataStoreUUID: copy.metadata.storeUUID,
                coreDataVersionIdentifiers: copy.metadata.versionIdentifiers, importedVersion: match.version.version,
                method: match.method, finalVersion: match.version.version, objects: counts.objects, links: counts.links,
                migration: nil, warnings: warnings, duration: .zero)
            report.staleEntityNames = match.staleEntityNames
            // Broken versions the import did not need (one it needed would have stopped it).
            report.warnings += bundle.unreadableVersions.map { "version '\($0.name)' of the model bundle cannot be read and was not needed: \($0.error!); fix it before a migration passes it" }
            if let (manager, _) = migration {
                report.migration = try migrate(temporary, manager: manager, progress: progress)
                report.finalVersion = report.migration?.endVersion ?? report.finalVersion
                report.warnings += report.migration?.discardWarnings ?? []
            }
            try finish(temporary, at: destination)
            report.duration = ContinuousClock.now - started
            progress?(CoreDataImportProgress(phase: .finished, fraction: 1, detail: ""))
            options.logger.notice("imported Core Data store", metadata: [
                "strata.store": "\(destination.path)", "strata.coredata.store": "\(source.path)",
                "strata.version": "\(match.version.version)", "strata.final": "\(report.finalVersion)",
            ])
            return report
        } catch {
            removeTemporary()
            throw error
        }
    }

    /// The readable versions as a model directory (for stage files and migration paths).
    private func modelDirectory() throws(CoreDataImportError) -> ModelDirectory {
        let readable = bundle.readableModels
        let current = readable.contains { $0.version == bundle.currentName } ? bundle.currentName : readable.last!.version
        do {
            return try ModelDirectory(versions: readable, current: current)
        } catch {
            throw CoreDataImportError(.unreadableModel, "the model bundle's versions cannot be used together: \(error)")
        }
    }

    private func checkTarget(_ target: String) throws(CoreDataImportError) {
        guard let version = bundle.version(named: target) else {
            throw CoreDataImportError(.unknownVersion, "the version to migrate to, '\(target)', is not in the bundle (versions: \(bundle.versions.map(\.name).joined(separator: ", "))); name one of these", version: target)
        }
        if let error = version.error {
            throw CoreDataImportError(.unreadableModel, "the version to migrate to cannot be read: \(error); fix it", version: target)
        }
    }

    /// The migration to ``Options/toVersion``: its manager and path, validated and every hop
    /// inferred before anything is written; nil when there is nothing to migrate.
    private func plannedMigration(from version: ObjectModel, directory: ModelDirectory) throws(CoreDataImportError) -> (StagedMigrationManager, ProgressiveMigrationPath)? {
        guard let target = options.toVersion, target != version.version else { return nil }
        let skipped = bundle.versions.drop { $0.name != version.version }.prefix { $0.name != target }.filter { $0.error != nil }
        if let broken = skipped.first {
            throw CoreDataImportError(.unreadableModel, "the migration from '\(version.version)' to '\(target)' passes version '\(broken.name)', which cannot be read: \(broken.error!); fix it", version: broken.name)
        }
        do {
            var stages = options.customStages
            if let file = options.stageFile { stages += try MigrationStageFile.load(contentsOf: file, directory: directory) }
            stages += try mappingStages(directory: directory).map(\.stage)
            let path = try ProgressiveMigrationGraph(directory: directory).path(from: version, to: directory.version(named: target)!)
            guard !path.isEmpty else { return nil }
            let manager = try path.manager(customStages: stages)
            let chain = try manager.validate()
            for hop in chain.hops { _ = try hop.plan() }
            return (manager, path)
        } catch {
            throw CoreDataImportError(.migrationFailed, "the migration from '\(version.version)' to '\(target)' cannot run: \(error) (nothing was written)", version: target)
        }
    }

    /// The stages generated from ``Options/mappingModels`` and (``Options/findsMappingModels``)
    /// the mapping models beside the bundle.
    public func mappingStages(directory: ModelDirectory) throws(CoreDataMappingError) -> [CoreDataMappingStage] {
        let given = options.mappingModels
        let beside = options.findsMappingModels ? CoreDataMappingModel.mappingModels(besideBundleAt: bundle.url, except: given) : []
        return try CoreDataMappingStage.load(given, directory: directory) + CoreDataMappingStage.load(beside, directory: directory, implicit: true)
    }

    // MARK: - Steps

    private func importRows(copy: CoreDataStoreCopy, mapping: CoreDataStoreMapping, match: CoreDataVersionMatch, into url: URL,
                            progress: ((CoreDataImportProgress) -> Void)?) throws(CoreDataImportError) -> (CoreDataRowCopier.Counts, [String]) {
        let model = match.version
        do {
            let created = try PersistentStore.open(at: url, model: model, options: StoreOptions(logger: options.logger))
            try created.close()
        } catch {
            throw CoreDataImportError(.io, "cannot create the new store at \(url.path): \(error)")
        }
        let scale = options.toVersion == nil ? 0.95 : 0.6
        let copier = CoreDataRowCopier(
            copy: copy, mapping: mapping, layout: StorageLayout(model: model),
            reader: CoreDataValueReader(externalDataDirectory: CoreDataValueReader.externalDataDirectory(forStoreAt: copy.source), store: copy.source.path),
            progress: { table, done, total in
                progress?(CoreDataImportProgress(phase: .importingRows, fraction: 0.03 + scale * Double(done) / Double(max(total, 1)), detail: table))
            })
        do {
            var configuration = PersistentStore.connectionConfiguration(readOnly: false, busyTimeout: 5)
            configuration.foreignKeysEnabled = false
            configuration.label = "strata.coredata-import"
            let queue = try DatabaseQueue(path: url.path, configuration: configuration)
            defer { try? queue.close() }
            let total = try copier.totalRows()
            var warnings: [String] = []
            let counts = try queue.write { db in
                let counts = try copier.copyAll(into: db, total: total)
                warnings += try copier.removeDanglingReferences(in: db)
                let objects = counts.objects.values.reduce(0, +), links = counts.links.values.reduce(0, +)
                let identifiers = copy.metadata.versionIdentifiers.isEmpty ? "none" : copy.metadata.versionIdentifiers.joined(separator: ", ")
                try MetadataSchema.appendHistory(.init(
                    at: Date(), kind: "coredata-import", fromVersion: nil, fromChecksum: nil, toVersion: model.version, toChecksum: model.checksum,
                    detail: "imported from Core Data store \(copy.source.lastPathComponent): NSStoreUUID \(copy.metadata.storeUUID ?? "none"); NSStoreModelVersionIdentifiers \(identifiers); version '\(model.version)' \(Self.describe(match.method))\(Self.describeStale(match.staleEntityNames)); \(objects) object(s), \(links) link(s)"), in: db)
                return counts
            }
            progress?(CoreDataImportProgress(phase: .validating, fraction: 0.03 + scale, detail: ""))
            warnings += try queue.read { db in try StoreValidation.violations(of: model, in: db) }.map { "\($0) (as stored by Core Data; saving such an object fails until it is fixed)" }
            try queue.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
            return (counts, warnings)
        } catch let error as CoreDataImportError {
            throw error
        } catch {
            throw CoreDataImportError(.io, "writing the new store \(url.path) failed: \(StoreError.from(error, path: url.path, while: "importing"))")
        }
    }

    /// `; Z_PRIMARYKEY keeps the old name 'A' of 'B'`, or nothing.
    static func describeStale(_ names: [String: String]) -> String {
        guard !names.isEmpty else { return "" }
        return "; Z_PRIMARYKEY keeps old entity names (renamed by renaming identifier): " + names.sorted { $0.key < $1.key }.map { "'\($0.value)' for '\($0.key)'" }.joined(separator: ", ")
    }

    static func describe(_ method: CoreDataVersionMatch.Method) -> String {
        switch method {
        case .layout: return "matched by layout"
        case .versionIdentifier: return "matched by layout and version identifier"
        case .entityHashes: return "matched by layout and the entities of the version hashes"
        case .given: return "given with --from"
        }
    }

    private func migrate(_ url: URL, manager: StagedMigrationManager, progress: ((CoreDataImportProgress) -> Void)?) throws(CoreDataImportError) -> StagedMigrationReport {
        var migrationOptions = StagedMigrationOptions(deferCleanup: options.deferCleanup)
        migrationOptions.logger = options.logger
        migrationOptions.allowsDiscards = options.allowsDiscards
        do {
            return try manager.migrateStore(at: url, options: migrationOptions) { step in
                progress?(CoreDataImportProgress(phase: .migrating, fraction: 0.65 + 0.33 * step.fraction, detail: step.description))
            }
        } catch {
            var reason = error.reason
            if let completed = error.completedVersion { reason += " (the migration reached '\(completed)')" }
            throw CoreDataImportError(.migrationFailed, "the imported store could not be migrated: \(reason); no store was written — fix the model or the stages and import again", version: options.toVersion)
        }
    }

    /// Moves the finished store to its destination, refusing to replace a file that appeared meanwhile.
    private func finish(_ temporary: URL, at destination: URL) throws(CoreDataImportError) {
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: temporary.path + suffix) }
        guard link(temporary.path, destination.path) == 0 else {
            let reason = errno == EEXIST ? "it was created while the import ran" : String(cString: strerror(errno))
            throw CoreDataImportError(errno == EEXIST ? .destinationExists : .io, "cannot create \(destination.path): \(reason)")
        }
        unlink(temporary.path)
    }
}
