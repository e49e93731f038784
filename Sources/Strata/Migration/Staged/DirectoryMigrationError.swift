import Foundation

/// A ``DirectoryMigration`` that stopped: the version the store is at (its last committed hop),
/// the hop that failed, and the ``StagedMigrationError`` that says why.
public struct DirectoryMigrationError: Error, Sendable, CustomStringConvertible {
    /// A hop of the migration's path.
    public struct Hop: Sendable, Hashable {
        /// The hop's source version.
        public var from: String
        /// The hop's destination version.
        public var to: String
        /// 1-based number of the hop on the path.
        public var number: Int
        /// The number of hops on the path.
        public var count: Int
        /// The custom stage's label; nil for a lightweight hop.
        public var customLabel: String?
    }

    /// Why the migration stopped.
    public var error: StagedMigrationError
    /// The version the store is at now.
    public var storeVersion: String
    /// The hop that failed; nil when the migration was refused as a whole (before any hop).
    public var hop: Hop?
    /// Whether hops before the failing one committed (the store moved from its first version).
    public var changed: Bool

    /// The underlying error's description.
    public var description: String { error.description }
}
