import Foundation
import GRDB

/// Carries a migration's renames into the stored history: an entity or property renamed
/// through its renaming identifier keeps its history under the new name.
///
/// History stores names once, in `_strata_change_names`, so a rename updates one row per
/// (entity, property) name, whatever the size of the history: it fits in the migration's
/// synchronous transaction. A dropped entity or property keeps its old name (its history
/// stays readable until purged).
enum HistoryRenames {
    /// One name change: an entity (`property == nil`) or a property of an entity.
    struct Rename: Hashable {
        var entity: String
        var property: String?
        var to: String
    }

    /// The renames from `source` to `destination` that history must follow.
    static func renames(from source: ObjectModel, to destination: ObjectModel) throws -> [Rename] {
        let matching = try ModelMatching(source: source, destination: destination)
        var result: [Rename] = []
        for entity in destination.entities {
            if let old = matching.sourceEntity[entity.name], old != entity.name {
                result.append(Rename(entity: old, property: nil, to: entity.name))
            }
        }
        // Property renames apply to the entity declaring the property and every sub-entity
        // (history records an object under its own entity), named as after the entity renames.
        for entity in destination.entities {
            var properties: [(String, String?, ModelMatching.PropertyKind)] = []
            properties += entity.attributes.filter { !$0.isTransient }.map { ($0.name, $0.renamingIdentifier, .attribute) }
            properties += entity.composites.map { ($0.name, $0.renamingIdentifier, .composite) }
            properties += entity.relationships.map { ($0.name, $0.renamingIdentifier, .relationship) }
            for (name, identifier, kind) in properties {
                guard let match = try matching.sourceProperty(entity: entity.name, name: name, renamingIdentifier: identifier, kind: kind),
                      match.name != name else { continue }
                for sub in destination.hierarchy(of: entity.name) {
                    result.append(Rename(entity: sub.name, property: match.name, to: name))
                }
            }
        }
        return result
    }

    /// Applies the renames to the names table, inside the migration's transaction. Runs in
    /// two steps through temporary names so that swaps (A -> B, B -> A) come out right.
    static func apply(from source: ObjectModel, to destination: ObjectModel, in db: Database) throws {
        guard try db.tableExists(HistorySchema.namesTable) else { return }
        let renames = try renames(from: source, to: destination)
        guard !renames.isEmpty else { return }
        let names = HistorySchema.namesTable
        let marker = "\u{1}"
        for rename in renames where rename.property == nil {
            try db.execute(sql: "UPDATE \(names) SET entity = ? WHERE entity = ?", arguments: [marker + rename.to, rename.entity])
        }
        try db.execute(sql: "UPDATE \(names) SET entity = substr(entity, 2) WHERE entity LIKE ? || '%'", arguments: [marker])
        for rename in renames {
            guard let property = rename.property else { continue }
            // The property itself, and its composite leaves (`colorScheme.primary`).
            try db.execute(sql: """
                UPDATE \(names) SET property = ? || substr(property, length(?) + 1)
                WHERE entity = ? AND (property = ? OR substr(property, 1, length(?) + 1) = ? || '.')
                """, arguments: [marker + rename.to, property, rename.entity, property, property, property])
        }
        try db.execute(sql: "UPDATE \(names) SET property = substr(property, 2) WHERE property LIKE ? || '%'", arguments: [marker])
    }
}
