import Foundation

/// The idle scheduler's tunables, read from `scheduler:` in the configuration and changeable
/// at run time (`stratactl get KEY`, `stratactl set KEY=VALUE`), gh-ost style.
public struct SchedulerSettings: Sendable, Hashable {
    /// Run deferred work on the scheduler's own initiative.
    public var enabled = true
    /// How long every signal must stay below its threshold before the machine counts as idle.
    public var idleAfter: Duration = .seconds(60)
    /// Time budget of one deferred batch.
    public var batchBudget: Duration = .milliseconds(20)
    /// Pause after each batch (autovacuum-style cost delay).
    public var pauseBetweenBatches: Duration = .milliseconds(10)
    /// CPU pressure (`/proc/pressure/cpu` some avg10, percent) above which the machine is busy.
    public var cpuPressure: Double = 10
    /// I/O pressure (`/proc/pressure/io` some avg10, percent) above which the machine is busy.
    public var ioPressure: Double = 10
    /// Load average (1 min) per core above which the machine is busy.
    public var loadPerCore: Double = 0.7
    /// Daemon requests per second above which it is busy.
    public var requestRate: Double = 5
    /// Mean number of open transactions (time-averaged) above which the daemon is busy.
    public var openTransactions: Double = 0.5
    /// The sliding window over which the daemon's own load is measured (the last 250 ms count
    /// too when they are busier: load that returns is seen at once, and forgotten only slowly).
    public var loadWindow: Duration = .seconds(10)
    /// The signals that count, comma separated (see ``SchedulerSignal``); logind is off by default.
    public var signals: Set<SchedulerSignal> = SchedulerSignal.defaults
    /// How often signals are read while no work runs.
    public var sampleInterval: Duration = .milliseconds(500)
    /// How often signals are read while deferred work runs (bounds the reaction to load).
    public var runSampleInterval: Duration = .milliseconds(25)
    /// How long one store works before the next store with pending work gets its turn.
    public var storeTurn: Duration = .seconds(5)
    /// Allowed time of day for deferred work, `HH:MM-HH:MM`; empty for any time.
    public var maintenanceWindow = ""
    /// Longest run per window; zero for no limit.
    public var maxRuntime: Duration = .zero

    public init() {}

    /// Every key, in display order.
    public static let keys = [
        "enabled", "idle_after", "batch_budget", "pause_between_batches", "cpu_pressure", "io_pressure",
        "load_per_core", "request_rate", "open_transactions", "load_window", "signals", "sample_interval",
        "run_sample_interval", "store_turn", "maintenance_window", "max_runtime",
    ]

    /// What each key means (shown by `stratactl get`).
    public static let descriptions: [String: String] = [
        "enabled": "run deferred work when the machine is idle (true/false)",
        "idle_after": "how long all signals must stay below their thresholds (duration)",
        "batch_budget": "time budget of one deferred batch (duration)",
        "pause_between_batches": "pause after a batch that used its whole budget; scaled by the batch's actual time (cost delay)",
        "cpu_pressure": "busy above this CPU pressure, some avg10 percent",
        "io_pressure": "busy above this I/O pressure, some avg10 percent",
        "load_per_core": "busy above this 1-minute load average per core",
        "request_rate": "busy above this many daemon requests per second",
        "open_transactions": "busy above this mean number of open transactions (time-averaged)",
        "load_window": "sliding window of the daemon's own load (duration; the last 250 ms count when busier)",
        "signals": "signals that count, comma separated: \(SchedulerSignal.allCases.map(\.rawValue).joined(separator: ","))",
        "sample_interval": "how often signals are read while no work runs (duration)",
        "run_sample_interval": "how often signals are read while work runs (duration)",
        "store_turn": "how long one store works before the next store's turn (duration)",
        "maintenance_window": "allowed time of day HH:MM-HH:MM (empty: any time)",
        "max_runtime": "longest run per window (duration, 0 for no limit)",
    ]

    /// The current value of `key` as text, nil for an unknown key.
    public func value(of key: String) -> String? {
        switch key {
        case "enabled": "\(enabled)"
        case "idle_after": DurationText.format(idleAfter)
        case "batch_budget": DurationText.format(batchBudget)
        case "pause_between_batches": DurationText.format(pauseBetweenBatches)
        case "cpu_pressure": Self.number(cpuPressure)
        case "io_pressure": Self.number(ioPressure)
        case "load_per_core": Self.number(loadPerCore)
        case "request_rate": Self.number(requestRate)
        case "open_transactions": Self.number(openTransactions)
        case "load_window": DurationText.format(loadWindow)
        case "signals": SchedulerSignal.allCases.filter(signals.contains).map(\.rawValue).joined(separator: ",")
        case "sample_interval": DurationText.format(sampleInterval)
        case "run_sample_interval": DurationText.format(runSampleInterval)
        case "store_turn": DurationText.format(storeTurn)
        case "maintenance_window": maintenanceWindow
        case "max_runtime": DurationText.format(maxRuntime)
        default: nil
        }
    }

