import Foundation

/// Refuses a migration that would drop **every** entity of a store — and so every row —
/// unless the caller allows it explicitly.
///
/// Such a migration is almost always a misconfiguration: a store opened with another
/// application's model directory (a Post store given `model: Aircraft`) infers "drop table
/// Post, create table Aircraft", and finishing the deferred work deletes the data. Lightweight
/// inference alone cannot tell that from a real rewrite, so the check is separate and runs
/// before anything is written: at open (``StoreMigrator``), in staged and progressive
/// migrations (`stratactl migrate`), and so in the daemon.
///
/// An entity survives a hop when the destination continues it (same name, or a renaming
/// identifier naming it, as ``ModelMatching`` decides); the store's entities are followed
/// through every hop, so that a chain which drops them one by one is refused too.
enum DataLossGuard {
    /// The entities of the store (`entities`, of `source`) that `destination` continues, by
    /// their names in `destination`.
    static func survivors(of entities: [String], from source: ObjectModel, to destination: ObjectModel) -> [String] {
        // An ambiguous rename fails inference with its own error: count nothing as dropped here.
        guard let matching = try? ModelMatching(source: source, destination: destination) else { return entities }
        return entities.compactMap { matching.destinationEntity[$0] }
    }

    /// Throws ``MigrationError/Code/dropsEveryEntity`` when, following the store's entities
    /// through `hops` (each a source and destination model), none is left.
    static func check(_ hops: [(source: ObjectModel, destination: ObjectModel)], allowed: Bool) throws(MigrationError) {
        guard !allowed, let first = hops.first, let last = hops.last else { return }
        let stored = first.source.entities.map(\.name)
        guard !stored.isEmpty else { return }
        var remaining = stored
        for hop in hops {
            remaining = survivors(of: remaining, from: hop.source, to: hop.destination)
            if remaining.isEmpty { break }
        }
        guard remaining.isEmpty else { return }
        let listed = stored.prefix(5).map { "'\($0)'" }.joined(separator: ", ") + (stored.count > 5 ? " and \(stored.count - 5) more" : "")
        throw MigrationError(
            .dropsEveryEntity,
            "the migration would drop every entity of the store (\(listed)) and all their rows: '\(last.destination.version)' continues none of them, by name or renaming identifier. Is this the store's model directory? If dropping all data is intended, allow it explicitly (MigrationOptions.allowsDroppingAllEntities, `stratactl migrate --force`, or `allow_dropping_all_entities: true` for the store in stratad.yaml)",
            sourceVersion: first.source.version, destinationVersion: last.destination.version)
    }
}
