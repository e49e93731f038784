import Foundation

/// A Core Data store could not be imported. Every bad input is refused before anything is
/// written: the new store does not appear, and the Core Data store, its `-wal` and `-shm`
/// are never opened in place (only a private copy is), so they stay byte-identical.
///
/// The message names the file, the model version, the entity, the object (`Z_PK`) or the
/// property, and says what to do.
public struct CoreDataImportError: Error, Sendable, CustomStringConvertible {
    /// What went wrong. `stratactl import-coredata` gives each bad input its own exit status.
    public enum Code: String, Sendable, Hashable {
        /// The Core Data store does not exist.
        case storeNotFound
        /// The file is not an SQLite database (wrong or missing header).
        case notSQLite
        /// The SQLite database is truncated or corrupt.
        case damagedStore
        /// An SQLite database without Core Data's tables (`Z_PRIMARYKEY`, `Z_METADATA`).
        case notACoreDataStore
        /// `Z_METADATA` holds no readable metadata property list.
        case invalidCoreDataMetadata
        /// The model bundle cannot be read (no versions, a broken `.xccurrentversion`, or the
        /// version the import needs cannot be read).
        case unreadableModel
        /// No version of the bundle has the store's layout.
        case unknownVersion
        /// Several versions of the bundle have the store's layout.
        case ambiguousVersion
        /// The store does not have the layout of the version given with `--from`.
        case layoutMismatch
        /// The destination already exists.
        case destinationExists
        /// A binary attribute refers to an external file that is missing.
        case missingExternalData
        /// A stored value cannot be read as its attribute's type.
        case invalidValue
        /// The migration to the requested version was refused or failed.
        case migrationFailed
        /// Reading, copying or writing files failed.
        case io
    }

    /// What went wrong.
    public var code: Code
    /// What went wrong and what to do.
    public var reason: String
    /// The Core Data store, when the problem is about it.
    public var store: String?
    /// The model version, entity, object (`Z_PK`) and property concerned, when known.
    public var version: String?
    /// The entity concerned.
    public var entity: String?
    /// The Core Data `Z_PK` of the object concerned.
    public var objectPrimaryKey: Int64?
    /// The property concerned.
    public var property: String?
    /// Candidate versions and their differences from the store, for `unknownVersion`,
    /// `ambiguousVersion` and `layoutMismatch`.
    public var candidates: [CoreDataVersionMatch.Candidate]
    /// The byte offset in the file, for header problems.
    public var offset: Int?

    /// An error with the store, version and object concerned.
    public init(_ code: Code, _ reason: String, store: String? = nil, version: String? = nil, entity: String? = nil,
                objectPrimaryKey: Int64? = nil, property: String? = nil, candidates: [CoreDataVersionMatch.Candidate] = [],
                offset: Int? = nil) {
        self.code = code
        self.reason = reason
        self.store = store
        self.version = version
        self.entity = entity
        self.objectPrimaryKey = objectPrimaryKey
        self.property = property
        self.candidates = candidates
        self.offset = offset
    }

    /// The reason, with the store, version, entity, object and property.
    public var description: String {
        var text = store.map { "Core Data store \($0): " } ?? ""
        text += ErrorContext.prefix(.quoted("version", version), .quoted("entity", entity), objectPrimaryKey.map { "object Z_PK \($0)" },
                                    .quoted("property", property))
        text += reason
        if let offset { text += " (at byte offset \(offset))" }
        for candidate in candidates {
            if let problem = candidate.unreadable {
                text += "\n  - '\(candidate.version)': cannot be read: \(problem)"
            } else if candidate.differences.isEmpty {
                text += "\n  - '\(candidate.version)': matches the store's layout"
            } else {
                let shown = candidate.differences.prefix(6).joined(separator: "; ")
                let more = candidate.differences.count > 6 ? "; and \(candidate.differences.count - 6) more" : ""
                text += "\n  - '\(candidate.version)': \(shown)\(more)"
            }
        }
        return text
    }
}
