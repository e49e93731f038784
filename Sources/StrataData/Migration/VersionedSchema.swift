import Foundation

/// One version of an application's model, in Swift (SwiftData's `VersionedSchema`): a version
/// identifier and its model classes, usually nested in the schema's enum.
///
/// ```swift
/// enum AircraftSchemaV1: VersionedSchema {
///     static let versionIdentifier = Schema.Version(1, 0, 0)
///     static var models: [any PersistentModel.Type] { [Aircraft.self] }
///
///     @Model final class Aircraft { … }
/// }
/// ```
///
/// The entity of each class is named after the class (`Aircraft` in every version), so that
/// a store's rows belong to the same entity from one version to the next.
public protocol VersionedSchema {
    /// The version's identifier.
    static var versionIdentifier: Schema.Version { get }
    /// The model classes of this version.
    static var models: [any PersistentModel.Type] { get }
    /// The version's name in the object model, its model file and the store's migration
    /// history; by default the schema type's name (`AircraftSchemaV1`).
    static var versionName: String { get }
}

extension VersionedSchema {
    /// The schema type's name.
    public static var versionName: String { String(describing: self) }

    /// The schema of this version.
    public static var schema: Schema { Schema(models, version: versionName) }

    /// The object model of this version (validated).
    public static func objectModel() throws -> ObjectModel {
        var model = try schema.objectModel()
        model.versionIdentifier = versionIdentifier.description
        return model
    }
}

extension Schema {
    /// A semantic version identifier (SwiftData's `Schema.Version`).
    public struct Version: Sendable, Hashable, Comparable, CustomStringConvertible {
        /// The major, minor and patch numbers.
        public var major: Int, minor: Int, patch: Int

        /// `Schema.Version(1, 0, 0)`.
        public init(_ major: Int, _ minor: Int, _ patch: Int) {
            self.major = major
            self.minor = minor
            self.patch = patch
        }

        /// `1.0.0`.
        public var description: String { "\(major).\(minor).\(patch)" }

        /// Orders by major, minor, patch.
        public static func < (lhs: Version, rhs: Version) -> Bool {
            (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
        }
    }
}
