import Foundation
import GRDB

extension DeferredFinisher {
    // MARK: - Online backup

    /// Copies the store to `destination` a few pages per batch (``OnlineBackup``), before any
    /// other task. A copy in progress is kept by the store between runs, so a pause resumes it
    /// (writer mode); a crash or a close starts it over. The copy is renamed into place before
    /// the task leaves the ledger: a pending backup whose destination exists and belongs to
    /// this store was completed just before a crash.
    func runBackup(_ step: TaskStep, destination: URL) async throws -> Bool {
        if FileManager.default.fileExists(atPath: destination.path) {
            try adoptExistingBackup(step, destination: destination)
            return true
        }
        step.counters.batchSize = 32   // pages; grows with the budget
        var backup = try resumeOrStartBackup(destination: destination, mode: .writer)
        var sinceSync = 0
        var restarts = backup.restarts
        while true {
            guard await mayContinue() else {
                parkBackup(backup)
                return false
            }
            let batchStart = ContinuousClock.now
            let pages = Int32(step.counters.batchSize)
            let result: OnlineBackup.Step
            do {
                result = try stepBackup(backup, pages: pages)
            } catch {
                dropBackup(backup)
                throw error
            }
            FaultInjection.point("backup.mid-step")
            if result.restarted {
                restarts += 1
                store.logger.notice("the backup restarted from its first page: another process wrote to the store", metadata: [
                    "strata.backup": "\(destination.path)", "strata.restarts": "\(restarts)",
                ])
                if backup.mode == .writer, backup.restarts >= OnlineBackup.maxRestarts {
                    dropBackup(backup)
                    store.logger.notice("backing up from a snapshot: other processes keep writing to the store", metadata: ["strata.backup": "\(destination.path)"])
                    backup = try resumeOrStartBackup(destination: destination, mode: .snapshot)
                }
            }
            try batch(step.session) { db in
                try DeferredLedger.saveProgress(DeferredLedger.Progress(lastKey: nil, rowsDone: Int64(result.copiedPages), started: true), id: step.id, in: db)
            }
            sinceSync += Int(pages)
            if sinceSync >= 16_384 && !result.done {
                // Write the copy back as it goes, rather than in one long flush at the end.
                backup.syncPartial()
                sinceSync = 0
            }
            finishedBatch(step, started: batchStart, rows: 0, rowsDone: Int64(result.copiedPages), done: result.done, limit: 65_536)
            if result.done { break }
            FaultInjection.point("backup.between-steps")
            guard await pause() else {
                parkBackup(backup)
                return false
            }
        }
        try completeBackup(backup, restarts: restarts, step: step)
        return true
    }

    /// One step of the copy: on the writer queue in writer mode (it reads through the writer).
    private func stepBackup(_ backup: OnlineBackup, pages: Int32) throws -> OnlineBackup.Step {
        if backup.mode == .writer {
            return try writer { _ in try backup.step(pages: pages) }
        }
        return try backup.step(pages: pages)
    }

    /// The copy kept from an earlier run of this store, or a new one.
    private func resumeOrStartBackup(destination: URL, mode: OnlineBackup.Mode) throws -> OnlineBackup {
        if let kept = store.backupInProgress.withLock({ slot -> OnlineBackup? in
            defer { slot = nil }
            return slot
        }) {
            if kept.destination == destination && kept.mode == mode { return kept }
            dropBackup(kept)
        }
        let path = store.url.path
        return try writer { db in
            try OnlineBackup(source: db, storePath: path, destination: destination, mode: mode)
        }
    }

    /// Keeps a writer-mode copy for the next run; a snapshot copy would hold the WAL back
    /// while paused, so it is abandoned.
    private func parkBackup(_ backup: OnlineBackup) {
        if backup.mode == .writer {
            store.backupInProgress.withLock { $0 = backup }
        } else {
            dropBackup(backup)
        }
    }

    /// Abandons a copy (on the writer queue: it reads through the writer connection).
    private func dropBackup(_ backup: OnlineBackup) {
        if backup.mode == .writer {
            _ = try? writer { _ in backup.abort() }
        } else {
            backup.abort()
        }
    }

    private func completeBackup(_ backup: OnlineBackup, restarts: Int, step: TaskStep) throws {
        if backup.mode == .writer {
            try writer { _ in backup.finishCopy() }
        } else {
            backup.finishCopy()
        }
        let bytes: Int
        do {
            bytes = try backup.publish()
        } catch {
            backup.abort()
            throw error
        }
        FaultInjection.point("backup.finish")
        try recordBackup(step, destination: backup.destination, detail: "online backup to \(backup.destination.path): \(bytes) bytes, \(backup.steps) steps\(restarts > 0 ? ", \(restarts) restart(s)" : "")\(backup.mode == .snapshot ? ", from a snapshot" : "")")
        store.logger.notice("backed up the store", metadata: [
            "strata.backup": "\(backup.destination.path)", "strata.bytes": "\(bytes)", "strata.mode": "\(backup.mode.rawValue)",
        ])
    }

    /// A pending backup whose destination exists: done if it is a copy of this store (the
    /// process stopped between writing it and recording it); otherwise an error.
    private func adoptExistingBackup(_ step: TaskStep, destination: URL) throws {
        let identifier = try? PersistentStore.metadata(at: destination).storeIdentifier
        guard identifier == store.identifier else {
            throw StoreError(.sqlite, path: store.url.path, "the backup destination \(destination.path) already exists and is not a backup of this store; move it away and finish the deferred work again")
        }
        try recordBackup(step, destination: destination, detail: "online backup to \(destination.path) (completed before a restart)")
    }

    private func recordBackup(_ step: TaskStep, destination: URL, detail: String) throws {
        let model = store.model
        try batch(step.session) { db in
            try DeferredLedger.complete(id: step.id, in: db)
            try MetadataSchema.appendHistory(.init(
                at: Date(), kind: "backup", fromVersion: model.version, fromChecksum: model.checksum,
                toVersion: model.version, toChecksum: model.checksum, detail: detail), in: db)
        }
        step.counters.batches += 1
        report(step.entry, rowsDone: step.entry.payload.rowsTotal, state: .done, index: step.index, of: step.total)
    }
}
