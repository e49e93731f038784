import Foundation

/// What ``CoreDataStoreImporter/importStore(at:to:progress:)`` did.
public struct CoreDataImportReport: Sendable {
    /// The Core Data store and the new Strata store.
    public var source: URL
    /// The Strata store written.
    public var destination: URL
    /// The Core Data store's `NSStoreUUID` and `NSStoreModelVersionIdentifiers`.
    public var coreDataStoreUUID: String?
    /// The version identifiers in the Core Data store's metadata.
    public var coreDataVersionIdentifiers: [String]
    /// The version the store was written with, and how it was found.
    public var importedVersion: String
    /// How the store's version was recognized.
    public var method: CoreDataVersionMatch.Method
    /// Entities the store's `Z_PRIMARYKEY` listed under an earlier name (renamed by renaming
    /// identifier since): the version's name → the name in the store.
    public var staleEntityNames: [String: String] = [:]
    /// The version the new store is at (after `toVersion`'s migration, if any).
    public var finalVersion: String
    /// Objects imported per entity (each object counted under its own entity).
    public var objects: [String: Int64]
    /// Links imported per many-to-many relationship (`Entity.relationship`).
    public var links: [String: Int64]
    /// The migration after the import, when one ran.
    public var migration: StagedMigrationReport?
    /// What the import had to repair or found invalid, in words (dangling references, objects
    /// that fail validation).
    public var warnings: [String]
    /// How long the import took.
    public var duration: Duration
}
