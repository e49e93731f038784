import Foundation

/// One stage of a staged migration (Core Data's `NSMigrationStage`).
///
/// - A **lightweight** stage lists model versions by checksum; the store is migrated hop by
///   hop (v1 → v2 → v3), each hop inferred from its neighbour and committed on its own.
/// - A **custom** stage goes from one model reference to another. Its `willMigrate` handler
///   runs on the source model, then the lightweight hop between the two models, then its
///   `didMigrate` handler on the destination model — all in one transaction.
///
/// ```swift
/// let stages: [MigrationStage] = [
///     .lightweight([v1.checksum, v2.checksum], label: "add flightData"),
///     .custom(from: ModelReference(model: v2), to: ModelReference(model: v3), label: "FlightData entity",
///             didMigrate: { stage in
///                 for aircraft in try stage.context.fetch("Aircraft", where: "flightData != nil") {
///                     let data = try stage.context.insert("FlightData", values: ["data": aircraft["flightData"]])
///                     try data.setObject(aircraft, forRelationship: "aircraft")
///                 }
///             }),
/// ]
/// ```
public struct MigrationStage: Sendable {
    /// Called by a custom stage with a context on the store; throw to abort the stage (it is
    /// rolled back and the store stays at the stage's source version).
    public typealias Handler = @Sendable (MigrationStageContext) throws -> Void

    /// A lightweight or a custom stage.
    public enum Kind: Sendable {
        /// Versions by checksum, migrated hop by hop.
        case lightweight(checksums: [String])
        /// From one model to another, with optional handlers.
        case custom(from: ModelReference, to: ModelReference, willMigrate: Handler?, didMigrate: Handler?)
    }

    /// What the stage does.
    public var kind: Kind
    /// A name for messages, history and progress.
    public var label: String

    /// A stage of `kind` named `label` in progress and errors.
    public init(kind: Kind, label: String) {
        self.kind = kind
        self.label = label
    }

    /// A lightweight stage over `checksums` (at least one), in migration order.
    public static func lightweight(_ checksums: [String], label: String? = nil) -> MigrationStage {
        MigrationStage(kind: .lightweight(checksums: checksums), label: label ?? "lightweight")
    }

    /// A custom stage from `source` to `destination`.
    public static func custom(from source: ModelReference, to destination: ModelReference, label: String? = nil,
                              willMigrate: Handler? = nil, didMigrate: Handler? = nil) -> MigrationStage {
        MigrationStage(kind: .custom(from: source, to: destination, willMigrate: willMigrate, didMigrate: didMigrate),
                       label: label ?? "custom")
    }

    /// Whether this is a custom stage.
    public var isCustom: Bool { if case .custom = kind { true } else { false } }
}
