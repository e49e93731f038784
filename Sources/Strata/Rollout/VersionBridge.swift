import Foundation
import GRDB
import Synchronization

/// Serves an older model version of a store beside the version the store is at: the shape a
/// client built against that version reads and writes, mapped onto the store's tables.
///
/// A lightweight migration renames tables and columns in place and leaves what the new version
/// removed — a dropped attribute's column, a removed entity's table — until the deferred
/// cleanup drops it. So while the cleanup waits, the older shape still has a home in the store:
/// its entities and properties are the current ones under their old names (through the
/// renaming identifiers of every hop between the two versions), plus the leftovers. The bridge
/// works that mapping out once, from the same inference that ran the hops, checks it against
/// the store's schema, and gives an ``ObjectContext`` (``ObjectContext/init(store:serving:)``)
/// whose fetches, predicates, sorts and saves use the older names:
///
/// - entity and property names go through the renaming identifiers of every hop: a renamed
///   column is one column, seen under either name;
/// - attributes the newer version added are invisible to the older client, and take their
///   default (or stay NULL when optional) on its inserts;
/// - attributes the newer version removed stay readable and writable for as long as their
///   columns exist (optional then: rows the newer version inserts have none);
/// - the change history records the older client's changes under the current names.
///
/// A version that cannot be served so is refused (``VersionBridgeError``) naming the hop and
/// what is missing — a custom stage (its changes are code, not names), a type change, a table
/// or column the cleanup already dropped, rows that moved — never a wrong answer. ``leftovers``
/// says what the bridge needs that the deferred cleanup would destroy: stratad holds those
/// tasks while clients of the version are active.
///
/// ```swift
/// let bridge = try VersionBridge.resolve(store: store, directory: models, version: "Fleet 1")
/// let context = ObjectContext(store: store, serving: bridge)
/// let old = try context.fetch("Aircraft", where: "tailNumber == %@", "F-GSPT")   // Fleet 1 names
/// ```
public struct VersionBridge: Sendable {
    /// The version served (older than the store's).
    public let version: String
    /// The version the store is at.
    public let currentVersion: String
    /// The model the served version's contexts use: the older version, with a removed
    /// attribute optional (rows the newer version inserts have no value for it) and an
    /// attribute the newer version made non-optional non-optional here too.
    public let servedModel: ObjectModel
    /// The served model's layout on the store's tables and columns.
    public let layout: StorageLayout
    /// What only the served version still uses: tables and columns the deferred cleanup of the
    /// newer version will drop.
    public let leftovers: Leftovers
    /// Entities the served version cannot insert, with why (the newer version requires an
    /// attribute it does not have and that has no default). Fetches, updates and deletes of
    /// them are served.
    public let insertRefusals: [String: String]

    /// Served entity → its name in the store's version (a removed entity keeps its own).
    let currentEntity: [String: String]
    /// Store's entity → served name.
    let servedEntity: [String: String]
    /// Served entity → served property (top level) → the store version's name.
    let currentProperty: [String: [String: String]]
    /// Store's entity → its property → the served name.
    let servedProperty: [String: [String: String]]
    /// Caches that live as long as the bridge: one per version pair.
    let caches: Caches

    /// Tables and columns of the store that only a served version uses.
    public struct Leftovers: Sendable, Hashable {
        /// Whole tables (a removed entity's, a removed relationship's join table).
        public var tables: Set<String> = []
        /// Columns by table (removed attributes and relationships).
        public var columns: [String: Set<String>] = [:]

        /// Whether nothing is left over.
        public var isEmpty: Bool { tables.isEmpty && columns.values.allSatisfy(\.isEmpty) }

        /// What of `tables` and `columns` these leftovers hold, in words (`table Aircraft:
        /// column photo`), empty when none.
        public func overlap(tables dropped: Set<String>, columns droppedColumns: [String: Set<String>]) -> [String] {
            var found: [String] = []
            for table in tables.intersection(dropped).sorted() { found.append("table \(table)") }
            for (table, names) in columns.sorted(by: { $0.key < $1.key }) {
                let hit = names.intersection(droppedColumns[table] ?? []).union(dropped.contains(table) ? names : [])
                if !hit.isEmpty { found.append("\(table).\(hit.sorted().joined(separator: ", "))") }
            }
            return found
        }
    }

