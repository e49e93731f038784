import Foundation
import Testing
@testable import StrataDaemon

/// The idle detector as a state machine over readings and a fake clock: hysteresis, any one
/// busy signal, pause and resume, the maintenance window, max runtime.
@Suite struct SchedulerDetectorTests {
    let origin = ContinuousClock.now
    let noon = LocalTime(day: 20_000, minute: 12 * 60)

    func at(_ seconds: Double) -> ContinuousClock.Instant { origin + .milliseconds(Int64(seconds * 1000)) }

    static func io(_ value: Double) -> SignalReading {
        SignalReading(signal: .io, label: "io pressure avg10", value: value, threshold: 10, unit: "%")
    }
    static func cpu(_ value: Double) -> SignalReading {
        SignalReading(signal: .cpu, label: "cpu pressure avg10", value: value, threshold: 10, unit: "%")
    }
    static func requests(_ value: Double) -> SignalReading {
        SignalReading(signal: .requests, label: "daemon requests", value: value, threshold: 5, unit: "/s")
    }
    static let quiet = [io(1), cpu(2), requests(0)]

    func detector() -> IdleDetector { IdleDetector(settings: SchedulerSettings()) }

    func detector(_ configure: (inout SchedulerSettings) throws -> Void) rethrows -> IdleDetector {
        var settings = SchedulerSettings()
        try configure(&settings)
        return IdleDetector(settings: settings)
    }

    @Test func idleOnlyAfterIdleAfterOfQuiet() {
        var detector = detector()
        var verdict = detector.evaluate(Self.quiet, at: at(0), local: noon)
        #expect(!verdict.allowsWork)
        #expect(verdict.cause == .hysteresis)
        verdict = detector.evaluate(Self.quiet, at: at(59.9), local: noon)
        #expect(!verdict.allowsWork)
        #expect(verdict.reason == "waiting: quiet for 59s of idle_after 1m")
        verdict = detector.evaluate(Self.quiet, at: at(60), local: noon)
        #expect(verdict.allowsWork)
        #expect(verdict.state == .idle)
        #expect(verdict.reason == "idle: every signal below its threshold for 60s")
    }

    @Test func oneBusyReadingRestartsTheWait() {
        var detector = detector()
        _ = detector.evaluate(Self.quiet, at: at(0), local: noon)
        _ = detector.evaluate(Self.quiet, at: at(50), local: noon)
        let busy = detector.evaluate([Self.io(31), Self.cpu(2), Self.requests(0)], at: at(55), local: noon)
        #expect(!busy.allowsWork)
        #expect(busy.cause == .signal)
        #expect(busy.reason == "waiting: io pressure avg10 31% > 10%")
        #expect(!detector.evaluate(Self.quiet, at: at(56), local: noon).allowsWork)
        #expect(!detector.evaluate(Self.quiet, at: at(115.9), local: noon).allowsWork)
        #expect(detector.evaluate(Self.quiet, at: at(116), local: noon).allowsWork)
    }

    static func lag(_ mib: Double) -> SignalReading {
        SignalReading(signal: .replication, label: "replica lag of store a", value: mib, threshold: 16, unit: " MiB")
    }

    /// Issue 23: the replica's lag holds the work while over `max_lag`, and the work goes on
    /// as soon as it is back under, without a new `idle_after` wait; a load signal still
    /// restarts the wait.
    @Test func replicaLagHoldsWithoutRestartingTheWait() {
        var detector = detector { $0.idleAfter = .seconds(1) }
        _ = detector.evaluate(Self.quiet + [Self.lag(0)], at: at(0), local: noon)
        #expect(detector.evaluate(Self.quiet + [Self.lag(2)], at: at(1), local: noon).allowsWork)
        let held = detector.evaluate(Self.quiet + [Self.lag(40)], at: at(1.2), local: noon)
        #expect(!held.allowsWork)
        #expect(held.cause == .signal)
        #expect(held.reason == "waiting: replica lag of store a 40 MiB > 16 MiB")
        #expect(detector.quietSince == at(0), "the lag restarted the idle_after wait")
        let caughtUp = detector.evaluate(Self.quiet + [Self.lag(3)], at: at(1.25), local: noon)
        #expect(caughtUp.allowsWork, "\(caughtUp.reason)")
        // A load signal still restarts the wait, lag or not.
        _ = detector.evaluate([Self.io(31), Self.cpu(2), Self.requests(0), Self.lag(3)], at: at(2), local: noon)
        #expect(!detector.evaluate(Self.quiet + [Self.lag(0)], at: at(2.5), local: noon).allowsWork)
        #expect(detector.evaluate(Self.quiet + [Self.lag(0)], at: at(3.5), local: noon).allowsWork)
    }

