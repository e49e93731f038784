import Foundation

/// The idle scheduler's tunables, read from `scheduler:` in the configuration and changeable
/// at run time (`stratactl get KEY`, `stratactl set KEY=VALUE`), gh-ost style.
public struct SchedulerSettings: Sendable, Hashable {
    /// Run deferred work on the scheduler's own initiative.
    public var enabled = true
    /// How long every signal must stay below its threshold before the machine counts as idle.
    public var idleAfter: Duration = .seconds(60)
    /// Time budget of one deferred batch.
    public var batchBudget: Duration = .milliseconds(5)
    /// Pause after each batch (autovacuum-style cost delay) of the scheduler's own runs and of
    /// runs requested without `now`.
    public var pauseBetweenBatches: Duration = .milliseconds(2)
    /// The cost delay of a run an operator forces (`FinishDeferred` with `now`, `stratactl
    /// finish-deferred --now`), in place of ``pauseBetweenBatches``: none by default, as
    /// PostgreSQL's manual `VACUUM` (`vacuum_cost_delay` 0) against autovacuum's 2 ms, and as
    /// gh-ost's `--nice-ratio` 0. ``batchBudget`` still bounds each client's wait.
    public var forcedPauseBetweenBatches: Duration = .zero
    /// Time budget of a batch once no client call has been in flight for its store for that
    /// long (a client's arrival aborts such a batch, so it waits about one ``batchBudget``);
    /// zero or not above ``batchBudget`` keeps every batch to ``batchBudget``.
    public var idleBatchBudget: Duration = .milliseconds(250)
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
    /// Free bytes a store's file system must keep for deferred work to run on the store
    /// (signal `disk`); zero: never hold for space.
    public var minFreeSpace = 1 << 30

    /// Memberwise initializer.
    public init() {}

    /// Every key, in display order (from ``table``).
    public static let keys = table.map(\.key)

    /// What each key means (shown by `stratactl get`; from ``table``).
    public static let descriptions: [String: String] = Dictionary(uniqueKeysWithValues: table.map { ($0.key, $0.meaning) })

    /// The current value of `key` as text, nil for an unknown key.
    public func value(of key: String) -> String? {
        Self.setting(key)?.value(in: self)
    }

    /// Sets `key` from text.
    ///
    /// - Throws: ``SchedulerSettingError`` for an unknown key or a value that does not parse
    ///   or is out of the key's range.
    public mutating func set(_ key: String, to text: String) throws(SchedulerSettingError) {
        guard let setting = Self.setting(key) else {
            throw SchedulerSettingError(key: key, value: text, reason: "unknown setting '\(key)'; known: \(Self.keys.joined(separator: ", "))", unknownKey: true)
        }
        try setting.set(text, in: &self)
    }

    /// The row of ``table`` for `key`.
    public static func setting(_ key: String) -> SchedulerSetting? {
        table.first { $0.key == key }
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

    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

/// A setting that cannot be read or changed.
public struct SchedulerSettingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The setting's key.
    public var key: String
    /// The value refused.
    public var value: String
    /// Why, in words, and what to do.
    public var reason: String
    /// Whether the key is not a setting at all.
    public var unknownKey = false
    /// A description in words.
    public var description: String { reason }
}
