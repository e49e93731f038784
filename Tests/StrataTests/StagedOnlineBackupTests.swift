import Foundation
import Testing
@testable import Strata

/// `StagedMigrationOptions.onlineBackupURL` (the daemon's `backup: true` through the version
/// graph): online, as the first deferred task, when nothing is destroyed before the cleanup;
/// copied before the first hop when a hop is a custom stage.
@Suite("Staged migration: a backup that waits for the cleanup when it can")
struct StagedOnlineBackupTests {
    typealias S = StagedScenarios

    @Test("lightweight hops with deferred cleanup: the backup is the first deferred task, taken online")
    func lightweightHopsDeferTheBackup() async throws {
        let directory = TemporaryDirectory("post")
        let url = directory.file("post.sqlite")
        let backupURL = directory.file("post.sqlite.pre-migration")
        try S.postStore(version: 3, at: url)
        let manager = try ProgressiveMigrationGraph(directory: S.postDirectory).path(from: S.post(3), to: S.post(4)).manager(customStages: [])
        let report = try manager.migrateStore(at: url, options: StagedMigrationOptions(onlineBackupURL: backupURL))
        #expect(report.endVersion == "Post 4")
        #expect(report.backupURL == nil)
        #expect(!FileManager.default.fileExists(atPath: backupURL.path), "copied before the hop")
        let pending = try PersistentStore.pendingDeferredWork(at: url)
        #expect(pending.first?.kind == .backup, "\(pending.map(\.kind))")
        #expect(pending.dropFirst().contains { $0.kind == .rewriteTable }, "\(pending.map(\.kind))")

        let store = try PersistentStore.open(at: url, model: S.post(4))
        defer { try? store.close() }
        let finished = try await store.finishDeferredMigration(FinishOptions())
        #expect(finished.tasksRemaining == 0)
        #expect(try store.pendingDeferredWork().isEmpty)
        // The copy: the store before the cleanup, at Post 4, without the backup task.
        let copy = try PersistentStore.open(at: backupURL, model: S.post(4))
        defer { try? copy.close() }
        #expect(try ObjectContext(store: copy).count("Post") == S.postRows.count)
        #expect(!(try copy.pendingDeferredWork().contains { $0.kind == .backup }))
        let mode = (try FileManager.default.attributesOfItem(atPath: backupURL.path)[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o600)
    }

    @Test("a custom stage on the path: the backup is copied before the first hop")
    func customStageCopiesFirst() throws {
        let directory = TemporaryDirectory("post")
        let url = directory.file("post.sqlite")
        let backupURL = directory.file("post.sqlite.pre-migration")
        try S.postStore(version: 1, at: url)
        let manager = try ProgressiveMigrationGraph(directory: S.postDirectory).path(from: S.post(1), to: S.post(4)).manager(customStages: [S.splitContent])
        let report = try manager.migrateStore(at: url, options: StagedMigrationOptions(onlineBackupURL: backupURL))
        #expect(report.backupURL == backupURL)
        #expect(try PersistentStore.metadata(at: backupURL).modelVersion == "Post 1")
        #expect(!(try PersistentStore.pendingDeferredWork(at: url).contains { $0.kind == .backup }))
        // Another store with the same destination is refused before anything is written.
        let other = directory.file("other.sqlite")
        try S.postStore(version: 1, at: other)
        let again = #expect(throws: StagedMigrationError.self) {
            try manager.migrateStore(at: other, options: StagedMigrationOptions(onlineBackupURL: backupURL))
        }
        #expect(again?.description.contains("already exists") == true)
        #expect(try PersistentStore.metadata(at: other).modelVersion == "Post 1")
    }
}
