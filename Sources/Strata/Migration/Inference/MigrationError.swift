import Foundation

/// A migration that cannot be inferred or run: raised before anything is written.
///
/// The message names the model versions, the entity, the property, the change, and says
/// what to do instead:
///
/// ```text
/// cannot migrate 'Aircraft 1' -> 'Aircraft 2': entity 'Aircraft', property 'seats':
/// change int64 -> int16: a narrowing type change can lose values; use a staged migration
/// with a custom stage (see docs/Migration.md)
/// ```
public struct MigrationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem this is. Extensible: new codes may be added.
    public struct Code: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
        /// The code's name.
        public var rawValue: String
        /// A code by name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's name.
        public var description: String { rawValue }

        /// The change is outside what lightweight inference can do (see docs/Migration.md).
        public static let notInferable = Code(rawValue: "notInferable")
        /// An attribute's type changes in a way that can lose values (narrowing, String -> Int…).
        public static let incompatibleTypeChange = Code(rawValue: "incompatibleTypeChange")
        /// Two destination entities or properties claim the same source through renaming identifiers.
        public static let ambiguousRename = Code(rawValue: "ambiguousRename")
        /// A non-optional attribute of an existing entity has no default, and objects already
        /// stored would have no value.
        public static let missingDefault = Code(rawValue: "missingDefault")
        /// Objects already stored would break a relationship rule of the destination model
        /// (a non-optional to-one without a related object, a to-many count).
        public static let invalidObjects = Code(rawValue: "invalidObjects")
        /// A new uniqueness constraint is violated by rows already stored.
        public static let uniquenessViolation = Code(rawValue: "uniquenessViolation")
        /// An invalid model was given.
        public static let invalidModel = Code(rawValue: "invalidModel")
        /// The migration would drop every entity of the store (all its data) and that was not
        /// allowed explicitly (``MigrationOptions/allowsDroppingAllEntities``).
        public static let dropsEveryEntity = Code(rawValue: "dropsEveryEntity")
    }

    /// What kind of problem this is.
    public var code: Code
    /// The version migrated from.
    public var sourceVersion: String?
    /// The version migrated to.
    public var destinationVersion: String?
    /// The entity concerned.
    public var entity: String?
    /// The property concerned.
    public var property: String?
    /// The change, in words: `"int64 -> int16"`, `"to-many -> to-one"`.
    public var change: String?
    /// Why it is refused and what to do, without the location (see ``description``).
    public var reason: String

    /// An error with its location and change.
    public init(
        _ code: Code, _ reason: String, sourceVersion: String? = nil, destinationVersion: String? = nil,
        entity: String? = nil, property: String? = nil, change: String? = nil
    ) {
        self.code = code
        self.reason = reason
        self.sourceVersion = sourceVersion
        self.destinationVersion = destinationVersion
        self.entity = entity
        self.property = property
        self.change = change
    }

    /// The advice appended to refusals that a staged migration can handle.
    public static let stagedAdvice = "use a staged migration with a custom stage (see docs/Migration.md)"

    /// `cannot migrate 'A' -> 'B': entity 'E', property 'p': change x: REASON`.
    public var description: String {
        var text = "cannot migrate"
        if sourceVersion != nil || destinationVersion != nil {
            text += " '\(sourceVersion ?? "?")' -> '\(destinationVersion ?? "?")'"
        }
        return text + ": " + ErrorContext.prefix(.quoted("entity", entity), .quoted("property", property), change.map { "change \($0)" }) + reason
    }
}
