import Foundation
import Logging
import NIOPosix
import Strata

/// The stores the daemon hosts, by name. Opens them at start (a store that fails is kept as
/// failed and reported; the others serve), reconciles them with a reloaded configuration
/// (opening added stores, closing removed ones, reopening changed ones), and closes them all
/// on shutdown.
public actor StoreRegistry {
    private var stores: [String: HostedStore] = [:]
    private var order: [String] = []
    private let logger: Logger
    private let notifier: SystemdNotifier
    /// Who calls each store at which model version (kept across reopenings).
    public nonisolated let clients: ClientVersions
    /// Stores being closed and opened again by a reload: calls wait for them
    /// (``store(named:)``), woken when the store is back.
    private var reopening: Set<String> = []
    private var reopenWaiters: [String: [CheckedContinuation<Void, Never>]] = [:]
    /// How long a call waits for a store a reload reopens before it is refused.
    static let reopenWait: Duration = .seconds(10)

    /// Memberwise initializer.
    public init(logger: Logger, notifier: SystemdNotifier = SystemdNotifier(), clients: ClientVersions = ClientVersions()) {
        self.logger = logger
        self.notifier = notifier
        self.clients = clients
    }

    /// The stores in configuration order.
    public func all() -> [HostedStore] { order.compactMap { stores[$0] } }

    /// The stores' names, in configuration order.
    public func names() -> [String] { order }

    /// The store named `name`. While a reload closes it and opens it again (a new model
    /// version, say), the call waits for it (at most ``reopenWait``) rather than being refused.
    ///
    /// - Throws: ``HostingError/noSuchStore(name:known:)``; `unavailable` when the reopening
    ///   takes longer than ``reopenWait``.
    public func store(named name: String) async throws(HostingError) -> HostedStore {
        if reopening.contains(name) {
            let deadline = ContinuousClock.now + Self.reopenWait
            let waker = Task { [weak self] in
                try? await Task.sleep(for: Self.reopenWait)
                await self?.wakeReopenWaiters(name)
            }
            defer { waker.cancel() }
            while reopening.contains(name), ContinuousClock.now < deadline {
                await withCheckedContinuation { reopenWaiters[name, default: []].append($0) }
            }
            if reopening.contains(name) {
                throw HostingError.unavailable(store: name, reason: "the store is being reopened by a reload (a migration at open) and did not come back within \(Self.reopenWait); retry")
            }
        }
        guard let store = stores[name] else { throw HostingError.noSuchStore(name: name, known: order) }
        return store
    }

    private func wakeReopenWaiters(_ name: String) {
        for waiter in reopenWaiters.removeValue(forKey: name) ?? [] { waiter.resume() }
    }

    /// For the watchdog: the registry's actor answers.
    public func heartbeat() {}

    /// Opens every store of `configurations` not open yet with the same settings, closes the
    /// ones no longer configured, and reopens failed ones (an operator fixed the file, the
    /// model or the schema, then reloaded); returns what changed.
    @discardableResult
    public func reconcile(with configurations: [StoreConfiguration], drainTimeout: Duration) async -> (opened: [String], closed: [String]) {
        var opened: [String] = []
        var closed: [String] = []
        let wanted = Dictionary(uniqueKeysWithValues: configurations.map { ($0.name, $0) })
        // A store closed to be opened again: its calls wait for it instead of being refused.
        let reopened = Set(order.filter { name in wanted[name] != nil && (wanted[name] != stores[name]?.configuration || stores[name]?.isFailed == true) })
        reopening.formUnion(reopened)
        defer {
            reopening.subtract(reopened)
            for name in reopened { wakeReopenWaiters(name) }
        }
        for name in order {
            guard let hosted = stores[name] else { continue }
            if wanted[name] != hosted.configuration || (wanted[name] != nil && hosted.isFailed) {
                let why = wanted[name] == nil ? "closing removed store" : hosted.isFailed && wanted[name] == hosted.configuration ? "reopening failed store" : "closing changed store"
                logger.notice("\(why)", metadata: ["strata.store": "\(name)"])
                await hosted.close(timeout: drainTimeout)
                stores[name] = nil
                closed.append(name)
            }
        }
        for configuration in configurations where stores[configuration.name] == nil {
            stores[configuration.name] = await open(configuration)
            opened.append(configuration.name)
        }
        order = configurations.map(\.name)
        return (opened, closed)
    }

    /// Closes every store (shutdown).
    public func closeAll(drainTimeout: Duration) async {
        for name in order {
            guard let hosted = stores[name] else { continue }
            if await !hosted.close(timeout: drainTimeout) {
                logger.warning("calls still run on the store: it closes when they end", metadata: ["strata.store": "\(name)", "strata.in_flight": "\(hosted.inFlight)"])
            }
        }
    }

    /// "2 stores ready, 1 with deferred work pending, 1 failed". A store whose ledger holds
    /// only the vacuum (its change complete, `FinishDeferred` without `reclaim`) counts as
    /// "with free pages to reclaim".
    public func summary() -> String {
        let all = self.all()
        let ready = all.filter { $0.state == .ready }
        let ledgers = ready.map { $0.pendingTasks() }.filter { !$0.isEmpty }
        let pending = ledgers.filter { $0.contains { $0.kind != .incrementalVacuum } }.count
        let reclaim = ledgers.count - pending
        let failed = all.count - ready.count
        var parts = ["\(ready.count) store\(ready.count == 1 ? "" : "s") ready"]
        if pending > 0 { parts.append("\(pending) with deferred work pending") }
        if reclaim > 0 { parts.append("\(reclaim) with free pages to reclaim") }
        if failed > 0 { parts.append("\(failed) failed") }
        return parts.joined(separator: ", ")
    }

    // MARK: - Opening

    /// Opens one store off the actor (SQLite work blocks), extending systemd's start-up
    /// timeout while it takes long.
    private func open(_ configuration: StoreConfiguration) async -> HostedStore {
        var logger = self.logger
        logger[metadataKey: "strata.store"] = "\(configuration.name)"
        let started = ContinuousClock.now
        let notifier = self.notifier
        let extender = Task {
            // A migration can take a while: keep systemd from timing out the start-up.
            while !Task.isCancelled {
                try await Task.sleep(for: .seconds(2))
                notifier.extendTimeout(by: .seconds(10))
                logger.info("still opening", metadata: ["strata.seconds": "\(Int((ContinuousClock.now - started).seconds))"])
            }
        }
        defer { extender.cancel() }
        let log = logger
        let result: Result<Opened, StoreOpenFailure>
        do {
            result = try await NIOThreadPool.singleton.runIfActive {
                Self.openSynchronously(configuration, logger: log)
            }
        } catch {
            result = .failure(StoreOpenFailure(reason: "the open was cancelled: \(error)"))
        }
        switch result {
        case .success(let opened):
            let pending = (try? opened.store.pendingDeferredWork().count) ?? 0
            logger.info("store ready", metadata: ["strata.version": "\(opened.version)", "strata.pending": "\(pending)",
                                                  "strata.ms": "\(Int((ContinuousClock.now - started).seconds * 1000))"])
            let watch = SchemaWatch(storeName: configuration.name, logger: logger, checkedVersion: opened.schemaVersion)
            let versions = HostedVersions(storeName: configuration.name, directory: opened.directory, customStages: opened.customStages, clients: clients)
            return HostedStore(configuration: configuration, store: opened.store, modelVersion: opened.version, state: .ready, schemaWatch: watch,
                               versions: versions)
        case .failure(let failure):
            logger.error("store failed to open; the other stores keep serving", metadata: ["strata.reason": "\(failure.reason)"])
            return HostedStore(configuration: configuration, store: nil, modelVersion: failure.version, state: .failed(failure.reason))
        }
    }

    struct StoreOpenFailure: Error {
        var reason: String
        /// The version the store is at, when the failure knows it (a staged migration that
        /// stopped at its last committed hop).
        var version: String?
    }

    /// An open store, with what serving older model versions beside it needs.
    struct Opened {
        var store: PersistentStore
        var version: String
        var schemaVersion: Int
        var directory: ModelDirectory
        var customStages: [MigrationStage]
    }

    /// Opens (and migrates) one store, then checks its schema against the model: the
    /// store's metadata alone does not show a schema another process changed. Returns the
    /// store, its model version and the schema version checked.
    private static func openSynchronously(_ configuration: StoreConfiguration, logger: Logger) -> Result<Opened, StoreOpenFailure> {
        let directory: ModelDirectory
        do {
            directory = try ModelDirectory(url: URL(fileURLWithPath: configuration.modelDirectory))
        } catch {
            return .failure(StoreOpenFailure(reason: "model directory \(configuration.modelDirectory): \(error)"))
        }
        let model: ObjectModel
        if let name = configuration.targetVersion {
            guard let named = directory.version(named: name) else {
                return .failure(StoreOpenFailure(reason: "model version '\(name)' is not in \(configuration.modelDirectory)"))
            }
            model = named
        } else {
            model = directory.current
        }
        let url = URL(fileURLWithPath: configuration.path)
        // Used only when the open migrates: before the migration when it destroys data (or
        // cleanup is not deferred), otherwise online as the first deferred task, before any
        // cleanup destroys anything (MigrationOptions.backup, StagedMigrationOptions).
        let backup = configuration.backupBeforeMigration ? Self.backupURL(for: url) : nil
        var migration = configuration.deferCleanup ? MigrationOptions.deferred : MigrationOptions.immediate
        migration.knownVersions = directory.versions
        migration.allowsDroppingAllEntities = configuration.allowsDroppingAllEntities
        migration.allowsDiscards = configuration.allowsDiscards
        migration.backup = backup
        // A replicated store's checkpoints belong to Litestream (docs/Fleet.md).
        let options = StoreOptions(createIfMissing: true, readOnly: false, busyTimeout: configuration.busyTimeout.seconds,
                                   migration: migration, logger: logger, recordsHistory: configuration.history.record,
                                   walCheckpointing: configuration.replication == nil ? .strata : .external)
        // The library decides: through the version graph, or a lightweight migration at open
        // (DirectoryMigration.open, called by StagedOpenMigration.swift).
        let opening = StagedOpenMigration(configuration: configuration, directory: directory, target: model, logger: logger, backup: backup)
        let store: PersistentStore
        switch opening.open(at: url, options: options) {
        case .success(let opened): store = opened
        case .failure(let failure): return .failure(failure)
        }
        do {
            let check = try store.checkSchema()
            guard check.isUsable else {
                try? store.close()
                return .failure(StoreOpenFailure(reason: SchemaWatch.reason(store: configuration.name, path: url.path, model: model.version, check: check)))
            }
            if !check.unexpected.isEmpty {
                logger.warning("the store's schema differs from model '\(model.version)' in ways it does not need; serving it",
                               metadata: ["strata.changes": "\(check.unexpected.joined(separator: "; "))"])
            }
            // The stage file was read by the open just now: a failure here is already reported.
            let stages = (try? opening.loadStages()) ?? []
            return .success(Opened(store: store, version: model.version, schemaVersion: check.schemaVersion, directory: directory, customStages: stages))
        } catch {
            try? store.close()
            return .failure(StoreOpenFailure(reason: "\(error.code.rawValue): \(error.description)"))
        }
    }

    /// `PATH.pre-migration-TIME` (a free name).
    static func backupURL(for url: URL) -> URL {
        let stamp = Int(Date().timeIntervalSince1970)
        var candidate = URL(fileURLWithPath: "\(url.path).pre-migration-\(stamp)")
        var n = 1
        while FileManager.default.fileExists(atPath: candidate.path) || FileManager.default.fileExists(atPath: candidate.path + ".partial") {
            n += 1
            candidate = URL(fileURLWithPath: "\(url.path).pre-migration-\(stamp)-\(n)")
        }
        return candidate
    }
}
