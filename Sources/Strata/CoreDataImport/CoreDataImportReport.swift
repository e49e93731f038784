import Foundation

/// What ``CoreDataStoreImporter/importStore(at:to:progress:)`` did.
public struct CoreDataImportReport: Sendable {
    /// The Core Data store and the new Strata store.
    public var source: URL
    public var destination: URL
    /// The Core Data store's `NSStoreUUID` and `NSStoreModelVersionIdentifiers`.
    public var coreDataStoreUUID: String?
    public var coreDataVersionIdentifiers: [String]
    /// The version the store was written with, and how it was found.
    public var importedVersion: String
    public var method: CoreDataVersionMatch.Method
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
    public var duration: Duration
}

/// Progress of an import, for a progress bar.
public struct CoreDataImportProgress: Sendable, CustomStringConvertible {
    public enum Phase: String, Sendable {
        case copyingStore
        case matchingVersion
        case importingRows
        case validating
        case migrating
        case finished
    }

    public var phase: Phase
    /// The fraction of the whole import done, 0...1.
    public var fraction: Double
    /// What is being worked on (a table, a migration hop).
    public var detail: String

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
