import Foundation
import GRDB

/// What a store records about itself, in its own `_strata_metadata` table: the model it was
/// written with, when it was created, how it was migrated, and its deferred work.
///
/// Read it without opening the store for writing, like Core Data's `metadataForPersistentStore`:
///
/// ```swift
/// let metadata = try PersistentStore.metadata(at: url)
/// if !metadata.isCompatible(with: model) { … }
/// ```
public struct StoreMetadata: Sendable, Hashable {
    /// The metadata layout version; this Strata writes 1.
    public var formatVersion: Int
    /// A UUID identifying this store file, used in object URIs.
    public var storeIdentifier: String
    /// The model version the store is written with.
    public var modelVersion: String
    /// That model's checksum.
    public var modelChecksum: String
    /// Per entity, the hash of its storage (what changed, when the checksum differs).
    public var entityHashes: [String: String]
    /// The full model the store is written with (so that the store can be read, inspected and
    /// migrated without its model files).
    public var model: ObjectModel
    /// When the store was created.
    public var createdAt: Date
    /// Creation and every migration, oldest first.
    public var history: [HistoryEntry]
    /// Pending deferred work (the ledger); empty when no cleanup is pending.
    public var deferred: [DeferredTask]

    /// One migration or creation event.
    public typealias HistoryEntry = StoreHistoryEntry

    /// Whether the store was written with exactly this model's storage layout.
    public func isCompatible(with model: ObjectModel) -> Bool { model.checksum == modelChecksum }

    /// Human-readable differences between the store's model and `model`, per entity.
    public func differences(from model: ObjectModel) -> [String] {
        let theirs = model.entityHashes
        var lines: [String] = []
        for name in Set(entityHashes.keys).union(theirs.keys).sorted() {
            switch (entityHashes[name], theirs[name]) {
            case (nil, _?): lines.append("entity '\(name)' is in model '\(model.version)' but not in the store")
            case (_?, nil): lines.append("entity '\(name)' is in the store but not in model '\(model.version)'")
            case (let a?, let b?) where a != b:
                lines.append("entity '\(name)' differs: \(Self.entityDifferences(self.model.entity(named: name), model.entity(named: name)))")
            default: break
            }
        }
        return lines
    }

    private static func entityDifferences(_ a: Entity?, _ b: Entity?) -> String {
        guard let a, let b else { return "changed" }
        var parts: [String] = []
        let pa = Set(a.propertyNames), pb = Set(b.propertyNames)
        let added = pb.subtracting(pa).sorted(), removed = pa.subtracting(pb).sorted()
        if !added.isEmpty { parts.append("added \(added.joined(separator: ", "))") }
        if !removed.isEmpty { parts.append("removed \(removed.joined(separator: ", "))") }
        for name in pa.intersection(pb).sorted() {
            if let x = a.attribute(named: name), let y = b.attribute(named: name), x.type != y.type || x.isOptional != y.isOptional {
                parts.append("'\(name)' changed from \(x.type.rawValue)\(x.isOptional ? "?" : "") to \(y.type.rawValue)\(y.isOptional ? "?" : "")")
            } else if a.composite(named: name) != b.composite(named: name) || a.relationship(named: name) != b.relationship(named: name) {
                parts.append("'\(name)' changed")
            }
        }
        if a.indexes != b.indexes { parts.append("indexes changed") }
        if a.uniquenessConstraints != b.uniquenessConstraints { parts.append("uniqueness constraints changed") }
        if a.parent != b.parent || a.isAbstract != b.isAbstract { parts.append("inheritance changed") }
        return parts.isEmpty ? "changed" : parts.joined(separator: "; ")
    }
}

// MARK: - Reading

extension StoreMetadata {
    /// Reads the metadata and the pending ledger; throws ``StoreError/Code/notAStrataStore``
    /// when the tables are absent.
    static func read(from db: Database, path: String) throws -> StoreMetadata {
        guard try db.tableExists(MetadataSchema.metadataTable) else {
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
            let found = tables.isEmpty ? "it has no tables" : "it has tables \(tables.prefix(8).joined(separator: ", "))\(tables.count > 8 ? ", …" : "")"
            throw StoreError(.notAStrataStore, path: path, "this SQLite database is not a Strata store (no \(MetadataSchema.metadataTable) table; \(found)); use `stratactl import` or point at a Strata store")
        }
        var values: [String: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT key, value FROM \(MetadataSchema.metadataTable)") {
            values[row["key"]] = row["value"]
        }
        func require(_ key: String) throws -> String {
            guard let v = values[key] else {
                throw StoreError(.invalidMetadata, path: path, "store metadata lacks '\(key)'; the store is damaged — restore it from a backup")
            }
            return v
        }
        let format = Int(try require("formatVersion")) ?? 0
        guard format >= 1 && format <= MetadataSchema.formatVersion else {
            throw StoreError(.invalidMetadata, path: path, "store metadata format \(format) is not supported by this Strata (supports 1...\(MetadataSchema.formatVersion)); upgrade Strata")
        }
        let model: ObjectModel
        do {
            model = try ModelFile.decode(Data(try require("model").utf8), format: .json, file: "\(path) (embedded model)")
        } catch {
            throw StoreError(.invalidMetadata, path: path, "the model embedded in the store cannot be read: \(error)")
        }
        let hashesJSON = try require("entityHashes")
        let hashes = (try? JSONSerialization.jsonObject(with: Data(hashesJSON.utf8))) as? [String: String] ?? [:]
        let history = try Row.fetchAll(db, sql: "SELECT * FROM \(MetadataSchema.historyTable) ORDER BY id").map { row in
            StoreHistoryEntry(at: Date(timeIntervalSince1970: row["at"]), kind: row["kind"], fromVersion: row["fromVersion"],
                                       fromChecksum: row["fromChecksum"], toVersion: row["toVersion"], toChecksum: row["toChecksum"],
                                       detail: row["detail"])
        }
        let deferred = try DeferredLedger.pendingTasks(in: db)
        return StoreMetadata(
            formatVersion: format, storeIdentifier: try require("storeIdentifier"), modelVersion: try require("modelVersion"),
            modelChecksum: try require("modelChecksum"), entityHashes: hashes, model: model,
            createdAt: Date(timeIntervalSince1970: Double(try require("createdAt")) ?? 0), history: history, deferred: deferred)
    }
}
