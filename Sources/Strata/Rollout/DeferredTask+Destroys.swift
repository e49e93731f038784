import Foundation
import GRDB

/// The stored tables and columns a deferred task destroys: what a served older version may
/// still need (``VersionBridge/Leftovers``), so that the task can wait for its clients.
public struct DestroyedStorage: Sendable, Hashable {
    /// Tables dropped whole.
    public var tables: Set<String> = []
    /// Columns dropped, by table (a table rewrite leaves them behind).
    public var columns: [String: Set<String>] = [:]

    /// Whether the task destroys nothing a client could read (index builds and drops, the
    /// vacuum, a backup; a rewrite that only restores order, types or defaults).
    public var isEmpty: Bool { tables.isEmpty && columns.values.allSatisfy(\.isEmpty) }

    /// What `operation` destroys.
    public init(_ operation: MigrationOperation) {
        switch operation.kind {
        case .rewriteTable(let rewrite), .rewriteJoinTable(let rewrite):
            if !rewrite.droppedColumns.isEmpty { columns[rewrite.table] = Set(rewrite.droppedColumns) }
        case .dropTable(let table):
            tables.insert(table)
        default:
            break
        }
    }
}

/// A pending task of the deferred ledger with the operation it runs.
public struct PendingDeferredOperation: Sendable {
    /// The task.
    public var task: DeferredTask
    /// What it runs.
    public var operation: MigrationOperation
    /// What it destroys.
    public var destroys: DestroyedStorage { DestroyedStorage(operation) }
}

extension PersistentStore {
    /// The pending tasks of the deferred ledger with their operations, in the order they run
    /// (``pendingDeferredWork()`` with what each destroys).
    public func pendingDeferredOperations() throws(StoreError) -> [PendingDeferredOperation] {
        do {
            return try database.read { db in
                try DeferredLedger.entries(in: db).map { PendingDeferredOperation(task: $0.task, operation: $0.payload.operation) }
            }
        } catch {
            throw StoreError.from(error, path: url.path, while: "reading the deferred ledger")
        }
    }
}