    @Test func anySingleSignalMakesItBusyAndEveryBusyOneIsNamed() {
        var detector = detector { $0.idleAfter = .zero }
        #expect(detector.evaluate(Self.quiet, at: at(0), local: noon).allowsWork)
        let one = detector.evaluate([Self.io(1), Self.cpu(2), Self.requests(42)], at: at(1), local: noon)
        #expect(!one.allowsWork)
        #expect(one.reason == "waiting: daemon requests 42/s > 5/s")
        #expect(one.busy.map(\.signal) == [.requests])
        let two = detector.evaluate([Self.io(31.4), Self.cpu(12.5), Self.requests(0)], at: at(2), local: noon)
        #expect(two.reason == "waiting: io pressure avg10 31.4% > 10%; cpu pressure avg10 12.5% > 10%")
        // A value at the threshold is not above it.
        #expect(detector.evaluate([Self.io(10), Self.cpu(10), Self.requests(5)], at: at(3), local: noon).allowsWork)
    }

    @Test func pauseWinsAndResumeKeepsTheServedWait() {
        var detector = detector()
        _ = detector.evaluate(Self.quiet, at: at(0), local: noon)
        detector.pause(reason: "deploy in progress")
        let paused = detector.evaluate(Self.quiet, at: at(70), local: noon)
        #expect(!paused.allowsWork)
        #expect(paused.state == .paused)
        #expect(paused.reason == "paused: deploy in progress")
        detector.resume()
        // Signals were followed during the pause: the machine has been quiet for 70 s.
        #expect(detector.evaluate(Self.quiet, at: at(70), local: noon).allowsWork)
        // A pause also wins over busy signals, and busy readings during it restart the wait.
        detector.pause(reason: "x")
        _ = detector.evaluate([Self.io(50)], at: at(80), local: noon)
        detector.resume()
        #expect(!detector.evaluate(Self.quiet, at: at(81), local: noon).allowsWork)
        #expect(detector.evaluate(Self.quiet, at: at(141), local: noon).allowsWork)
    }

    @Test(arguments: [
        ("02:00-05:00", 1 * 60 + 59, false), ("02:00-05:00", 2 * 60, true), ("02:00-05:00", 4 * 60 + 59, true), ("02:00-05:00", 5 * 60, false),
        ("22:00-04:00", 21 * 60 + 59, false), ("22:00-04:00", 23 * 60, true), ("22:00-04:00", 3 * 60 + 59, true), ("22:00-04:00", 4 * 60, false),
    ])
    func maintenanceWindow(window: String, minute: Int, allowed: Bool) throws {
        var detector = try detector {
            $0.idleAfter = .zero
            try $0.set("maintenance_window", to: window)
        }
        let verdict = detector.evaluate(Self.quiet, at: at(0), local: LocalTime(day: 20_000, minute: minute))
        #expect(verdict.allowsWork == allowed)
        if !allowed {
            #expect(verdict.reason == "waiting: outside the maintenance window \(window)")
            #expect(verdict.cause == .window)
        }
    }

    @Test func maxRuntimeIsPerWindowOccurrence() throws {
        var detector = try detector {
            $0.idleAfter = .zero
            try $0.set("maintenance_window", to: "22:00-04:00")
            try $0.set("max_runtime", to: "30m")
        }
        let night = LocalTime(day: 20_000, minute: 23 * 60)
        #expect(detector.evaluate(Self.quiet, at: at(0), local: night).allowsWork)
        detector.recordRuntime(.seconds(29 * 60))
        #expect(detector.evaluate(Self.quiet, at: at(1), local: night).allowsWork)
        detector.recordRuntime(.seconds(60))
        let used = detector.evaluate(Self.quiet, at: at(2), local: LocalTime(day: 20_001, minute: 60))  // same window, after midnight
        #expect(!used.allowsWork)
        #expect(used.cause == .maxRuntime)
        #expect(used.reason == "waiting: max_runtime 30m used up in this window 22:00-04:00")
        // The next night's window starts with a fresh budget.
        #expect(!detector.evaluate(Self.quiet, at: at(3), local: LocalTime(day: 20_001, minute: 12 * 60)).allowsWork)
        #expect(detector.evaluate(Self.quiet, at: at(4), local: LocalTime(day: 20_001, minute: 22 * 60)).allowsWork)
        #expect(detector.windowRuntime == .zero)
    }

