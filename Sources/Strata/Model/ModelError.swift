import Foundation

/// A problem with a model: found while loading a model file or validating a model.
///
/// The message names the file (when there is one), the version, the entity and the property,
/// and says what to change.
public struct ModelError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong with the model.
    public enum Code: String, Sendable, Hashable {
        case duplicateName
        case invalidIdentifier
        case unknownDestination
        case inverseMismatch
        case invalidDefault
        case relationshipInComposite
        case inheritanceCycle
        case unknownParent
        case unknownKeyPath
        case columnCollision
        case invalidCount
        case unreadableFile
        case invalidFile
        case unknownVersion
        case emptyModel
        /// A construct Strata cannot store (a Core Data `Transformable` attribute, an R-tree
        /// or expression index, …).
        case unsupportedFeature
    }

    /// What is wrong.
    public var code: Code
    /// The model file, if any.
    public var file: String?
    /// The model version, if known.
    public var version: String?
    /// The entity concerned.
    public var entity: String?
    /// The property concerned.
    public var property: String?
    /// What is wrong and what to do, without the location (see ``description``).
    public var reason: String

    /// An error with its location.
    public init(
        _ code: Code, _ reason: String, file: String? = nil, version: String? = nil, entity: String? = nil,
        property: String? = nil
    ) {
        self.code = code
        self.reason = reason
        self.file = file
        self.version = version
        self.entity = entity
        self.property = property
    }

    /// `models/Aircraft 2.yaml: version 'Aircraft 2', entity 'Aircraft', property 'colorScheme': reason`
    public var description: String {
        (file.map { "\($0): " } ?? "")
            + ErrorContext.prefix(.quoted("version", version), .quoted("entity", entity), .quoted("property", property)) + reason
    }

    /// Returns a copy that also names `file` (and the version when not yet named).
    public func inFile(_ file: String, version: String? = nil) -> ModelError {
        var copy = self
        copy.file = copy.file ?? file
        copy.version = copy.version ?? version
        return copy
    }
}
