import Foundation

/// The validated chain of a staged migration: its versions in order and the hops between them.
public struct StagedMigrationChain: Sendable {
    /// Every version of the chain, in order.
    public let versions: [ObjectModel]
    /// One hop per pair of neighbouring versions.
    public let hops: [StagedMigrationHop]

    /// The version the chain ends at.
    public var destination: ObjectModel { versions.last! }

    /// The hops that remain for a store at `checksum`.
    ///
    /// - Throws: ``StagedMigrationError/Code/storeVersionNotInChain`` naming the store's version
    ///   and the chain's versions.
    public func remainingHops(fromChecksum checksum: String, storeVersion: String, path: String? = nil) throws(StagedMigrationError) -> ArraySlice<StagedMigrationHop> {
        guard let index = versions.firstIndex(where: { $0.checksum == checksum }) else {
            let list = versions.map { "'\($0.version)' (\($0.checksum))" }.joined(separator: " -> ")
            throw StagedMigrationError(.storeVersionNotInChain,
                "the store is at version '\(storeVersion)' (checksum \(checksum)), which is not in the chain; the chain knows \(list). Add a stage from '\(storeVersion)', or open the store with the model it was written with",
                path: path)
        }
        return hops[index...]
    }
}
