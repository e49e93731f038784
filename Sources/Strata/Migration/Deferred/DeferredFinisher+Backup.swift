import Foundation
import GRDB

extension DeferredFinisher {
    // MARK: - Online backup

    /// Copies the store to `destination` before any other task, in two passes over its pages
    /// into a durable side file (``BackupSideFile``), reading them without any lock a writer
    /// waits for (``SnapshotPageReader``):
    ///
    /// 1. **First pass**, in bounded steps: each step reads the next pages in a short snapshot
    ///    of its own, writes them at their offsets, syncs the file, then records the position in
    ///    the ledger (`lastKey`). A pause, a close or a crash resumes at the recorded position;
    ///    at most the step in flight is copied again.
    /// 2. **Last pass**, in one snapshot: every page is compared with the copy and only those
    ///    that changed since the first pass read them are written, so the copy becomes that
    ///    snapshot exactly. Writes by the store's clients or by other processes meanwhile
    ///    neither restart nor invalidate anything: they are simply not in the snapshot. If it
    ///    is interrupted, the next run's last pass writes only the pages changed since.
    ///
    /// The ledger then records the copy as complete (`verified`): a crash no longer redoes a
    /// pass. The copy is checked table by table (`PRAGMA quick_check`; the ledger's
    /// `verifiedKey` counts the tables checked), must open as this store at its model, and is
    /// renamed into place before the task leaves the ledger: a pending backup whose
    /// destination exists and belongs to this store was completed just before a crash.
    func runBackup(_ step: TaskStep, destination: URL) async throws -> Bool {
        if FileManager.default.fileExists(atPath: destination.path) {
            try adoptExistingBackup(step, destination: destination)
            return true
        }
        var progress = step.entry.progress
        // A copy recorded complete whose file is gone (removed by hand, or renamed into place
        // and then removed before the task was recorded) is taken again from the first page.
        let partialExists = FileManager.default.fileExists(atPath: destination.path + ".partial")
        if !progress.started || (progress.verified == true && !partialExists) {
            progress = DeferredLedger.Progress(lastKey: 0, rowsDone: 0, started: true)
        }
        let side = try BackupSideFile(destination: destination, storePath: store.url.path, complete: progress.verified == true)
        defer { side.close() }
        let resumedAt = progress.lastKey ?? 0
        var rewritten = "last pass done before a restart"
        if progress.verified != true {
            let reader = try SnapshotPageReader(storePath: store.url.path)
            defer { reader.close() }
            if progress.copied != true {
                guard try await backupFirstPass(step, side: side, reader: reader, progress: &progress) else { return false }
            }
            guard let pass = try await backupLastPass(step, side: side, reader: reader) else { return false }
            rewritten = "last pass rewrote \(pass.pages) of \(pass.total) pages"
            progress.verified = true
            progress.verifiedKey = 0
            try saveBackupProgress(step, progress)
        }
        let bytes: Int
        do {
            guard try await checkBackup(step, side: side, progress: &progress) else { return false }
            bytes = try side.publish(storeIdentifier: store.identifier, modelChecksum: store.model.checksum)
        } catch let error as StoreError where error.code == .corrupt {
            // A copy that fails its check is not kept: the next run copies from the first page.
            side.remove()
            try saveBackupProgress(step, DeferredLedger.Progress(lastKey: 0, rowsDone: 0, started: true))
            throw error
        }
        FaultInjection.point("backup.finish")
        var detail = "online backup to \(destination.path): \(bytes) bytes, checked (quick_check ok); \(rewritten)"
        if resumedAt > 0 { detail += "; resumed at page \(resumedAt)" }
        try recordBackup(step, destination: destination, detail: detail)
        store.logger.notice("backed up the store", metadata: [
            "strata.backup": "\(destination.path)", "strata.bytes": "\(bytes)", "strata.last_pass": "\(rewritten)",
            "strata.resumed_at_page": "\(resumedAt)",
        ])
        return true
    }

    /// The first pass: pages from the ledger's position on, one short snapshot per step, each
    /// step synced then recorded. Returns false when stopped.
    private func backupFirstPass(_ step: TaskStep, side: BackupSideFile, reader: SnapshotPageReader, progress: inout DeferredLedger.Progress) async throws -> Bool {
        step.counters.batchSize = 64   // pages; adapts to the budget
        while true {
            guard await mayContinue() else { return false }
            let batchStart = batchClockStarts()
            let snapshot = try reader.begin()
            let first = Int(progress.lastKey ?? 0) + 1
            let last = min(snapshot.pageCount, first + step.counters.batchSize - 1)
            if first <= last {
                let bytes = try reader.read(pages: first..<last + 1)
                reader.end()
                try side.write(bytes, at: first, pageSize: snapshot.pageSize, onlyChanged: false)
                try side.sync()
            } else {
                reader.end()
            }
            FaultInjection.point("backup.mid-step")
            let done = last >= snapshot.pageCount
            progress.lastKey = Int64(max(last, first - 1))
            progress.rowsDone = progress.lastKey ?? 0
            if done { progress.copied = true }
            try saveBackupProgress(step, progress)
            finishedBatch(step, started: batchStart, rows: 0, rowsDone: progress.rowsDone, done: false, limit: 65_536)
            if done { return true }
            FaultInjection.point("backup.between-steps")
            guard await pause() else { return false }
        }
    }

    /// The last pass: every page compared in one snapshot, the changed ones written; the copy
    /// cut to the snapshot's size and synced. Returns the pages rewritten, or nil when stopped
    /// (the snapshot is let go: a paused reader would hold the WAL back).
    private func backupLastPass(_ step: TaskStep, side: BackupSideFile, reader: SnapshotPageReader) async throws -> (pages: Int, total: Int)? {
        let snapshot = try reader.begin()
        defer { reader.end() }
        let chunk = 1024
        var rewritten = 0
        var first = 1
        while first <= snapshot.pageCount {
            let last = min(snapshot.pageCount, first + chunk - 1)
            let bytes = try reader.read(pages: first..<last + 1)
            rewritten += try side.write(bytes, at: first, pageSize: snapshot.pageSize, onlyChanged: true)
            first = last + 1
            FaultInjection.point("backup.last-pass")
            guard await mayContinue() else { return nil }
        }
        try side.truncate(pages: snapshot.pageCount, pageSize: snapshot.pageSize)
        try side.sync()
        return (rewritten, snapshot.pageCount)
    }

    /// The complete copy's check, one table at a time, each recorded in the ledger. Returns
    /// false when stopped.
    private func checkBackup(_ step: TaskStep, side: BackupSideFile, progress: inout DeferredLedger.Progress) async throws -> Bool {
        let tables = try side.tables()
        var checked = Int(progress.verifiedKey ?? 0)
        while checked < tables.count {
            guard await mayContinue() else { return false }
            try side.check(table: tables[checked])
            FaultInjection.point("backup.check")
            checked += 1
            progress.verifiedKey = Int64(checked)
            try saveBackupProgress(step, progress)
        }
        return true
    }

    private func saveBackupProgress(_ step: TaskStep, _ progress: DeferredLedger.Progress) throws {
        try batch(step.session) { db in try DeferredLedger.saveProgress(progress, id: step.id, in: db) }
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
