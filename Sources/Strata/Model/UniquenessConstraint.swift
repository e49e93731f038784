import Foundation

/// A set of keypaths whose combined values must be unique among an entity's objects
/// (Core Data's `uniquenessConstraints`). Stored as a `UNIQUE` index.
public struct UniquenessConstraint: Sendable, Hashable {
    /// The key paths whose values together are unique.
    public var keyPaths: [String]
    /// A constraint over `keyPaths`.
    public init(_ keyPaths: [String]) { self.keyPaths = keyPaths }
}
