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

/// Progress of an import, for a progress bar.
public struct CoreDataImportProgress: Sendable, CustomStringConvertible {
    /// What the import is doing.
    public enum Phase: String, Sendable {
        case copyingStore
        case matchingVersion
        case importingRows
        case validating
        case migrating
        case finished
    }

    /// What it is doing.
    public var phase: Phase
    /// The fraction of the whole import done, 0...1.
    public var fraction: Double
    /// What is being worked on (a table, a migration hop).
    public var detail: String

    /// The phase in words: `copying the store`, `importing …`.
    public var description: String {
        switch phase {
        case .copyingStore: return "copying the store"
        case .matchingVersion: return "identifying the store's version"
        case .importingRows: return "importing \(detail)"
        case .validating: return "validating"
        case .migrating: return "migrating: \(detail)"
        case .finished: return "done"
        }
    }
}
