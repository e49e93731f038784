import Foundation
import GRDB
import Testing
@testable import Strata

/// Kill -9 tests: a child process (`stratactl deferred finish`) finishing deferred work is
/// killed at many points; each time the reopened store has every row and finishing completes.
@Suite("Crash safety of deferred finishing", .serialized)
struct DeferredCrashTests {
    static let wide = ObjectModel(version: "wide 1", entities: [
        Entity("Item", attributes: [
            Attribute("name", .string), Attribute("payload", .string), Attribute("scratch", .string), Attribute("rank", .int64),
        ], uniquenessConstraints: [UniquenessConstraint(["name"])]),
        Entity("Obsolete", attributes: [Attribute("text", .string)]),
    ])
    static let narrow = ObjectModel(version: "wide 2", entities: [
        Entity("Item", attributes: [Attribute("name", .string), Attribute("rank", .int64)],
               indexes: [Index("byRank", keyPaths: ["rank"])], uniquenessConstraints: [UniquenessConstraint(["name"])]),
    ])
    static let rows = 4000

    static var stratactl: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/debug/stratactl")
    }

    /// Adds an index and removes another, without a rewrite: an index drop and an index build.
    static let indexed = ObjectModel(version: "indexed 1", entities: [
        Entity("Item", attributes: [Attribute("name", .string), Attribute("rank", .int64), Attribute("score", .double)],
               indexes: [Index("byName", keyPaths: ["name"]), Index("byScore", keyPaths: ["score"])]),
    ])
    static let reindexed = ObjectModel(version: "indexed 2", entities: [
        Entity("Item", attributes: [Attribute("name", .string), Attribute("rank", .int64), Attribute("score", .double)],
               indexes: [Index("byRank", elements: [.init("rank"), .init("score", ascending: false)])]),
    ])

    /// What is pending in the store a kill test starts from.
    enum Fixture: String, CaseIterable, Sendable {
        /// A table rewrite (with a unique and a new index), a table drop, a vacuum.
        case rewrite
        /// Two index drops (one retired at once, one with NULL keys through a side table) and an
        /// index build (a side table), then their batched drops.
        case indexes
        /// An online backup first, then the rewrite's tasks.
        case backup

        var model: ObjectModel { self == .indexes ? DeferredCrashTests.reindexed : DeferredCrashTests.narrow }
    }

    static func pendingStore(_ fixture: Fixture, in directory: URL) throws -> URL {
        switch fixture {
        case .rewrite: return try pendingStore(in: directory)
        case .backup: return try pendingStore(in: directory, backup: true)
        case .indexes:
            let url = directory.appendingPathComponent("crash-\(UUID().uuidString.prefix(6)).sqlite")
            let store = try PersistentStore.open(at: url, model: indexed)
            try store.database.write { db in
                let item = try db.makeStatement(sql: "INSERT INTO Item(_pk, name, rank, score) VALUES (?, ?, ?, ?)")
                for i in 1...rows { try item.execute(arguments: [i, "item-\(i)", i % 101, i % 5 == 0 ? nil : Double(i) / 4]) }
            }
            try store.close()
            try PersistentStore.open(at: url, model: reindexed, options: StoreOptions(migration: .deferred)).close()
            return url
        }
    }

    static func backupURL(_ url: URL) -> URL { URL(fileURLWithPath: url.path + ".backup") }

    /// A store with `rows` items migrated to `narrow` with deferral: a table rewrite, a table
    /// drop and a vacuum pending (after an online backup with `backup`).
    static func pendingStore(in directory: URL, backup: Bool = false) throws -> URL {
        let url = directory.appendingPathComponent("crash-\(UUID().uuidString.prefix(6)).sqlite")
        let store = try PersistentStore.open(at: url, model: wide)
        try store.database.write { db in
            let item = try db.makeStatement(sql: "INSERT INTO Item(_pk, name, payload, scratch, rank) VALUES (?, ?, ?, ?, ?)")
            for i in 1...rows { try item.execute(arguments: [i, "item-\(i)", String(repeating: "p", count: 200), "s", i % 101]) }
            let obsolete = try db.makeStatement(sql: "INSERT INTO Obsolete(_pk, text) VALUES (?, ?)")
            for i in 1...rows { try obsolete.execute(arguments: [i, "old \(i)"]) }
        }
        try store.close()
        var migration = MigrationOptions.deferred
        if backup { migration.backup = backupURL(url) }
        try PersistentStore.open(at: url, model: narrow, options: StoreOptions(migration: migration)).close()
        return url
    }

    /// Runs `stratactl deferred finish` with a crash point; returns the termination signal (0 if it exited).
    static func finish(_ url: URL, faultPoint: String?, killAfter: Duration? = nil, options: [String] = []) throws -> (status: Int32, signaled: Bool) {
        let process = Process()
        process.executableURL = stratactl
        process.arguments = ["deferred", "finish", url.path, "--batch-ms", "1", "--pause-ms", "1", "--json"] + options
        var environment = ProcessInfo.processInfo.environment
        if let faultPoint { environment["STRATA_FAULT_POINT"] = faultPoint }
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        if let killAfter {
            Thread.sleep(forTimeInterval: Double(killAfter.components.attoseconds) / 1e18 + Double(killAfter.components.seconds))
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        return (process.terminationStatus, process.terminationReason == .uncaughtSignal)
    }

    /// Every item is readable through the current model with its values.
    static func verifyRows(_ url: URL) throws {
        let store = try PersistentStore.open(at: url, model: narrow)
        defer { try? store.close() }
        let (count, checksum) = try store.database.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM Item") ?? 0,
             try Int.fetchOne(db, sql: "SELECT sum(_pk * 7 + rank) FROM Item WHERE name = 'item-' || _pk") ?? 0)
        }
        #expect(count == rows)
        let expected = (1...rows).reduce(0) { $0 + $1 * 7 + $1 % 101 }
        #expect(checksum == expected)
    }

    static func verifyRows(_ fixture: Fixture, _ url: URL) throws {
        guard fixture == .indexes else { return try verifyRows(url) }
        let store = try PersistentStore.open(at: url, model: reindexed)
        defer { try? store.close() }
        let (count, checksum) = try store.database.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM Item") ?? 0,
             try Int.fetchOne(db, sql: "SELECT sum(_pk * 7 + rank) FROM Item WHERE name = 'item-' || _pk") ?? 0)
        }
        #expect(count == rows)
        #expect(checksum == (1...rows).reduce(0) { $0 + $1 * 7 + $1 % 101 })
    }

    static func verifyFinished(_ fixture: Fixture, _ url: URL) throws {
        try verifyFinished(url, model: fixture.model)
        if fixture == .backup {
            // The backup was taken before anything was destroyed: every row with its old columns.
            let backup = backupURL(url)
            #expect(!FileManager.default.fileExists(atPath: backup.path + ".partial"))
            let queue = try DatabaseQueue(path: backup.path)
            defer { try? queue.close() }
            let (items, obsolete, check) = try queue.read { db in
                (try Int.fetchOne(db, sql: "SELECT count(*) FROM Item WHERE scratch = 's' AND name = 'item-' || _pk") ?? 0,
                 try Int.fetchOne(db, sql: "SELECT count(*) FROM Obsolete") ?? 0,
                 try String.fetchOne(db, sql: "PRAGMA integrity_check"))
            }
            #expect(items == rows && obsolete == rows && check == "ok")
        }
    }

    static func verifyFinished(_ url: URL, model: ObjectModel = narrow) throws {
        let store = try PersistentStore.open(at: url, model: model)
        defer { try? store.close() }
        #expect(try store.pendingDeferredWork().isEmpty)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fresh-\(UUID().uuidString.prefix(6))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fresh = try PersistentStore.open(at: directory.appendingPathComponent("f.sqlite"), model: model)
        defer { try? fresh.close() }
        #expect(try store.database.read(SchemaSnapshot.of) == fresh.database.read(SchemaSnapshot.of))
        #expect(try store.database.read { try Int.fetchOne($0, sql: "PRAGMA integrity_check") } == nil
            || store.database.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") } == "ok")
    }

    static let crashPoints: [(Fixture, String)] = [
        (.rewrite, "rewrite.start"), (.rewrite, "rewrite.mid-batch@1"), (.rewrite, "rewrite.mid-batch@3"),
        (.rewrite, "rewrite.between-batches@1"), (.rewrite, "rewrite.between-batches@3"), (.rewrite, "rewrite.verify@1"), (.rewrite, "rewrite.verify-beside@1"), (.rewrite, "rewrite.swap"),
        (.rewrite, "rewrite.swap-indexes"), (.rewrite, "drop.mid-batch@1"), (.rewrite, "drop.mid-batch@3"),
        (.rewrite, "vacuum.between-batches@1"),
        (.rewrite, "drop.retire"), (.rewrite, "drop.at-once"), (.rewrite, "index.start"), (.rewrite, "index.sorted-run"), (.rewrite, "index.collect@1"), (.rewrite, "index.export@1"),
        (.rewrite, "index.export@2"), (.rewrite, "index.adopt"), (.rewrite, "rewrite.carry-index"),
        (.indexes, "index.retire"), (.indexes, "index.start"), (.indexes, "index.mid-batch@1"), (.indexes, "index.mid-batch@3"),
        (.indexes, "index.between-batches@2"), (.indexes, "index.finish"), (.indexes, "index.start@2"), (.indexes, "index.fallback"),
        (.indexes, "index.between-batches@9"), (.indexes, "index.finish@2"), (.indexes, "drop.mid-batch@1"),
        (.indexes, "drop.retire"), (.indexes, "drop.mid-batch@6"),
        (.backup, "backup.mid-step@1"), (.backup, "backup.mid-step@3"), (.backup, "backup.between-steps@2"),
        (.backup, "backup.finish"), (.backup, "backup.mid-step@5"), (.backup, "backup.between-steps@4"),
        (.backup, "backup.last-pass@1"), (.backup, "backup.check@1"),
    ]

    @Test("SIGKILL at a crash point leaves every row and finishing completes", arguments: crashPoints)
    func killAtCrashPoint(_ fixture: Fixture, _ point: String) throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.stratactl.path), "build stratactl first (swift build)")
        let directory = TemporaryFolder()
        let url = try Self.pendingStore(fixture, in: directory.url)
        let crashed = try Self.finish(url, faultPoint: point)
        #expect(crashed.signaled && crashed.status == SIGKILL, "\(fixture) \(point): the child was expected to die by SIGKILL")
        try Self.verifyRows(fixture, url)
        let pending = try PersistentStore.pendingDeferredWork(at: url)
        #expect(!pending.isEmpty, "\(fixture) \(point): the crash happened before the work was done")
        let resumed = try Self.finish(url, faultPoint: nil)
        #expect(!resumed.signaled && resumed.status == 0)
        try Self.verifyRows(fixture, url)
        try Self.verifyFinished(fixture, url)
    }

    @Test("SIGKILL inside an index built at once (--idle-batch-ms): every row stays and finishing completes",
          arguments: [Fixture.rewrite, Fixture.indexes])
    func killInsideAnIndexBuiltAtOnce(_ fixture: Fixture) throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.stratactl.path), "build stratactl first (swift build)")
        let directory = TemporaryFolder()
        let url = try Self.pendingStore(fixture, in: directory.url)
        let crashed = try Self.finish(url, faultPoint: "index.atOnce", options: ["--idle-batch-ms", "250"])
        #expect(crashed.signaled && crashed.status == SIGKILL, "\(fixture): the child was expected to die by SIGKILL at index.atOnce")
        try Self.verifyRows(fixture, url)
        #expect(!(try PersistentStore.pendingDeferredWork(at: url)).isEmpty)
        let resumed = try Self.finish(url, faultPoint: nil, options: ["--idle-batch-ms", "250"])
        #expect(!resumed.signaled && resumed.status == 0)
        try Self.verifyRows(fixture, url)
        try Self.verifyFinished(fixture, url)
    }

    @Test("deferred finish --idle-batch-ms runs idle batches and finishes to a fresh store's schema; without it, none")
    func idleBatchesOffline() throws {
        for idle in [true, false] {
            let directory = TemporaryFolder()
            let url = try Self.pendingStore(.rewrite, in: directory.url)
            let result = try BuiltBinary.run("stratactl", ["deferred", "finish", url.path, "--json"] + (idle ? ["--idle-batch-ms", "250"] : []))
            #expect(result.status == 0, "\(result)")
            let report = try #require(try CLIFixture.json(result.stdout) as? [String: Any], "\(result)")
            let idleBatches = try #require(report["idleBatches"] as? Int)
            let batches = try #require(report["batches"] as? Int)
            #expect(idle ? idleBatches > 0 : idleBatches == 0, "\(report)")
            #expect(batches > 0)
            #expect(report["tasksRemaining"] as? Int == 0)
            try Self.verifyRows(.rewrite, url)
            try Self.verifyFinished(.rewrite, url)
        }
    }

    @Test("SIGKILL while a grown WAL is cut back in steps: every row stays and finishing completes")
    func killWhileTheWALIsCutBack() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.stratactl.path), "build stratactl first (swift build)")
        let directory = TemporaryFolder()
        let url = try Self.pendingStore(.rewrite, in: directory.url)
        // Another connection keeps the WAL file when the child's writer closes. Grown to about
        // 160 MiB, copied, then restarted by one write: a long tail for the child to cut.
        let keeper = try DatabaseQueue(path: url.path)
        defer { try? keeper.close() }
        try keeper.inDatabase { db in
            try db.execute(sql: "CREATE TABLE scratch(b)")
            try db.execute(sql: "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40000) INSERT INTO scratch SELECT randomblob(4000) FROM n")
            try db.execute(sql: "DROP TABLE scratch")
            _ = try db.checkpoint(.passive)
            try db.execute(sql: "PRAGMA user_version = 0")
        }
        let grown = PersistentStore.fileSize(url.path + "-wal")
        #expect(grown > 2 * PersistentStore.walSizeLimit)
        // Killed right after the second cut, inside its write transaction.
        let crashed = try Self.finish(url, faultPoint: "wal.trim@2")
        #expect(crashed.signaled && crashed.status == SIGKILL)
        let left = PersistentStore.fileSize(url.path + "-wal")
        #expect(left < grown && left >= PersistentStore.walSizeLimit, "WAL of \(left) bytes (\(grown) before)")
        try Self.verifyRows(url)
        #expect(!(try PersistentStore.pendingDeferredWork(at: url)).isEmpty)
        let resumed = try Self.finish(url, faultPoint: nil)
        #expect(!resumed.signaled && resumed.status == 0)
        try Self.verifyRows(url)
        try Self.verifyFinished(url)
    }

    @Test("a backup killed mid-copy resumes at its recorded page: the pages redone are at most one step")
    func backupResumesAfterKill() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.stratactl.path), "build stratactl first (swift build)")
        let directory = TemporaryFolder()
        let url = try Self.pendingStore(.backup, in: directory.url)
        let crashed = try Self.finish(url, faultPoint: "backup.between-steps@3")
        #expect(crashed.signaled && crashed.status == SIGKILL)
        let position = try #require(try PersistentStore.pendingDeferredWork(at: url).first { $0.kind == .backup }?.rowsDone)
        #expect(position > 0)
        #expect(FileManager.default.fileExists(atPath: Self.backupURL(url).path + ".partial"))
        let resumed = try Self.finish(url, faultPoint: nil)
        #expect(!resumed.signaled && resumed.status == 0)
        let store = try PersistentStore.open(at: url, model: Self.narrow)
        let detail = try store.currentMetadata().history.first { $0.kind == "backup" }?.detail ?? ""
        try store.close()
        #expect(detail.contains("resumed at page \(position)") && detail.contains("quick_check ok"), "\(detail)")
        try Self.verifyFinished(.backup, url)
    }

    @Test("a backup recorded complete whose copy is then removed is taken again from the first page")
    func backupCopyRemovedAfterItsLastPass() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.stratactl.path), "build stratactl first (swift build)")
        let directory = TemporaryFolder()
        let url = try Self.pendingStore(.backup, in: directory.url)
        let crashed = try Self.finish(url, faultPoint: "backup.check@1")
        #expect(crashed.signaled && crashed.status == SIGKILL)
        try FileManager.default.removeItem(atPath: Self.backupURL(url).path + ".partial")
        let resumed = try Self.finish(url, faultPoint: nil)
        #expect(!resumed.signaled && resumed.status == 0)
        try Self.verifyFinished(.backup, url)
    }

    @Test("repeated SIGKILLs at arbitrary times, resumed each time, lose nothing", arguments: Fixture.allCases)
    func killAtArbitraryTimes(_ fixture: Fixture) throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.stratactl.path), "build stratactl first (swift build)")
        let directory = TemporaryFolder()
        let url = try Self.pendingStore(fixture, in: directory.url)
        var kills = 0
        for delay in [40, 90, 25, 150, 60, 200, 35, 120] {
            if try PersistentStore.pendingDeferredWork(at: url).isEmpty { break }
            let result = try Self.finish(url, faultPoint: nil, killAfter: .milliseconds(delay))
            if result.signaled { kills += 1 }
            try Self.verifyRows(fixture, url)
        }
        #expect(kills >= 1)
        _ = try Self.finish(url, faultPoint: nil)
        try Self.verifyRows(fixture, url)
        try Self.verifyFinished(fixture, url)
    }
}

/// A temporary folder removed at deinit.
final class TemporaryFolder: @unchecked Sendable {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("e2e-\(UUID().uuidString.prefix(8))")
    init() { try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(at: url) }
}
