import Foundation

/// A Core Data mapping model (`.xcmappingmodel`) cannot be read or turned into a stage.
/// Refused before anything is written; the message names the mapping model, the entity
/// mapping, the entity, the property and the expression or policy class, and says what to
/// do (usually: write that step as a custom stage in a stage file).
public struct CoreDataMappingError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Hashable {
        /// The file is missing, not XML, or not a mapping model.
        case unreadable
        /// The models it maps between are not versions of the bundle.
        case unknownVersion
        /// An entity mapping names a custom `NSEntityMigrationPolicy` subclass.
        case customPolicy
        /// A value expression (or mapping) has no SQL equivalent.
        case untranslatable
    }

    /// What went wrong.
    public var code: Code
    /// What went wrong and what to do.
    public var reason: String
    /// The mapping model (`.xcmappingmodel`).
    public var file: String
    /// The entity mapping (`CarToCar`), the destination entity and property, the expression.
    public var mapping: String?
    /// The destination entity concerned.
    public var entity: String?
    /// The destination property concerned.
    public var property: String?
    /// The value expression concerned.
    public var expression: String?

    /// An error about `file`, with the mapping, entity, property and expression concerned.
    public init(_ code: Code, _ reason: String, file: String, mapping: String? = nil, entity: String? = nil,
                property: String? = nil, expression: String? = nil) {
        self.code = code
        self.reason = reason
        self.file = file
        self.mapping = mapping
        self.entity = entity
        self.property = property
        self.expression = expression
    }

    /// `mapping model X: entity mapping 'CarToCar', property 'Car.name', expression '…': reason`.
    public var description: String {
        let what = property.map { "property '\(entity.map { "\($0)." } ?? "")\($0)'" } ?? .quoted("entity", entity)
        return "mapping model \(file): " + ErrorContext.prefix(.quoted("entity mapping", mapping), what, .quoted("expression", expression)) + reason
    }

    /// What to do instead, with a stage file sketch for the hop.
    static func stageAdvice(from: String, to: String) -> String {
        "write this step as a custom stage instead (a stage file passed with --stages: `stages: [{label: …, from: \(from), to: \(to), didMigrate: \"UPDATE …\"}]`, see docs/StagedMigration.md) and leave this mapping model out"
    }
}