    @Test func maxRuntimeWithoutAWindowIsDaily() throws {
        var detector = try detector {
            $0.idleAfter = .zero
            try $0.set("max_runtime", to: "1h")
        }
        _ = detector.evaluate(Self.quiet, at: at(0), local: noon)
        detector.recordRuntime(.seconds(3600))
        #expect(detector.evaluate(Self.quiet, at: at(1), local: noon).reason == "waiting: max_runtime 1h used up in this day")
        #expect(detector.evaluate(Self.quiet, at: at(2), local: LocalTime(day: 20_001, minute: 0)).allowsWork)
    }

    @Test func settingsRoundTripAndRefuseNonsense() throws {
        var settings = SchedulerSettings()
        #expect(settings.value(of: "signals") == "requests,transactions,cpu,io,cgroup,load,replication,disk")
        try settings.set("signals", to: "io, logind")
        #expect(settings.value(of: "signals") == "io,logind")
        try settings.set("signals", to: "")
        #expect(settings.signals.isEmpty)
        #expect(throws: SchedulerSettingError.self) { try settings.set("signals", to: "io,vibes") }
        #expect(throws: SchedulerSettingError.self) { try settings.set("run_sample_interval", to: "1ms") }
        #expect(throws: SchedulerSettingError.self) { try settings.set("load_window", to: "1h") }
        try settings.set("store_turn", to: "2s")
        #expect(settings.value(of: "store_turn") == "2s")
        #expect(settings.value(of: "min_free_space") == "1GiB")
        try settings.set("min_free_space", to: "512MiB")
        #expect(settings.minFreeSpace == 512 << 20 && settings.value(of: "min_free_space") == "512MiB")
        try settings.set("min_free_space", to: "1500000")
        #expect(settings.value(of: "min_free_space") == "1500000")
        try settings.set("min_free_space", to: "0")
        #expect(settings.minFreeSpace == 0)
        for nonsense in ["-1GiB", "2PiB", "lots", "2000TiB", "1.5GiB"] {
            #expect(throws: SchedulerSettingError.self, "\(nonsense)") { try settings.set("min_free_space", to: nonsense) }
        }
        do {
            try settings.set("min_free_space", to: "lots")
        } catch {
            #expect(error.reason == "'lots' is not a size between 0 and 1024TiB (e.g. 512MiB, 2GiB)")
        }
        for key in SchedulerSettings.keys {
            #expect(settings.value(of: key) != nil, "\(key)")
            #expect(SchedulerSettings.descriptions[key] != nil, "\(key)")
        }
    }

    /// The `disk` signal: busy below `min_free_space`, one reading per file system naming its
    /// stores, none when the minimum is 0; a backlog (no `idle_after` wait once there is room).
    @Test func diskReadingsAreBusyBelowTheMinimumPerFileSystem() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("disk-\(UUID().uuidString.prefix(6))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let free = try #require(DiskSpace.available(at: directory + "/a.sqlite")).bytes
        #expect(free > 0)
        let stores = [(name: "a", path: directory + "/a.sqlite"), (name: "b", path: directory + "/b.sqlite")]
        let held = DiskSpace.readings(stores, minimum: 1 << 50)
        #expect(held.count == 1, "two stores on one file system: one reading")
        let reading = try #require(held.first)
        #expect(reading.isBusy && reading.signal.isBacklog)
        #expect(reading.summary.hasPrefix("free space in \(directory) ") && reading.summary.hasSuffix(" < 1073741824 MiB (stores a, b)"), "\(reading.summary)")
        let room = try #require(DiskSpace.readings(stores, minimum: 1 << 20).first)
        #expect(!room.isBusy && room.summary.contains(" ≥ 1 MiB"), "\(room.summary)")
        #expect(DiskSpace.readings(stores, minimum: 0).isEmpty)
        #expect(DiskSpace.readings([(name: "gone", path: "/nonexistent-\(UUID().uuidString)/x.sqlite")], minimum: 1 << 30).isEmpty)
    }
}
