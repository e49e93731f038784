import Foundation
import Strata
import Synchronization
import Testing
@testable import StrataDaemon

/// A clock the test moves by hand: `now` is a fixed origin plus an offset, `local` is settable,
/// and `sleep` returns at once after advancing the clock.
final class FakeSchedulerClock: SchedulerClock {
    let origin = ContinuousClock.now
    private let state = Mutex<(offset: Duration, local: LocalTime)>((.zero, LocalTime(day: 20_000, minute: 12 * 60)))

    var now: ContinuousClock.Instant { origin + state.withLock { $0.offset } }
    var local: LocalTime {
        get { state.withLock { $0.local } }
        set { state.withLock { $0.local = newValue } }
    }
    func advance(_ duration: Duration) { state.withLock { $0.offset += duration } }
    func sleep(for duration: Duration) async throws {
        advance(duration)
        try await Task.sleep(for: .milliseconds(1))
    }
}

/// A directory that plays `/` for ``HostSignals``: pressure files, load average and cgroup.
struct FakeHostRoot {
    let path: String

    init(cgroup: String? = "/system.slice/stratad.service", hybrid: Bool = false) throws {
        path = NSTemporaryDirectory() + "strata-host-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path + "/proc/pressure", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: path + "/proc/self", withIntermediateDirectories: true)
        set(cpu: 0, io: 0, load: 0.1)
        if let cgroup {
            try "0::\(cgroup)\n".write(toFile: path + "/proc/self/cgroup", atomically: true, encoding: .utf8)
            try FileManager.default.createDirectory(atPath: cgroupDirectory(cgroup, hybrid: hybrid), withIntermediateDirectories: true)
            if cgroup != "/" { setCgroup(cgroup, hybrid: hybrid, cpu: 0, io: 0) }
        }
    }

    func cgroupDirectory(_ cgroup: String, hybrid: Bool) -> String { path + (hybrid ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup") + cgroup }

    static func psi(_ avg10: Double) -> String {
        "some avg10=\(String(format: "%.2f", avg10)) avg60=1.00 avg300=0.50 total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
    }

    func set(cpu: Double? = nil, io: Double? = nil, load: Double? = nil) {
        if let cpu { try! Self.psi(cpu).write(toFile: path + "/proc/pressure/cpu", atomically: true, encoding: .utf8) }
        if let io { try! Self.psi(io).write(toFile: path + "/proc/pressure/io", atomically: true, encoding: .utf8) }
        if let load { try! "\(load) 0.50 0.40 2/300 12345\n".write(toFile: path + "/proc/loadavg", atomically: true, encoding: .utf8) }
    }

    func setCgroup(_ cgroup: String = "/system.slice/stratad.service", hybrid: Bool = false, cpu: Double, io: Double) {
        let directory = cgroupDirectory(cgroup, hybrid: hybrid)
        try! Self.psi(cpu).write(toFile: directory + "/cpu.pressure", atomically: true, encoding: .utf8)
        try! Self.psi(io).write(toFile: directory + "/io.pressure", atomically: true, encoding: .utf8)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// A model whose migration 1 → 2 leaves deferred work: dropping an attribute rewrites the
/// table, a new index is built.
enum LoadModel {
    static let v1 = """
        version: Load 1
        entities:
          - name: Item
            attributes:
              - {name: name, type: string}
              - {name: payload, type: string}
              - {name: rank, type: int64}
              - {name: legacyNote, type: string}
        """
    static let v2 = """
        version: Load 2
        entities:
          - name: Item
            attributes:
              - {name: name, type: string}
              - {name: payload, type: string}
              - {name: rank, type: int64}
            indexes:
              - name: byRank
                elements: [rank]
        """

    /// Writes the model directory (`current: Load 2`) under `directory`; returns its path.
    static func write(in directory: String) throws -> String {
        let models = directory + "/models"
        try FileManager.default.createDirectory(atPath: models, withIntermediateDirectories: true)
        try v1.write(toFile: models + "/Load 1.yaml", atomically: true, encoding: .utf8)
        try v2.write(toFile: models + "/Load 2.yaml", atomically: true, encoding: .utf8)
        try "current: Load 2\nversions:\n  - Load 1.yaml\n  - Load 2.yaml\n".write(toFile: models + "/versions.yaml", atomically: true, encoding: .utf8)
        return models
    }

    /// Creates a version-1 store with `rows` items at `path`.
    static func seed(at path: String, models: String, rows: Int) throws {
        let directory = try ModelDirectory(url: URL(fileURLWithPath: models))
        let store = try PersistentStore.open(at: URL(fileURLWithPath: path), model: directory.version(named: "Load 1")!)
        try store.database.write { db in
            let statement = try db.makeStatement(sql: "INSERT INTO Item(_pk, name, payload, rank, legacyNote) VALUES (?, ?, ?, ?, ?)")
            let payload = String(repeating: "p", count: 100)
            for i in 1...rows { try statement.execute(arguments: [i, "item \(i)", payload, i % 1000, "legacy \(i)"]) }
        }
        try store.close()
    }

    /// Opens a seeded store at version 2 with deferral: the cleanup is pending.
    static func openDeferred(at path: String, models: String) throws -> PersistentStore {
        let directory = try ModelDirectory(url: URL(fileURLWithPath: models))
        var migration = MigrationOptions.deferred
        migration.knownVersions = directory.versions
        return try PersistentStore.open(at: URL(fileURLWithPath: path), model: directory.current, options: StoreOptions(migration: migration))
    }
}