    /// Sets `key` from text.
    ///
    /// - Throws: ``SchedulerSettingError`` for an unknown key or a value that does not parse.
    public mutating func set(_ key: String, to text: String) throws(SchedulerSettingError) {
        func duration(min: Duration = .zero, max: Duration = .seconds(86_400)) throws(SchedulerSettingError) -> Duration {
            guard let value = DurationText.parse(text), value >= min, value <= max else {
                throw SchedulerSettingError(key: key, value: text, reason: "'\(text)' is not a duration between \(DurationText.format(min)) and \(DurationText.format(max)) (e.g. 500ms, 30s, 5m)")
            }
            return value
        }
        func number(max: Double) throws(SchedulerSettingError) -> Double {
            guard let value = Double(text.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "%", with: "")), value >= 0, value <= max else {
                throw SchedulerSettingError(key: key, value: text, reason: "'\(text)' is not a number between 0 and \(Self.number(max))")
            }
            return value
        }
        switch key {
        case "enabled":
            switch text.lowercased() {
            case "true", "yes", "on", "1": enabled = true
            case "false", "no", "off", "0": enabled = false
            default: throw SchedulerSettingError(key: key, value: text, reason: "'\(text)' is not true or false")
            }
        case "idle_after": idleAfter = try duration()
        case "batch_budget": batchBudget = try duration(min: .milliseconds(1), max: .seconds(10))
        case "pause_between_batches": pauseBetweenBatches = try duration(max: .seconds(60))
        case "cpu_pressure": cpuPressure = try number(max: 100)
        case "io_pressure": ioPressure = try number(max: 100)
        case "load_per_core": loadPerCore = try number(max: 1000)
        case "request_rate": requestRate = try number(max: 1_000_000)
        case "open_transactions": openTransactions = try number(max: 1_000_000)
        case "load_window": loadWindow = try duration(min: StoreLoad.burstWindow, max: StoreLoad.horizon)
        case "signals":
            let names = text.split(whereSeparator: { $0 == "," || $0 == " " }).map { $0.lowercased() }
            var chosen = Set<SchedulerSignal>()
            for name in names {
                guard let signal = SchedulerSignal(rawValue: name) else {
                    throw SchedulerSettingError(key: key, value: text, reason: "unknown signal '\(name)'; known: \(SchedulerSignal.allCases.map(\.rawValue).joined(separator: ", ")) (comma separated, may be empty)")
                }
                chosen.insert(signal)
            }
            signals = chosen
        case "sample_interval": sampleInterval = try duration(min: .milliseconds(10), max: .seconds(60))
        case "run_sample_interval": runSampleInterval = try duration(min: .milliseconds(5), max: .seconds(10))
        case "store_turn": storeTurn = try duration(min: .milliseconds(100), max: .seconds(3600))
        case "maintenance_window":
            guard text.isEmpty || Self.parseWindow(text) != nil else {
                throw SchedulerSettingError(key: key, value: text, reason: "'\(text)' is not a window HH:MM-HH:MM (e.g. 02:00-05:00), or empty for any time")
            }
            maintenanceWindow = text
        case "max_runtime": maxRuntime = try duration()
        default:
            throw SchedulerSettingError(key: key, value: text, reason: "unknown setting '\(key)'; known: \(Self.keys.joined(separator: ", "))", unknownKey: true)
        }
    }

    /// Minutes since midnight of a window's start and end.
    public static func parseWindow(_ text: String) -> (start: Int, end: Int)? {
        let parts = text.split(separator: "-")
        guard parts.count == 2 else { return nil }
        func minutes(_ part: Substring) -> Int? {
            let hm = part.trimmingCharacters(in: .whitespaces).split(separator: ":")
            guard hm.count == 2, let h = Int(hm[0]), let m = Int(hm[1]), (0..<24).contains(h), (0..<60).contains(m) else { return nil }
            return h * 60 + m
        }
        guard let start = minutes(parts[0]), let end = minutes(parts[1]), start != end else { return nil }
        return (start, end)
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

/// A setting that cannot be read or changed.
public struct SchedulerSettingError: Error, Sendable, Hashable, CustomStringConvertible {
    public var key: String
    public var value: String
    public var reason: String
    public var unknownKey = false
    public var description: String { reason }
}
