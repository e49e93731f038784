import Foundation

extension MigrationPlan {
    /// Counts on `store` (at the plan's source version, read-only) what the plan would cost:
    /// for each operation of ``discardingOperations``, the count of each of its discards (in
    /// order), and for each of ``requirements``, the number of stored objects that break it.
    /// What `stratactl plan --store` prints.
    ///
    /// ```swift
    /// let counts = try plan.dataCounts(in: store)   // (discarded: [[1200]], violations: [0])
    /// ```
    public func dataCounts(in store: PersistentStore) throws(StoreError) -> (discarded: [[Int64]], violations: [Int64]) {
        try store.readMapped("counting what the migration to '\(destinationVersion)' would discard") { db in
            let discarded = try countDiscarded(in: db).map { $0.discarded.map(\.1) }
            let violations = try requirements.map { try $0.violationCount(in: db) }
            return (discarded, violations)
        }
    }
}
