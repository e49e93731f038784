import Foundation

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
