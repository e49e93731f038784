import Foundation

/// A fetch index on one or more keypaths of an entity (Core Data's `NSFetchIndexDescription`).
///
/// Keypaths name attributes, composite leaves (`colorScheme.primary`) or to-one relationships.
/// A non-unique index is storage-only: building or rebuilding it can be deferred by a migration.
public struct Index: Sendable, Hashable {
    /// One key path of an index and its direction.
    public struct Element: Sendable, Hashable {
        /// The key path: `tailNumber`, `colorScheme.primary`.
        public var keyPath: String
        /// Whether it sorts ascending.
        public var ascending: Bool
        /// An element on `keyPath`.
        public init(_ keyPath: String, ascending: Bool = true) {
            self.keyPath = keyPath
            self.ascending = ascending
        }
    }

    /// The index's name within its entity.
    public var name: String
    /// The indexed key paths, in order.
    public var elements: [Element]

    /// A fetch index `name` over `elements`.
    public init(_ name: String, elements: [Element]) {
        self.name = name
        self.elements = elements
    }

    /// An index over keypaths, all ascending.
    public init(_ name: String, keyPaths: [String]) {
        self.init(name, elements: keyPaths.map { Element($0) })
    }
}
