import Foundation
import GRDB

/// One migration or creation event.
public struct StoreHistoryEntry: Sendable, Hashable, Codable {
    /// When it happened.
    public var at: Date
    /// `created`, `lightweight`, `staged`, `deferred-finished`, …
    public var kind: String
    /// The model version before (nil for `created`).
    public var fromVersion: String?
    /// The model checksum before (nil for `created`).
    public var fromChecksum: String?
    /// The model version after.
    public var toVersion: String
    /// The model checksum after.
    public var toChecksum: String
    /// What was done, in words: operation and task counts, rows, batches.
    public var detail: String
}

/// The SQL of Strata's own tables, all prefixed `_strata_` and excluded from schema comparisons.
enum MetadataSchema {
    static let metadataTable = "_strata_metadata"
    static let historyTable = "_strata_history"

    static let creationSQL = [
        "CREATE TABLE \(metadataTable) (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)",
        """
        CREATE TABLE \(historyTable) (id INTEGER PRIMARY KEY, at REAL NOT NULL, kind TEXT NOT NULL, \
        fromVersion TEXT, fromChecksum TEXT, toVersion TEXT NOT NULL, toChecksum TEXT NOT NULL, detail TEXT NOT NULL DEFAULT '')
        """,
    ]

    static let formatVersion = 1

    /// Writes the metadata rows for `model` (inside the caller's transaction).
    static func writeModel(_ model: ObjectModel, in db: Database) throws {
        let modelJSON = String(decoding: try ModelFile.encode(model, format: .json), as: UTF8.self)
        let hashes = String(decoding: try JSONSerialization.data(withJSONObject: model.entityHashes, options: [.sortedKeys]), as: UTF8.self)
        let values: [(String, String)] = [
            ("formatVersion", String(formatVersion)),
            ("modelVersion", model.version),
            ("modelChecksum", model.checksum),
            ("entityHashes", hashes),
            ("model", modelJSON),
        ]
        for (key, value) in values {
            try db.execute(sql: "INSERT INTO \(metadataTable)(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", arguments: [key, value])
        }
    }

    static func appendHistory(_ entry: StoreHistoryEntry, in db: Database) throws {
        try db.execute(
            sql: "INSERT INTO \(historyTable)(at, kind, fromVersion, fromChecksum, toVersion, toChecksum, detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
            arguments: [entry.at.timeIntervalSince1970, entry.kind, entry.fromVersion, entry.fromChecksum, entry.toVersion, entry.toChecksum, entry.detail])
    }
}
