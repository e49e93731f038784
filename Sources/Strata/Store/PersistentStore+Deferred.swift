import Foundation
import GRDB

extension PersistentStore {
    /// The pending tasks of the store's deferred ledger, in the order they will run.
    ///
    /// An empty list means no cleanup is pending (Core Data's
    /// `NSPersistentStoreDeferredLightweightMigrationOptionKey` absent from the metadata).
    public func pendingDeferredWork() throws(StoreError) -> [DeferredTask] {
        do {
            return try database.read { db in try DeferredLedger.pendingTasks(in: db) }
        } catch {
            throw StoreError.from(error, path: url.path, while: "reading the deferred ledger")
        }
    }

    /// Reads a store file's pending deferred work without opening it for writing.
    public static func pendingDeferredWork(at url: URL) throws(StoreError) -> [DeferredTask] {
        try metadata(at: url).deferred
    }

    /// Finishes deferred migration work online: table rewrites copy rows in small
    /// time-bounded batches while other connections keep reading and writing, and swap in one
    /// short transaction; progress is kept in the ledger, so a cancellation, a pause
    /// (`shouldContinue` returning false) or a crash resumes where it stopped.
    ///
    /// Cancellation (of the calling task) and `shouldContinue` are honoured between batches.
    ///
    /// - Returns: what was done; `stoppedEarly` when work remains.
    /// - Throws: ``StoreError`` (e.g. ``StoreError/Code/full`` when the disk fills: the
    ///   batch is rolled back and the ledger kept).
    @discardableResult
    public func finishDeferredMigration(
        _ options: FinishOptions = FinishOptions(), progress: (@Sendable (DeferredProgress) -> Void)? = nil
    ) async throws -> FinishReport {
        do {
            return try await DeferredFinisher(store: self, options: options, progress: progress).run()
        } catch let error as DatabaseError {
            throw StoreError.from(error, path: url.path, while: "finishing deferred work (the batch was rolled back; progress is kept in the ledger)")
        }
    }

    /// Finishes the next pending deferred task only (Core Data's `finishDeferredMigrationTask`).
    @discardableResult
    public func finishDeferredMigrationTask(
        _ options: FinishOptions = FinishOptions(), progress: (@Sendable (DeferredProgress) -> Void)? = nil
    ) async throws -> FinishReport {
        var one = options
        one.maxTasks = 1
        return try await finishDeferredMigration(one, progress: progress)
    }
}
