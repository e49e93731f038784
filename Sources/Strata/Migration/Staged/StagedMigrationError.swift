import Foundation

/// A staged or progressive migration that cannot be validated or run.
///
/// Validation errors are raised before anything is written; each message says what to fix:
///
/// ```text
/// stage 2 ('split content') starts at 'Post 3' (Qm9…=), but stage 1 ('rename color') ends at
/// 'Post 2' (aGV…=): the chain has a gap; add a stage from 'Post 2' to 'Post 3', or start
/// stage 2 at 'Post 2'
/// ```
///
/// Errors while a hop runs (a handler throwing, SQLite failing, a kill) leave the store at the
/// last completed version; ``completedVersion`` names it.
public struct StagedMigrationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem this is. Extensible: new codes may be added.
    public struct Code: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
        /// The code's name.
        public var rawValue: String
        /// A code by name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's name.
        public var description: String { rawValue }

        /// The manager has no stages, or a lightweight stage lists no version.
        public static let emptyChain = Code(rawValue: "emptyChain")
        /// A model reference cannot be loaded (missing file, unknown version name).
        public static let unresolvableReference = Code(rawValue: "unresolvableReference")
        /// A model reference's model does not have the expected checksum.
        public static let checksumMismatch = Code(rawValue: "checksumMismatch")
        /// A lightweight stage lists a checksum no known model version has.
        public static let unknownChecksum = Code(rawValue: "unknownChecksum")
        /// The same version appears twice in the chain.
        public static let duplicateVersion = Code(rawValue: "duplicateVersion")
        /// A stage does not start where the previous one ends.
        public static let gap = Code(rawValue: "gap")
        /// A stage goes from a later version to an earlier one (or nowhere).
        public static let backwardsStage = Code(rawValue: "backwardsStage")
        /// The store's version is not one of the chain's versions.
        public static let storeVersionNotInChain = Code(rawValue: "storeVersionNotInChain")
        /// A hop cannot be inferred (even a custom stage runs a lightweight hop between its models).
        public static let notInferable = Code(rawValue: "notInferable")
        /// The version graph has no path from the store's version to the target.
        public static let noPath = Code(rawValue: "noPath")
        /// A custom stage's handler threw: the stage was rolled back.
        public static let handlerFailed = Code(rawValue: "handlerFailed")
        /// A lightweight hop would leave stored objects invalid (a non-optional attribute or
        /// to-one without a value, a to-many count): refused before the hop wrote anything.
        public static let invalidObjects = Code(rawValue: "invalidObjects")
        /// A custom stage left objects that fail validation: the stage was rolled back.
        public static let stageLeftInvalidObjects = Code(rawValue: "stageLeftInvalidObjects")
        /// The store could not be read, backed up or written.
        public static let store = Code(rawValue: "store")
        /// After the migration none of the store's entities would be left (all its data
        /// dropped), and ``StagedMigrationOptions/allowsDroppingAllEntities`` is off.
        public static let dropsEveryEntity = Code(rawValue: "dropsEveryEntity")
        /// A lightweight hop would discard stored data (non-null values of a removed
        /// attribute, links of a removed relationship, objects of a removed entity) and
        /// ``StagedMigrationOptions/allowsDiscards`` is off: refused, the hop rolled back.
        public static let discardsData = Code(rawValue: "discardsData")
    }

    /// What went wrong.
    public var code: Code
    /// What went wrong and what to do.
    public var reason: String
    /// The store file, when one was involved.
    public var path: String?
    /// The stage involved (1-based position and label), when one was.
    public var stage: Int?
    /// The label of the stage concerned.
    public var stageLabel: String?
    /// The version the store is at after the failure (the last completed hop), when known.
    public var completedVersion: String?
    /// The underlying error (a handler's, SQLite's, inference's), if any.
    public var underlying: String?

    /// An error with the store and stage concerned.
    public init(_ code: Code, _ reason: String, path: String? = nil, stage: Int? = nil, stageLabel: String? = nil,
                completedVersion: String? = nil, underlying: String? = nil) {
        self.code = code
        self.reason = reason
        self.path = path
        self.stage = stage
        self.stageLabel = stageLabel
        self.completedVersion = completedVersion
        self.underlying = underlying
    }

    /// The reason, with the store and stage.
    public var description: String {
        var text = path.map { "\($0): " } ?? ""
        text += reason
        if let completedVersion { text += " (the store is at '\(completedVersion)', its last completed version; run the migration again to resume)" }
        return text
    }
}
