import Foundation

/// The machine-wide signals: pressure stall information (system-wide and for the unit's own
/// cgroup) and the load average per core, read from `/proc` and `/sys/fs/cgroup`.
///
/// `root` prefixes every path, so tests point it at a directory of fake files:
///
/// ```swift
/// let host = HostSignals(root: "/tmp/fake", cores: 2)
/// // reads /tmp/fake/proc/pressure/io, /tmp/fake/proc/loadavg, /tmp/fake/proc/self/cgroup, …
/// ```
public struct HostSignals: Sendable {
    /// The file system root the signals are read under (`/`; tests pass a directory of fake files).
    public let root: String
    /// Online CPU cores.
    public let cores: Int
    /// The unit's cgroup directory when cgroup v2 gives it pressure files (resolved once).
    public let cgroupDirectory: String?

    /// Memberwise initializer.
    public init(root: String = "", cores: Int = ProcessInfo.processInfo.activeProcessorCount) {
        self.root = root
        self.cores = max(1, cores)
        self.cgroupDirectory = Self.resolveCgroup(root: root)
    }

    var cpuPressurePath: String { root + "/proc/pressure/cpu" }
    var ioPressurePath: String { root + "/proc/pressure/io" }
    var loadAveragePath: String { root + "/proc/loadavg" }

    /// Readings of the enabled host signals; a signal whose file is missing goes to `unavailable`.
    public func read(_ settings: SchedulerSettings) -> (readings: [SignalReading], unavailable: [String]) {
        var readings: [SignalReading] = []
        var unavailable: [String] = []
        let signals = settings.signals
        if signals.contains(.cpu) {
            if let psi = PressureStallInfo.read(cpuPressurePath) {
                readings.append(SignalReading(signal: .cpu, label: "cpu pressure avg10", value: psi.someAvg10, threshold: settings.cpuPressure, unit: "%"))
            } else {
                unavailable.append("cpu: \(cpuPressurePath) is not readable (kernel without PSI?)")
            }
        }
        if signals.contains(.io) {
            if let psi = PressureStallInfo.read(ioPressurePath) {
                readings.append(SignalReading(signal: .io, label: "io pressure avg10", value: psi.someAvg10, threshold: settings.ioPressure, unit: "%"))
            } else {
                unavailable.append("io: \(ioPressurePath) is not readable (kernel without PSI?)")
            }
        }
        if signals.contains(.cgroup) {
            if let directory = cgroupDirectory,
               let cpu = PressureStallInfo.read(directory + "/cpu.pressure"), let io = PressureStallInfo.read(directory + "/io.pressure") {
                readings.append(SignalReading(signal: .cgroup, label: "cgroup cpu pressure avg10", value: cpu.someAvg10, threshold: settings.cpuPressure, unit: "%"))
                readings.append(SignalReading(signal: .cgroup, label: "cgroup io pressure avg10", value: io.someAvg10, threshold: settings.ioPressure, unit: "%"))
            } else {
                unavailable.append("cgroup: no cgroup v2 cpu.pressure / io.pressure for this process")
            }
        }
        if signals.contains(.load) {
            if let text = readSmallFile(loadAveragePath), let first = text.split(separator: " ").first, let load = Double(first) {
                readings.append(SignalReading(signal: .load, label: "load average", value: load / Double(cores), threshold: settings.loadPerCore,
                                              unit: " per core", note: nil))
            } else {
                unavailable.append("load: \(loadAveragePath) is not readable")
            }
        }
        return (readings, unavailable)
    }

    /// The cgroup v2 directory of this process (`0::/system.slice/stratad.service` in
    /// `/proc/self/cgroup`), under `/sys/fs/cgroup` (unified) or `/sys/fs/cgroup/unified`
    /// (hybrid), when it has pressure files.
    static func resolveCgroup(root: String) -> String? {
        guard let text = readSmallFile(root + "/proc/self/cgroup") else { return nil }
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("0::") }) else { return nil }
        var path = String(line.dropFirst(3))
        if path == "/" { path = "" }
        for mount in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
            let directory = root + mount + path
            if FileManager.default.isReadableFile(atPath: directory + "/cpu.pressure"),
               FileManager.default.isReadableFile(atPath: directory + "/io.pressure") {
                return directory
            }
        }
        return nil
    }
}
