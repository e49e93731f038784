import Foundation

/// A stage of a ``SchemaMigrationPlan`` (SwiftData's `MigrationStage`; the name differs because
/// Strata's own ``MigrationStage`` is the string-keyed stage this one runs as).
public enum SchemaMigrationStage: Sendable {
    /// A change Strata infers (add, remove or rename attributes and entities, widen types…).
    case lightweight(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type)
    /// A change with code: `willMigrate` on the old models before the hop, `didMigrate` on
    /// the new models after it (with the removed values still readable), in one transaction.
    case custom(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type,
                willMigrate: (@Sendable (SchemaMigrationContext) throws -> Void)?,
                didMigrate: (@Sendable (SchemaMigrationContext) throws -> Void)?)

    /// The stage's source schema.
    public var fromVersion: any VersionedSchema.Type {
        switch self {
        case .lightweight(let from, _), .custom(let from, _, _, _): return from
        }
    }

    /// The stage's destination schema.
    public var toVersion: any VersionedSchema.Type {
        switch self {
        case .lightweight(_, let to), .custom(_, let to, _, _): return to
        }
    }

    /// `custom(fromVersion:toVersion:didMigrate:)` without a `willMigrate`.
    public static func custom(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type,
                              didMigrate: @escaping @Sendable (SchemaMigrationContext) throws -> Void) -> SchemaMigrationStage {
        .custom(fromVersion: fromVersion, toVersion: toVersion, willMigrate: nil, didMigrate: didMigrate)
    }
}
