import Foundation
import GRDB
import Logging
import Strata

/// The seed store of the upgrade benchmark, created once per row count and kept in a cache
/// directory when one is given.
enum UpgradeSeed {
    static func prepare(rows: Int, distinctKeys: Int = 1000, cache: URL?, directory: URL, logger: Logger, progress: Progress) throws -> URL {
        let folder = cache ?? directory
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // The model's checksum in the name: a cached seed of another Bench 1 is never reused.
        let tag = DeferralBenchmark.v1.checksum.filter { $0.isLetter || $0.isNumber }.prefix(8)
        // The number of distinct ranks in the name when it is not the usual 1,000.
        let keys = distinctKeys == 1000 ? "" : "-k\(distinctKeys)"
        let seed = folder.appending(path: "upgrade-seed-\(rows)\(keys)-\(tag).sqlite")
        if FileManager.default.fileExists(atPath: seed.path) {
            progress.say("seed: reusing \(seed.path)")
            return seed
        }
        progress.say("seed: creating a Bench 1 store with \(rows) items at \(seed.path)…")
        let partial = folder.appending(path: "upgrade-seed-\(rows)\(keys)-\(tag).partial.sqlite")
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: partial.path + suffix) }
        try DeferralBenchmark.createSeed(at: partial, rows: rows, distinctKeys: distinctKeys, logger: logger)
        try FileManager.default.moveItem(at: partial, to: seed)
        return seed
    }
}

/// What the benchmark checks after finishing: nothing lost, nothing broken, the fresh schema.
struct UpgradeVerification {
    var rowsAfter = 0
    var acknowledgedWrites = 0
    var acknowledgedMissing = 0
    var integrity = ""
    var schemaEqualsFresh = false
    var pendingAfter = 0

    var passed: Bool { acknowledgedMissing == 0 && integrity == "ok" && schemaEqualsFresh && pendingAfter == 0 }

    static func verify(_ store: URL, rows: Int, acknowledged: [Int64: String], directory: URL) throws -> UpgradeVerification {
        var result = UpgradeVerification()
        let queue = try DatabaseQueue(path: store.path)
        defer { try? queue.close() }
        try queue.read { db in
            result.rowsAfter = try Int.fetchOne(db, sql: "SELECT count(*) FROM Item") ?? 0
            let statement = try db.makeStatement(sql: "SELECT name FROM Item WHERE _pk = ?")
            for (pk, expected) in acknowledged {
                result.acknowledgedWrites += 1
                if try String.fetchOne(statement, arguments: [pk]) != expected { result.acknowledgedMissing += 1 }
            }
            result.integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ")
            result.schemaEqualsFresh = try SchemaSnapshot.of(db) == fresh(in: directory)
        }
        result.pendingAfter = try PersistentStore.pendingDeferredWork(at: store).count
        return result
    }

    /// The schema of a new store at Bench 2.
    static func fresh(in directory: URL) throws -> [String] {
        let url = directory.appending(path: "fresh-\(UUID().uuidString.prefix(6)).sqlite")
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) } }
        var logger = Logger(label: "io.strata.bench")
        logger.logLevel = .warning
        let store = try PersistentStore.open(at: url, model: DeferralBenchmark.v2, options: StoreOptions(logger: logger))
        defer { try? store.close() }
        return try store.database.read { db in try SchemaSnapshot.of(db) }
    }

    /// The online backup of the default run: one file next to the store, complete, with every row.
    struct Backup {
        var found = false
        var megabytes = 0.0
        var rows = 0
        var quickCheck = ""
        var passed: Bool { found && quickCheck == "ok" }
    }

    static func verifyBackup(of store: URL, rows: Int) throws -> Backup {
        var result = Backup()
        let folder = store.deletingLastPathComponent()
        let prefix = store.lastPathComponent + ".pre-migration-"
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(prefix) && !$0.hasSuffix(".partial") }
        guard let name = names.sorted().last else { return result }
        let url = folder.appending(path: name)
        defer { try? FileManager.default.removeItem(at: url) }
        result.found = true
        result.megabytes = Double((try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue ?? 0) / 1_048_576
        let queue = try DatabaseQueue(path: url.path)
        defer { try? queue.close() }
        try queue.read { db in
            result.rows = try Int.fetchOne(db, sql: "SELECT count(*) FROM Item WHERE legacyNote IS NOT NULL") ?? 0
            result.quickCheck = try String.fetchAll(db, sql: "PRAGMA quick_check").joined(separator: "; ")
        }
        return result
    }
}