    /// What a bridge keeps for its contexts: compiled fetches, entity descriptions and row
    /// plans, and the schema version its leftovers were last seen at.
    final class Caches: Sendable {
        let queries = FetchQueryCache()
        let contexts = ContextCachePool()
        let schemaVersion: Mutex<Int>
        init(schemaVersion: Int) { self.schemaVersion = Mutex(schemaVersion) }
    }

    // MARK: - Resolving

    /// The bridge that serves `version` of `directory` on `store`, checked against the
    /// store's schema now.
    ///
    /// - Parameters:
    ///   - customStages: the custom stages the store's migrations run (a hop one covers cannot
    ///     be served across).
    /// - Throws: ``VersionBridgeError``: `unknownVersion` (not in `directory`), `newerVersion`
    ///   (after the store's), `notServable` (why, with the hop); also when `version` is the
    ///   store's own (no bridge is needed: use the store's contexts).
    public static func resolve(store: PersistentStore, directory: ModelDirectory, version: String,
                               customStages: [MigrationStage] = []) throws(VersionBridgeError) -> VersionBridge {
        let current = store.model
        let names = directory.versions.map(\.version)
        guard let served = directory.version(named: version) else {
            throw VersionBridgeError(.unknownVersion, version: version, current: current.version,
                                     reason: "'\(version)' is not a version of the store's model directory (versions: \(names.joined(separator: ", ")))")
        }
        guard let currentIndex = directory.index(ofVersion: current.version) ?? directory.versions.lastIndex(where: { $0.checksum == current.checksum }),
              let servedIndex = directory.index(ofVersion: version) else {
            throw VersionBridgeError(.notServable, version: version, current: current.version,
                                     reason: "the store's version '\(current.version)' is not in its model directory")
        }
        if servedIndex > currentIndex {
            throw VersionBridgeError(.newerVersion, version: version, current: current.version,
                                     reason: "'\(version)' is newer than '\(current.version)', the version the store is at: the store has not been moved to it yet")
        }
        guard served.checksum != current.checksum else {
            throw VersionBridgeError(.notServable, version: version, current: current.version,
                                     reason: "'\(version)' stores data exactly as '\(current.version)' does: serve it as the store's version")
        }
        func refuse(_ reason: String) -> VersionBridgeError {
            VersionBridgeError(.notServable, version: version, current: current.version, reason: reason)
        }
        let path: ProgressiveMigrationPath
        do {
            path = try ProgressiveMigrationGraph(directory: directory).path(from: served, to: current)
        } catch {
            throw refuse("no migration path leads from it to '\(current.version)': \(error.reason)")
        }
        let custom = Self.customHops(customStages)
        var tracker = HopTracker(served: served)
        for (from, to) in path.hops {
            if let label = custom["\(from.checksum)>\(to.checksum)"] {
                throw refuse("the hop '\(from.version)' -> '\(to.version)' is the custom stage '\(label)': its changes are code, which cannot be served backwards; clients of '\(version)' must be upgraded to '\(to.version)' or later")
            }
            do {
                try tracker.apply(from: from, to: to)
            } catch {
                throw refuse("the hop '\(from.version)' -> '\(to.version)' is not a lightweight migration (\(error.reason)); its changes cannot be served backwards")
            }
        }
        do {
            return try store.database.read { db throws -> VersionBridge in
                let schema = try PhysicalSchema(db, tables: Set(tracker.tables.values.compactMap(\.name)))
                let builder = try VersionBridgeBuilder(tracker: tracker, current: current, schema: schema, refuse: refuse)
                return builder.bridge(schemaVersion: try PersistentStore.schemaVersion(in: db))
            }
        } catch let error as VersionBridgeError {
            throw error
        } catch {
            throw refuse("the store's schema could not be read: \(error)")
        }
    }

