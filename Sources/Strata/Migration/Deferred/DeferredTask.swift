import Foundation

/// One pending task of a store's deferred ledger: cleanup left by a lightweight migration
/// opened with deferral (Core Data's `NSPersistentStoreDeferredLightweightMigrationOptionKey`).
public struct DeferredTask: Sendable, Hashable, Codable {
    /// What a task does.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// Copy a table into its final shape (drops columns, ordering columns, retypes, builds indexes).
        case rewriteTable
        /// Drop a table no longer in the model.
        case dropTable
        /// Build an index.
        case createIndex
        /// Drop an index no longer in the model.
        case dropIndex
        /// Reclaim free pages.
        case incrementalVacuum
        /// Copy the store to a backup file (online, before any other task destroys data).
        case backup
    }

    /// Where a task is.
    public enum State: String, Sendable, Hashable, Codable {
        case pending
        case running
        case done
    }

    /// The task's row id in the ledger.
    public var id: Int64
    /// What the task does.
    public var kind: Kind
    /// The table the task works on, when it has one.
    public var table: String?
    /// What the task does and why: "rewrite table Aircraft: drop column photo (attribute removed in Aircraft 2)".
    public var summary: String
    /// Pending, running (a rewrite in progress) or done.
    public var state: State
    /// Rows processed so far (table rewrites, drops, index builds); pages copied for a backup.
    public var rowsDone: Int64
    /// Rows to process, estimated when the task was recorded (pages for a backup).
    public var rowsTotal: Int64
    /// When the task was recorded.
    public var createdAt: Date

    /// Progress in 0...1.
    public var fraction: Double { rowsTotal > 0 ? min(1, Double(rowsDone) / Double(rowsTotal)) : (state == .done ? 1 : 0) }
}
