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

    /// A store with `rows` items migrated to `narrow` with deferral: a table rewrite, a table
    /// drop and a vacuum pending.
    static func pendingStore(in directory: URL) throws -> URL {
        let url = directory.appendingPathComponent("crash-\(UUID().uuidString.prefix(6)).sqlite")
        let store = try PersistentStore.open(at: url, model: wide)
        try store.database.write { db in
            let item = try db.makeStatement(sql: "INSERT INTO Item(_pk, name, payload, scratch, rank) VALUES (?, ?, ?, ?, ?)")
            for i in 1...rows { try item.execute(arguments: [i, "item-\(i)", String(repeating: "p", count: 200), "s", i % 101]) }
            let obsolete = try db.makeStatement(sql: "INSERT INTO Obsolete(_pk, text) VALUES (?, ?)")
            for i in 1...rows { try obsolete.execute(arguments: [i, "old \(i)"]) }
        }
        try store.close()
        try PersistentStore.open(at: url, model: narrow, options: StoreOptions(migration: .deferred)).close()
        return url
    }

    /// Runs `stratactl deferred finish` with a crash point; returns the termination signal (0 if it exited).
    static func finish(_ url: URL, faultPoint: String?, killAfter: Duration? = nil) throws -> (status: Int32, signaled: Bool) {
        let process = Process()
        process.executableURL = stratactl
        process.arguments = ["deferred", "finish", url.path, "--batch-ms", "1", "--pause-ms", "1", "--json"]
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

    static func verifyFinished(_ url: URL) throws {
        let store = try PersistentStore.open(at: url, model: narrow)
        defer { try? store.close() }
        #expect(try store.pendingDeferredWork().isEmpty)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fresh-\(UUID().uuidString.prefix(6))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fresh = try PersistentStore.open(at: directory.appendingPathComponent("f.sqlite"), model: narrow)
        defer { try? fresh.close() }
        #expect(try store.database.read(SchemaSnapshot.of) == fresh.database.read(SchemaSnapshot.of))
        #expect(try store.database.read { try Int.fetchOne($0, sql: "PRAGMA integrity_check") } == nil
            || store.database.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") } == "ok")
    }

    @Test("SIGKILL at a crash point leaves every row and finishing completes", arguments: [
        "rewrite.start", "rewrite.mid-batch@1", "rewrite.mid-batch@3", "rewrite.between-batches@1",
        "rewrite.between-batches@3", "rewrite.index", "rewrite.swap", "drop.mid-batch@1", "drop.mid-batch@3",
    ])
    func killAtCrashPoint(_ point: String) throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.stratactl.path), "build stratactl first (swift build)")
        let directory = TemporaryFolder()
        let url = try Self.pendingStore(in: directory.url)
        let crashed = try Self.finish(url, faultPoint: point)
        #expect(crashed.signaled && crashed.status == SIGKILL, "\(point): the child was expected to die by SIGKILL")
        try Self.verifyRows(url)
        let pending = try PersistentStore.pendingDeferredWork(at: url)
        #expect(!pending.isEmpty, "\(point): the crash happened before the work was done")
        let resumed = try Self.finish(url, faultPoint: nil)
        #expect(!resumed.signaled && resumed.status == 0)
        try Self.verifyRows(url)
        try Self.verifyFinished(url)
    }

    @Test("repeated SIGKILLs at arbitrary times, resumed each time, lose nothing")
    func killAtArbitraryTimes() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.stratactl.path), "build stratactl first (swift build)")
        let directory = TemporaryFolder()
        let url = try Self.pendingStore(in: directory.url)
        var kills = 0
        for delay in [40, 90, 25, 150, 60, 200, 35, 120] {
            if try PersistentStore.pendingDeferredWork(at: url).isEmpty { break }
            let result = try Self.finish(url, faultPoint: nil, killAfter: .milliseconds(delay))
            if result.signaled { kills += 1 }
            try Self.verifyRows(url)
        }
        #expect(kills >= 1)
        _ = try Self.finish(url, faultPoint: nil)
        try Self.verifyRows(url)
        try Self.verifyFinished(url)
    }
}

/// A temporary folder removed at deinit.
final class TemporaryFolder: @unchecked Sendable {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("e2e-\(UUID().uuidString.prefix(8))")
    init() { try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(at: url) }
}