    /// Custom stages by the hop they cover (`sourceChecksum>destinationChecksum`) → label.
    static func customHops(_ stages: [MigrationStage]) -> [String: String] {
        var hops: [String: String] = [:]
        for stage in stages {
            guard case .custom(let from, let to, _, _) = stage.kind,
                  let source = try? from.resolve(), let destination = try? to.resolve() else { continue }
            hops["\(source.checksum)>\(destination.checksum)"] = stage.label
        }
        return hops
    }

    // MARK: - Checking

    /// Checks, inside the transaction `db` is in, that the leftovers the bridge uses are still
    /// there (only when the schema changed since they were last seen: one cached statement
    /// otherwise). ``ObjectContext`` runs it at the start of each of its transactions.
    ///
    /// - Throws: ``VersionBridgeError`` (`notServable`) naming what the cleanup dropped.
    func check(_ db: Database) throws {
        let version = try PersistentStore.schemaVersion(in: db)
        if caches.schemaVersion.withLock({ $0 }) == version { return }
        if let missing = try missingLeftover(in: db) {
            throw VersionBridgeError(.notServable, version: self.version, current: currentVersion, reason: missing)
        }
        caches.schemaVersion.withLock { $0 = version }
    }

    /// What of ``leftovers`` is no longer in the store, in words; nil when all is there.
    func missingLeftover(in db: Database) throws -> String? {
        let tables = leftovers.tables.union(leftovers.columns.keys)
        let schema = try PhysicalSchema(db, tables: tables)
        for table in leftovers.tables.sorted() where schema.columns[table] == nil {
            return "table \(table), which only '\(version)' still uses, was dropped by the deferred cleanup of '\(currentVersion)'"
        }
        for (table, names) in leftovers.columns.sorted(by: { $0.key < $1.key }) {
            for name in names.sorted() where !(schema.columns[table]?.contains(name) ?? false) {
                return "column \(table).\(name), which only '\(version)' still uses, was dropped by the deferred cleanup of '\(currentVersion)'"
            }
        }
        return nil
    }

    // MARK: - Names

    /// The store version's name of a served entity (a removed entity keeps its own).
    public func currentName(ofEntity entity: String) -> String { currentEntity[entity] ?? entity }

    /// The store version's name of a served entity's property (top level: an attribute, a
    /// composite or a relationship); a removed property keeps its own.
    public func currentName(ofProperty property: String, entity: String) -> String {
        currentProperty[entity]?[property] ?? property
    }

    /// The served name of a store entity, nil when the served version has none (added later).
    public func servedName(ofEntity entity: String) -> String? {
        if let name = servedEntity[entity] { return name }
        // Names history kept for entities the store's version removed: the served version's own.
        return currentEntity[entity] == nil && servedModel.entity(named: entity) != nil ? entity : nil
    }

    /// The served name of a store entity's property (top level), nil when the served version
    /// has none (added later).
    public func servedName(ofProperty property: String, entity: String) -> String? {
        if let name = servedProperty[entity]?[property] { return name }
        guard let served = servedName(ofEntity: entity) else { return nil }
        // A property the store's version removed keeps its served name in history.
        let known = currentProperty[served]
        if known?[property] == nil, servedModel.allAttributes(of: served).contains(where: { $0.name == property })
            || servedModel.allComposites(of: served).contains(where: { $0.name == property })
            || servedModel.allRelationships(of: served).contains(where: { $0.name == property }),
           !(known?.values.contains(property) ?? false) {
            return property
        }
        return nil
    }
}

/// The columns of some tables of a store, as its schema has them now.
struct PhysicalSchema {
    /// Columns by table; a table that does not exist has no entry.
    var columns: [String: Set<String>] = [:]

    init(_ db: Database, tables: Set<String>) throws {
        for table in tables where try db.tableExists(table) {
            columns[table] = Set(try db.columns(in: table).map(\.name))
        }
    }
}
