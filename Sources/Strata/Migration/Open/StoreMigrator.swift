import Foundation
import GRDB
import StrataUnits

/// Migrates a store file at open: infers a lightweight plan from the model embedded in the
/// store to the requested model, counts the stored objects the new model would leave invalid
/// (refusing, before any write, when there are any), runs the plan's synchronous part in one
/// transaction, and records the rest in the deferred ledger (or runs it before returning,
/// without deferral).
enum StoreMigrator {
    static func migrate(at url: URL, from metadata: StoreMetadata, to model: ObjectModel, options: MigrationOptions,
                        storeOptions: StoreOptions) throws(StoreError) -> StoreMetadata {
        let path = url.path
        let source = options.knownVersions.first { $0.checksum == metadata.modelChecksum } ?? metadata.model
        guard options.inferAutomatically else {
            throw StoreError(.incompatibleModel, path: path, "the store is at '\(metadata.modelVersion)' and automatic inference is off; use a staged migration to reach '\(model.version)'",
                             storeVersion: metadata.modelVersion, storeChecksum: metadata.modelChecksum, modelVersion: model.version, modelChecksum: model.checksum)
        }
        do {
            try DataLossGuard.check([(source, model)], allowed: options.allowsDroppingAllEntities)
        } catch {
            throw StoreError(.migrationRefused, path: path, "\(error); nothing was changed",
                             storeVersion: metadata.modelVersion, storeChecksum: metadata.modelChecksum, modelVersion: model.version, modelChecksum: model.checksum)
        }
        let plan: MigrationPlan
        do {
            plan = try MigrationPlan.infer(from: source, to: model)
        } catch {
            throw StoreError(.migrationRefused, path: path, "cannot migrate from '\(metadata.modelVersion)' to '\(model.version)': \(error)",
                             storeVersion: metadata.modelVersion, storeChecksum: metadata.modelChecksum, modelVersion: model.version, modelChecksum: model.checksum)
        }
        let clock = ContinuousClock()
        var phases: [(String, Duration)] = []
        var mark = clock.now
        func lap(_ name: String) { let now = clock.now; phases.append((name, now - mark)); mark = now }
        do {
            let queue = try DatabaseQueue(path: path, configuration: PersistentStore.connectionConfiguration(readOnly: false, busyTimeout: storeOptions.busyTimeout,
                                                                                                               checkpointing: storeOptions.walCheckpointing))
            defer { try? queue.close() }
            lap("connect")
            // A migration that would discard stored data, when discarding is not allowed, is
            // refused before any write, with what it would discard.
            if !options.allowsDiscards, !plan.discardingOperations.isEmpty {
                let discarded = try queue.read { db in try plan.countDiscarded(in: db) }.flatMap(\.discarded).filter { $0.1 > 0 }
                lap("discards")
                if !discarded.isEmpty {
                    throw StoreError(.migrationRefused, path: path,
                                     "migrating from '\(metadata.modelVersion)' to '\(model.version)' would discard \(discarded.map { $0.0.describe(count: $0.1) }.joined(separator: ", ")), and discarding is not allowed (allow_discards: false); keep the data with a custom stage that moves it (docs/StagedMigration.md), or allow the loss for this store; nothing was changed",
                                     storeVersion: metadata.modelVersion, storeChecksum: metadata.modelChecksum, modelVersion: model.version, modelChecksum: model.checksum)
                }
            }
            // Objects that the destination model would make invalid refuse the hop before any write.
            if !plan.requirements.isEmpty {
                try queue.read { db in try plan.checkRequirements(in: db) }
                lap("requirements")
            }
            let backup = try backupPlan(plan, options: options, path: path)
            try queue.writeWithoutTransaction { db in
                _ = try? db.checkpoint(.passive)
                lap("checkpoint")
                if case .now(let destination) = backup {
                    let bytes = try OnlineBackup.copyNow(from: db, storePath: path, to: destination)
                    lap("backup")
                    storeOptions.logger.notice("backed up the store before migrating", metadata: [
                        "strata.store": "\(path)", "strata.backup": "\(destination.path)", "strata.bytes": "\(bytes)",
                    ])
                }
                try apply(plan, from: metadata, to: model, deferCleanup: options.deferCleanup, in: db, beforeCommit: { db in
                    switch backup {
                    case .now(let destination):
                        try MetadataSchema.appendHistory(.init(
                            at: Date(), kind: "backup", fromVersion: metadata.modelVersion, fromChecksum: metadata.modelChecksum,
                            toVersion: model.version, toChecksum: model.checksum,
                            detail: "copied to \(destination.path) before migrating (\(options.deferCleanup ? "the synchronous part destroys data" : "cleanup is not deferred"))"), in: db)
                    case .deferred(let destination):
                        let pending = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(DeferredLedger.table) WHERE kind = 'backup'") ?? 0
                        if pending == 0 {
                            try DeferredLedger.appendBackup(to: destination, reason: "the migration from '\(metadata.modelVersion)' to '\(model.version)' destroys nothing until then", in: db)
                        }
                    case .none:
                        break
                    }
                })
                lap("synchronous")
            }
            if !options.deferCleanup {
                try queue.writeWithoutTransaction { db in try DeferredFinisher.runAllOffline(in: db, layout: StorageLayout(model: model), storePath: path) }
                lap("cleanup")
            }
            storeOptions.logger.notice("migrated store", metadata: [
                "strata.store": "\(path)", "strata.from": "\(metadata.modelVersion)", "strata.to": "\(model.version)",
                "strata.deferred": "\(options.deferCleanup)",
                "strata.phases_ms": "\(phases.map { "\($0.0)=\(String(format: "%.1f", $0.1.milliseconds))" }.joined(separator: ","))",
            ])
            return try queue.read { db in try StoreMetadata.read(from: db, path: path) }
        } catch let error as MigrationError {
            throw StoreError(.migrationRefused, path: path, "migration from '\(metadata.modelVersion)' to '\(model.version)' failed, nothing was changed: \(error)",
                             storeVersion: metadata.modelVersion, storeChecksum: metadata.modelChecksum, modelVersion: model.version, modelChecksum: model.checksum)
        } catch {
            throw StoreError.from(error, path: path, while: "migrating from '\(metadata.modelVersion)' to '\(model.version)' (nothing was changed)")
        }
    }

