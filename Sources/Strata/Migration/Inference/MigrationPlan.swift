import Foundation
import GRDB

/// The operations that migrate a store from one model version to another, in order, each
/// marked synchronous or deferrable.
///
/// ```swift
/// let plan = try MigrationPlan.infer(from: v1, to: v2)
/// for op in plan.synchronous { … }   // run in one transaction at open
/// for op in plan.deferrable { … }    // cleanup: recorded in the deferred ledger, finished later
/// ```
///
/// Synchronous operations come first and make the store correct for the destination model;
/// the deferrable ones only reclaim space, restore the exact destination schema and build
/// indexes. Inference never touches a store: a change it cannot infer throws a
/// ``MigrationError`` before anything is written. The deferrable part is computed as the
/// deferred ledger is (by reconciling the schema the synchronous part leaves with the
/// destination's, here on an empty in-memory store), so a plan's deferred steps are the
/// tasks `pending` shows after the open. See `docs/Migration.md`.
public struct MigrationPlan: Sendable, Hashable, Codable {
    /// The checksum of the model migrated from.
    public var sourceChecksum: String
    /// The checksum of the model migrated to.
    public var destinationChecksum: String
    /// The version migrated from.
    public var sourceVersion: String
    /// The version migrated to.
    public var destinationVersion: String
    /// Every operation: the synchronous ones first, then the deferrable ones, in order.
    public var operations: [MigrationOperation]
    /// What the objects already stored must satisfy for the hop to leave them valid (checked
    /// against the data before anything is written: ``checkRequirements(in:)``).
    public var requirements: [ObjectRequirement]

    /// A plan with its operations (``infer(from:to:)`` computes one).
    public init(
        sourceChecksum: String, destinationChecksum: String, sourceVersion: String, destinationVersion: String,
        operations: [MigrationOperation], requirements: [ObjectRequirement] = []
    ) {
        self.sourceChecksum = sourceChecksum
        self.destinationChecksum = destinationChecksum
        self.sourceVersion = sourceVersion
        self.destinationVersion = destinationVersion
        self.operations = operations
        self.requirements = requirements
    }

    /// The operations needed for the destination model to be correct, in order.
    public var synchronous: [MigrationOperation] { operations.filter { !$0.isDeferrable } }
    /// Cleanup that may run later, in order.
    public var deferrable: [MigrationOperation] { operations.filter(\.isDeferrable) }
    /// Whether there is nothing to do (the models have the same storage, or only metadata changed).
    public var isEmpty: Bool { operations.isEmpty }

    /// Infers a lightweight migration from `source` to `destination`.
    ///
    /// Both models must be valid. Identical models (same checksum) give an empty plan.
    /// Changes whose validity depends on the data — a non-optional attribute without a
    /// default, a non-optional to-one, a to-many count — are not refused here: they become
    /// ``requirements``, counted against the store before the migration writes anything.
    /// - Throws: ``MigrationError`` naming the entity, property and change that cannot be inferred.
    public static func infer(from source: ObjectModel, to destination: ObjectModel) throws(MigrationError) -> MigrationPlan {
        for model in [source, destination] {
            if let error = model.validationErrors().first {
                throw MigrationError(.invalidModel, "the model is not valid: \(error); fix the model first",
                                     sourceVersion: source.version, destinationVersion: destination.version,
                                     entity: error.entity, property: error.property)
            }
        }
        var plan = MigrationPlan(sourceChecksum: source.checksum, destinationChecksum: destination.checksum,
                                 sourceVersion: source.version, destinationVersion: destination.version, operations: [])
        guard plan.sourceChecksum != plan.destinationChecksum else { return plan }
        var inference = try LightweightInference(source: source, destination: destination)
        let inferred = try inference.plan()
        plan.requirements = inference.requirements
        // The deferrable part is what the ledger will hold: the reconciler's tasks after the
        // synchronous part, in inference's words (one computation for `plan` and `pending`).
        do {
            let parts = try SchemaReconciler.deferrablePart(
                from: StorageLayout(model: source), to: StorageLayout(model: destination),
                synchronous: inferred.filter { !$0.isDeferrable }, planned: inferred.filter(\.isDeferrable))
            plan.operations = parts.synchronous + parts.deferrable
        } catch {
            throw MigrationError(.notInferable, "the synchronous part failed on an empty store of '\(source.version)' (\(error)); this is a bug in Strata, please report it with both models",
                                 sourceVersion: source.version, destinationVersion: destination.version)
        }
        return plan
    }

    /// Runs the plan on `db` without online batching: the synchronous operations in one
    /// transaction, then (when `includingDeferrable`) each deferrable operation in its own
    /// transaction, with `foreign_keys` off around the ones that need it.
    ///
    /// `db` must not be inside a transaction (`PRAGMA foreign_keys` cannot change in one).
    /// The store's metadata (checksum, ledger) is not touched: that is the opener's job.
    public func apply(to db: Database, includingDeferrable: Bool = true) throws {
        precondition(!db.isInsideTransaction, "MigrationPlan.apply must run outside a transaction")
        try db.inTransaction {
            for op in synchronous { try op.execute(in: db) }
            return .commit
        }
        guard includingDeferrable else { return }
        for op in deferrable {
            if op.requiresForeignKeysOff {
                let wasOn = try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") ?? false
                try db.execute(sql: "PRAGMA foreign_keys = OFF")
                defer { if wasOn { try? db.execute(sql: "PRAGMA foreign_keys = ON") } }
                try db.inTransaction {
                    try op.execute(in: db)
                    return .commit
                }
            } else if case .incrementalVacuum = op.kind {
                try op.execute(in: db)
            } else {
                try db.inTransaction {
                    try op.execute(in: db)
                    return .commit
                }
            }
        }
    }
}

extension MigrationPlan: CustomStringConvertible {
    /// One line per operation: `SYNC     add column Aircraft.seats …` / `DEFERRED …`.
    public var description: String {
        var lines = ["migration '\(sourceVersion)' -> '\(destinationVersion)' (\(synchronous.count) synchronous, \(deferrable.count) deferrable)"]
        for op in operations { lines.append("\(op.isDeferrable ? "DEFERRED" : "SYNC    ") \(op.summary)") }
        for requirement in requirements { lines.append("REQUIRES existing objects: \(requirement.summary)") }
        return lines.joined(separator: "\n")
    }
}
