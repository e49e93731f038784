import Foundation

/// A ``ManagedObject``'s relationship and transient state, kept apart from the object and
/// allocated on first use (``ManagedObject/relations``).
final class ObjectRelations {
    /// To-one relationships: the target, resolved or as a stored primary key.
    @exclusivity(unchecked) var toOne: [String: ManagedObject.ToOneTarget] = [:]
    /// To-one keys as last read from or written to the store (restored by rollback).
    @exclusivity(unchecked) var committedToOne: [String: Int64?] = [:]
    /// To-many relationships that were loaded or set, in order.
    @exclusivity(unchecked) var toMany: [String: [ManagedObject]] = [:]
    /// Positions in ordered one-to-many relationships, keyed by the order column on this row.
    @exclusivity(unchecked) var orderValues: [String: Int64] = [:]
    /// Relationship keys changed since the last save (to-one names, order columns).
    @exclusivity(unchecked) var changedKeys: Set<String> = []
    /// Join-table relationships whose membership changed.
    @exclusivity(unchecked) var changedJoinRelationships: Set<String> = []
    /// Values of transient attributes set on this object: kept in memory, never saved.
    @exclusivity(unchecked) var transientValues: [String: Value] = [:]
}
