import Foundation

/// The identity of a saved object: its entity and primary key in one store.
///
/// Objects inserted but not yet saved have a temporary identifier (``isTemporary``); saving
/// gives them their permanent one, as Core Data does.
public struct ObjectID: Sendable, Hashable, CustomStringConvertible {
    /// The object's entity.
    public let entityName: String
    /// The row's `_pk`; negative for temporary identifiers.
    public let primaryKey: Int64

    /// The identity of the `entityName` object with `primaryKey`.
    public init(entityName: String, primaryKey: Int64) {
        self.entityName = entityName
        self.primaryKey = primaryKey
    }

    /// Whether the object has not been saved yet (its key is provisional).
    public var isTemporary: Bool { primaryKey < 0 }

    /// Hashes the primary key only: identifiers of different entities rarely share one, and
    /// equality still compares the entity. Keeps sets and dictionaries of identifiers cheap.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(primaryKey)
    }

    /// `Aircraft/p12` (or `Aircraft/t3` while temporary). Any key prints, `Int64.min` included
    /// (an identifier built from a client's number is not trusted to be in range).
    public var description: String {
        isTemporary ? "\(entityName)/t\(primaryKey.magnitude)" : "\(entityName)/p\(primaryKey)"
    }

    /// A URI naming the object in a store: `strata://STORE-ID/Aircraft/p12`.
    public func uri(storeIdentifier: String) -> URL {
        URL(string: "strata://\(storeIdentifier)/\(entityName)/p\(primaryKey)")!
    }
}
