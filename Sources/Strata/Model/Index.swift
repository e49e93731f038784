import Foundation

/// A fetch index on one or more keypaths of an entity (Core Data's `NSFetchIndexDescription`).
///
/// Keypaths name attributes, composite leaves (`colorScheme.primary`) or to-one relationships.
/// A non-unique index is storage-only: building or rebuilding it can be deferred by a migration.
public struct Index: Sendable, Hashable {
    public struct Element: Sendable, Hashable {
        public var keyPath: String
        public var ascending: Bool
        public init(_ keyPath: String, ascending: Bool = true) {
            self.keyPath = keyPath
            self.ascending = ascending
        }
    }

    public var name: String
    public var elements: [Element]

    public init(_ name: String, elements: [Element]) {
        self.name = name
        self.elements = elements
    }

    /// An index over keypaths, all ascending.
    public init(_ name: String, keyPaths: [String]) {
        self.init(name, elements: keyPaths.map { Element($0) })
    }
}

/// A set of keypaths whose combined values must be unique among an entity's objects
/// (Core Data's `uniquenessConstraints`). Stored as a `UNIQUE` index.
public struct UniquenessConstraint: Sendable, Hashable {
    public var keyPaths: [String]
    public init(_ keyPaths: [String]) { self.keyPaths = keyPaths }
}
