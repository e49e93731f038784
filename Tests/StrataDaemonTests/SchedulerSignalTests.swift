import Foundation
import Testing
@testable import StrataDaemon

/// Signal sources read from injected files (a fake `/`) and the daemon's own load window.
@Suite struct SchedulerSignalTests {
    @Test func parsesPressureStallInformation() throws {
        let psi = try #require(PressureStallInfo(parsing: "some avg10=31.20 avg60=12.05 avg300=3.10 total=716473259\nfull avg10=0.50 avg60=0.00 avg300=0.00 total=0\n"))
        #expect(psi.someAvg10 == 31.2)
        #expect(psi.someAvg60 == 12.05)
        #expect(psi.fullAvg10 == 0.5)
        // cpu.pressure on older kernels has no `full` line.
        #expect(PressureStallInfo(parsing: "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")?.fullAvg10 == nil)
        #expect(PressureStallInfo(parsing: "garbage") == nil)
    }

    @Test(arguments: [false, true])
    func readsHostAndCgroupSignals(hybrid: Bool) throws {
        let root = try FakeHostRoot(hybrid: hybrid)
        defer { root.remove() }
        root.set(cpu: 3.5, io: 31.2, load: 1.5)
        root.setCgroup(hybrid: hybrid, cpu: 0.25, io: 12)
        let host = HostSignals(root: root.path, cores: 2)
        #expect(host.cgroupDirectory == root.cgroupDirectory("/system.slice/stratad.service", hybrid: hybrid))
        let (readings, unavailable) = host.read(SchedulerSettings())
        #expect(unavailable.isEmpty)
        let summaries = readings.map(\.summary)
        #expect(summaries == [
            "cpu pressure avg10 3.5% ≤ 10%", "io pressure avg10 31.2% > 10%",
            "cgroup cpu pressure avg10 0.25% ≤ 10%", "cgroup io pressure avg10 12% > 10%",
            "load average 0.75 per core > 0.7 per core",
        ])
        #expect(readings.filter(\.isBusy).map(\.label) == ["io pressure avg10", "cgroup io pressure avg10", "load average"])
    }

    @Test func missingFilesAreReportedNotGuessed() throws {
        let root = try FakeHostRoot(cgroup: "/")  // the root cgroup has no pressure files
        defer { root.remove() }
        try FileManager.default.removeItem(atPath: root.path + "/proc/pressure/io")
        let (readings, unavailable) = HostSignals(root: root.path, cores: 2).read(SchedulerSettings())
        #expect(readings.map(\.signal) == [.cpu, .load])
        #expect(unavailable.map { $0.prefix(while: { $0 != ":" }) } == ["io", "cgroup"])
    }

    @Test func onlyEnabledSignalsAreRead() throws {
        let root = try FakeHostRoot()
        defer { root.remove() }
        var settings = SchedulerSettings()
        try settings.set("signals", to: "io")
        let (readings, _) = HostSignals(root: root.path, cores: 2).read(settings)
        #expect(readings.map(\.signal) == [.io])
    }

    @Test func storeLoadOverASlidingWindow() {
        let origin = ContinuousClock.now
        func at(_ ms: Int64) -> ContinuousClock.Instant { origin + .milliseconds(ms) }
        let load = StoreLoad(origin: origin)
        // 50 short requests in the first second (each open 2 ms).
        for i in 0..<50 {
            load.begin(at: at(Int64(i) * 20))
            load.end(at: at(Int64(i) * 20 + 2))
        }
        let second = load.snapshot(window: .seconds(1), at: at(1000))
        #expect(abs(second.requestsPerSecond - 50) < 6)
        #expect(abs(second.openTransactions - 0.1) < 0.02)
        let ten = load.snapshot(window: .seconds(10), at: at(9_999))
        #expect(abs(ten.requestsPerSecond - 5) < 0.2)
        // One transaction held open for 2 s: about one open transaction on average.
        load.begin(at: at(20_000))
        let held = load.snapshot(window: .seconds(1), at: at(22_000))
        #expect(held.openNow == 1)
        #expect(abs(held.openTransactions - 1) < 0.05)
        load.end(at: at(22_000))
        // Forgotten once the window has passed.
        let later = load.snapshot(window: .seconds(10), at: at(40_000))
        #expect(later.requestsPerSecond == 0)
        #expect(later.openTransactions == 0)
        #expect(load.totalRequests == 51)
    }

    @Test func maintenanceWindowParsing() {
        #expect(MaintenanceWindow("02:00-05:00")?.description == "02:00-05:00")
        #expect(MaintenanceWindow("2:00-5:30")?.description == "02:00-05:30")
        #expect(MaintenanceWindow("25:00-05:00") == nil)
        #expect(MaintenanceWindow("02:00") == nil)
        #expect(MaintenanceWindow("02:00-02:00") == nil)
    }
}
