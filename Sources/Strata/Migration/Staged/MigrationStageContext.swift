import Foundation
import GRDB

/// What a custom stage's handler works with: an ``ObjectContext`` of generic objects on the
/// store, inside the stage's transaction.
///
/// - In `willMigrate` the context uses the stage's **source** model.
/// - In `didMigrate` it uses the **destination** model extended with what the hop removed but
///   whose storage is still there (cleanup is deferred until the stage commits): removed
///   attributes stay readable on their entity (a composite leaf under its column name,
///   `colorScheme_primary`), removed entities stay fetchable with their attributes. This is
///   how a stage moves data out of an attribute it removes:
///
/// ```swift
/// didMigrate: { stage in
///     for post in try stage.context.fetch("Post", where: "content != nil") {
///         let section = try stage.context.insert("Section", values: ["body": post["content"]])  // removed by this hop
///         try post.addObject(section, toRelationship: "sections")
///     }
/// }
/// ```
///
/// Changes left unsaved when the handler returns are saved; a thrown error rolls back the
/// whole stage. The context must not be kept beyond the handler.
public final class MigrationStageContext {
    /// The generic-object context (see above for its model).
    public let context: ObjectContext
    /// The stage's label.
    public let stageLabel: String
    /// The model the store is migrating from, and to.
    public let sourceModel: ObjectModel
    /// The model the stage migrates to.
    public let destinationModel: ObjectModel
    /// The model ``context`` works with.
    public var model: ObjectModel { context.model }
    /// The migration's connection, inside the stage's transaction, for SQL the object layer
    /// cannot express. Do not begin or commit transactions on it.
    public let database: Database

    init(database: Database, model: ObjectModel, source: ObjectModel, destination: ObjectModel, stageLabel: String, path: String) {
        self.database = database
        self.context = ObjectContext(connection: database, model: model, path: path)
        self.sourceModel = source
        self.destinationModel = destination
        self.stageLabel = stageLabel
    }

    /// Runs SQL on the stage's transaction.
    public func execute(sql: String, arguments: StatementArguments = StatementArguments()) throws {
        try database.execute(sql: sql, arguments: arguments)
    }

    /// Saves what the handler left unsaved and ends the context.
    func finish() throws {
        defer { context.detach() }
        if context.hasChanges { try context.save() }
    }

    // MARK: - The did-migrate model

    /// `destination` plus what the hop removed and whose columns and tables still exist in `db`
    /// (deferred cleanup keeps them until the ledger is finished).
    static func bridgeModel(source: ObjectModel, destination: ObjectModel, in db: Database) throws -> ObjectModel {
        let sourceLayout = StorageLayout(model: source)
        let destinationLayout = StorageLayout(model: destination)
        var bridge = destination
        for (index, entity) in bridge.entities.enumerated() where entity.parent == nil {
            guard let table = destinationLayout.tables[entity.name], try db.tableExists(entity.name) else { continue }
            let physical = Set(try db.columns(in: entity.name).map(\.name))
            var taken = Set(table.columns.map(\.name))
            for name in destination.hierarchy(of: entity.name).flatMap(\.propertyNames) { taken.insert(name) }
            guard let sourceTable = sourceLayout.tables[entity.name] else { continue }
            for column in sourceTable.columns {
                guard case .attribute(_, _, let type) = column.role, !taken.contains(column.name), physical.contains(column.name) else { continue }
                bridge.entities[index].attributes.append(Attribute(column.name, type, isOptional: true))
                taken.insert(column.name)
            }
        }
        // Entities whose tables the hop removed (their drop is deferred): attributes only.
        for (name, table) in sourceLayout.tables where destinationLayout.tables[name] == nil && bridge.entity(named: name) == nil {
            guard try db.tableExists(name) else { continue }
            let physical = Set(try db.columns(in: name).map(\.name))
            var attributes: [Attribute] = []
            for column in table.columns {
                guard case .attribute(_, _, let type) = column.role, physical.contains(column.name),
                      !attributes.contains(where: { $0.name == column.name }) else { continue }
                attributes.append(Attribute(column.name, type, isOptional: true))
            }
            bridge.entities.append(Entity(name, attributes: attributes))
        }
        return bridge
    }
}