    /// When a migration at open backs the store up (``MigrationOptions/backup``).
    enum BackupPlan {
        case none
        /// Before the migration: its synchronous part destroys data, or cleanup is not deferred.
        case now(URL)
        /// As the first task of the deferred ledger: nothing is destroyed until the cleanup runs.
        case deferred(URL)
    }

    static func backupPlan(_ plan: MigrationPlan, options: MigrationOptions, path: String) throws(StoreError) -> BackupPlan {
        guard let destination = options.backup else { return .none }
        if FileManager.default.fileExists(atPath: destination.path) {
            throw StoreError(.migrationRefused, path: path, "the backup destination \(destination.path) already exists; move it away or choose another path (nothing was changed)")
        }
        return backupTiming(to: destination, deferCleanup: options.deferCleanup,
                            destroysBeforeCleanup: plan.synchronous.contains(where: \.destroysData))
    }

    /// The backup rule of a migration at open, lightweight or staged, written once: a copy
    /// before the migration when it destroys data before the deferred cleanup (or the cleanup
    /// is not deferred), otherwise online as the first deferred task.
    static func backupTiming(to destination: URL?, deferCleanup: Bool, destroysBeforeCleanup: Bool) -> BackupPlan {
        guard let destination else { return .none }
        return !deferCleanup || destroysBeforeCleanup ? .now(destination) : .deferred(destination)
    }

    /// Runs the synchronous part of `plan` and rewrites the ledger, in one transaction on `db`.
    /// Used by lightweight migration at open and by each hop of staged migrations.
    ///
    /// `beforeOperations` runs first in the transaction (on the source schema: a custom
    /// stage's `willMigrate`), `beforeCommit` after the plan's operations, before the ledger and
    /// metadata are written (`didMigrate`); an error from either rolls everything back.
    static func apply(_ plan: MigrationPlan, from metadata: StoreMetadata, to model: ObjectModel, deferCleanup: Bool,
                      kind: String = "lightweight", detail: @autoclosure () -> String? = nil, in db: Database,
                      beforeOperations: ((Database) throws -> Void)? = nil,
                      beforeCommit: ((Database) throws -> Void)? = nil) throws {
        try db.inTransaction {
            try abandonRunningRewrites(in: db)
            try beforeOperations?(db)
            for operation in plan.synchronous {
                try clearStaleNames(for: operation, in: db)
                try operation.execute(in: db)
            }
            try beforeCommit?(db)
            try HistoryRenames.apply(from: metadata.model, to: model, in: db)
            try rewriteLedger(for: model, plan: plan, in: db)
            try MetadataSchema.writeModel(model, in: db)
            let pending = try DeferredLedger.pendingTasks(in: db).count
            try MetadataSchema.appendHistory(.init(
                at: Date(), kind: kind, fromVersion: metadata.modelVersion, fromChecksum: metadata.modelChecksum,
                toVersion: model.version, toChecksum: model.checksum,
                detail: detail() ?? "\(plan.synchronous.count) synchronous operation(s); \(pending) deferred task(s) \(deferCleanup ? "recorded" : "to run now")"), in: db)
            return .commit
        }
    }

    /// Replaces the ledger with what separates the physical schema from a fresh store of `model`.
    /// Unique indexes the model needs are built now (they are part of correctness).
    static func rewriteLedger(for model: ObjectModel, plan: MigrationPlan?, in db: Database) throws {
        try DeferredLedger.removeAll(in: db)
        for task in try SchemaReconciler.tasks(for: StorageLayout(model: model), in: db, planned: plan?.deferrable ?? []) {
            if !task.operation.isDeferrable {
                try task.operation.execute(in: db)
                continue
            }
            try DeferredLedger.append(task.operation, kind: task.kind, summary: task.summary, rowsTotal: task.rowsTotal, in: db)
        }
    }

    /// An online rewrite, index build or index drop that was running keeps a shadow or side
    /// table and capture triggers; a new migration abandons them (the work restarts from the
    /// new ledger). The triggers go; the tables are renamed aside (`_strata_dropped_…`) — O(1),
    /// where dropping a half-copied table would take time proportional to its size — and the
    /// recomputed ledger drops them in batches, like any table no longer in the model.
    static func abandonRunningRewrites(in db: Database) throws {
        for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '\\_strata\\_rw\\_%' ESCAPE '\\'") {
            try db.execute(sql: "DROP TRIGGER IF EXISTS \(quoteIdentifier(name))")
        }
        for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '\\_strata\\_rewrite\\_%' ESCAPE '\\'") {
            let aside = try freeTableName("_strata_dropped_\(name.dropFirst("_strata_".count))", db)
            try db.execute(sql: "ALTER TABLE \(quoteIdentifier(name)) RENAME TO \(quoteIdentifier(aside))")
        }
        // A rewrite's copy cursor (``TableRewrite/copyCursorTable``) is one row: dropped at once.
        for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '\\_strata\\_copied\\_%' ESCAPE '\\'") {
            try db.execute(sql: "DROP TABLE IF EXISTS \(quoteIdentifier(name))")
        }
    }

    /// Moves a leftover table or column (awaiting its deferred drop) out of the way of an
    /// operation that needs its name.
    static func clearStaleNames(for operation: MigrationOperation, in db: Database) throws {
        func moveTable(_ name: String) throws {
            guard try db.tableExists(name) else { return }
            try db.execute(sql: "ALTER TABLE \(quoteIdentifier(name)) RENAME TO \(quoteIdentifier(try freeTableName("_strata_dropped_\(name)", db)))")
        }
        func moveColumn(_ column: String, of table: String) throws {
            guard try db.tableExists(table), try db.columns(in: table).contains(where: { $0.name == column }) else { return }
            var candidate = "_strata_dropped_\(column)"
            var n = 1
            let existing = Set(try db.columns(in: table).map(\.name))
            while existing.contains(candidate) { n += 1; candidate = "_strata_dropped_\(column)_\(n)" }
            try db.execute(sql: "ALTER TABLE \(quoteIdentifier(table)) RENAME COLUMN \(quoteIdentifier(column)) TO \(quoteIdentifier(candidate))")
        }
        switch operation.kind {
        case .createTable(let table, _), .createJoinTable(let table, _): try moveTable(table)
        case .renameTable(_, let to): try moveTable(to)
        case .addColumn(let table, let column, _, _): try moveColumn(column, of: table)
        case .renameColumn(let table, _, let to): try moveColumn(to, of: table)
        case .createIndex(let spec):
            if try db.indexes(on: spec.table).contains(where: { $0.name == spec.name }) || (try String.fetchOne(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND name = ?", arguments: [spec.name])) != nil {
                try db.execute(sql: "DROP INDEX IF EXISTS \(quoteIdentifier(spec.name))")
            }
        default: break
        }
    }

    private static func freeTableName(_ base: String, _ db: Database) throws -> String {
        var candidate = base
        var n = 1
        while try db.tableExists(candidate) { n += 1; candidate = "\(base)_\(n)" }
        return candidate
    }
}
