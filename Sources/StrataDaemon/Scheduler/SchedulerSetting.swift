import Foundation

/// One scheduler setting: its key, type, range and meaning, and how to read and set it.
///
/// ``SchedulerSettings/table`` lists them all, once: the configuration's `scheduler:` section,
/// `GetSettings` / `SetSetting` (`stratactl get` / `set`) and the settings table of
/// docs/Scheduler.md (``SchedulerSettings/markdownTable``, checked by a test) derive from it.
public struct SchedulerSetting: Sendable {
    /// The kind of value a setting takes.
    public enum ValueType: String, Sendable {
        /// `true`/`false` (also yes/no, on/off, 1/0).
        case bool
        /// A duration: `250ms`, `30s`, `5m`, `1h` or a number of seconds.
        case duration
        /// A non-negative number (a trailing `%` is allowed).
        case number
        /// Signal names, comma separated.
        case signals
        /// A time-of-day window `HH:MM-HH:MM`, or empty.
        case window
        /// A size: `512MiB`, `2GiB`, or a number of bytes.
        case size
    }

    /// The key in `scheduler:` and in `get`/`set`: `idle_after`.
    public let key: String
    /// The kind of value.
    public let type: ValueType
    /// The accepted values as people read them: `1ms – 10s`.
    public let range: String
    /// What the setting does (shown by `stratactl get` and in the docs).
    public let meaning: String
    private let read: @Sendable (SchedulerSettings) -> String
    private let write: @Sendable (inout SchedulerSettings, String) throws(SchedulerSettingError) -> Void

    /// The value of a default ``SchedulerSettings`` as text.
    public var defaultValue: String { read(SchedulerSettings()) }

    /// The setting's value in `settings` as text.
    public func value(in settings: SchedulerSettings) -> String { read(settings) }

    /// Parses `text` and stores it in `settings`.
    /// - Throws: ``SchedulerSettingError`` naming the key, the value and the range.
    public func set(_ text: String, in settings: inout SchedulerSettings) throws(SchedulerSettingError) {
        try write(&settings, text)
    }

    // MARK: - Kinds of settings

    /// A duration between `min` and `max`.
    static func duration(_ key: String, _ path: WritableKeyPath<SchedulerSettings, Duration> & Sendable,
                         min: Duration = .zero, max: Duration = .seconds(86_400), _ meaning: String) -> SchedulerSetting {
        SchedulerSetting(key: key, type: .duration, range: "\(DurationText.format(min)) – \(DurationText.format(max))", meaning: meaning,
                         read: { DurationText.format($0[keyPath: path]) },
                         write: { (settings, text) throws(SchedulerSettingError) in
                             guard let value = DurationText.parse(text), value >= min, value <= max else {
                                 throw SchedulerSettingError(key: key, value: text, reason: "'\(text)' is not a duration between \(DurationText.format(min)) and \(DurationText.format(max)) (e.g. 500ms, 30s, 5m)")
                             }
                             settings[keyPath: path] = value
                         })
    }

    /// A number between 0 and `max`.
    static func number(_ key: String, _ path: WritableKeyPath<SchedulerSettings, Double> & Sendable, max: Double,
                       _ meaning: String) -> SchedulerSetting {
        SchedulerSetting(key: key, type: .number, range: "0 – \(SchedulerSettings.number(max))", meaning: meaning,
                         read: { SchedulerSettings.number($0[keyPath: path]) },
                         write: { (settings, text) throws(SchedulerSettingError) in
                             guard let value = Double(text.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "%", with: "")), value >= 0, value <= max else {
                                 throw SchedulerSettingError(key: key, value: text, reason: "'\(text)' is not a number between 0 and \(SchedulerSettings.number(max))")
                             }
                             settings[keyPath: path] = value
                         })
    }

    /// Any other kind: its own range text, reader and parser.
    static func custom(_ key: String, _ type: ValueType, range: String, _ meaning: String,
                       read: @escaping @Sendable (SchedulerSettings) -> String,
                       write: @escaping @Sendable (inout SchedulerSettings, String) throws(SchedulerSettingError) -> Void) -> SchedulerSetting {
        SchedulerSetting(key: key, type: type, range: range, meaning: meaning, read: read, write: write)
    }
}

extension SchedulerSettings {
    // MARK: - The table

    /// Every setting, in display order: the one description of the scheduler's settings.
    public static let table: [SchedulerSetting] = [
        .custom("enabled", .bool, range: "true/false (yes/no, on/off, 1/0)", "the scheduler starts work by itself",
                read: { "\($0.enabled)" },
                write: { (settings, text) throws(SchedulerSettingError) in
                    switch text.lowercased() {
                    case "true", "yes", "on", "1": settings.enabled = true
                    case "false", "no", "off", "0": settings.enabled = false
                    default: throw SchedulerSettingError(key: "enabled", value: text, reason: "'\(text)' is not true or false")
                    }
                }),
        .duration("idle_after", \.idleAfter, "how long every signal must stay at or below its threshold"),
        .duration("batch_budget", \.batchBudget, min: .milliseconds(1), max: .seconds(10), "time budget of one batch"),
        .duration("pause_between_batches", \.pauseBetweenBatches, max: .seconds(60),
                  "cost delay after a batch that used its whole budget; scaled by the batch's actual time"),
        .duration("forced_pause_between_batches", \.forcedPauseBetweenBatches, max: .seconds(60),
                  "the cost delay of a run an operator forces (finish-deferred --now), in place of pause_between_batches; 0s: none, as a manual VACUUM"),
        .duration("idle_batch_budget", \.idleBatchBudget, max: .seconds(10),
                  "time budget of a batch once no client call has been in flight for the store that long (a call's arrival aborts it); 0s: always batch_budget"),
        .number("cpu_pressure", \.cpuPressure, max: 100, "busy above this CPU pressure, some avg10 % (system and cgroup)"),
        .number("io_pressure", \.ioPressure, max: 100, "busy above this I/O pressure, some avg10 % (system and cgroup)"),
        .number("load_per_core", \.loadPerCore, max: 1000, "busy above this 1-minute load average per core"),
        .number("request_rate", \.requestRate, max: 1_000_000, "busy above this many daemon requests per second"),
        .number("open_transactions", \.openTransactions, max: 1_000_000, "busy above this mean number of open transactions (time-averaged)"),
        .duration("load_window", \.loadWindow, min: StoreLoad.burstWindow, max: StoreLoad.horizon,
                  "window of the daemon's own load (the last 250 ms count when busier)"),
        .custom("signals", .signals, range: "names, comma separated: \(SchedulerSignal.allCases.map(\.rawValue).joined(separator: ","))",
                "signals that count (`logind` too, if listed)",
                read: { settings in SchedulerSignal.allCases.filter(settings.signals.contains).map(\.rawValue).joined(separator: ",") },
                write: { (settings, text) throws(SchedulerSettingError) in
                    var chosen = Set<SchedulerSignal>()
                    for name in text.split(whereSeparator: { $0 == "," || $0 == " " }).map({ $0.lowercased() }) {
                        guard let signal = SchedulerSignal(rawValue: name) else {
                            throw SchedulerSettingError(key: "signals", value: text, reason: "unknown signal '\(name)'; known: \(SchedulerSignal.allCases.map(\.rawValue).joined(separator: ", ")) (comma separated, may be empty)")
                        }
                        chosen.insert(signal)
                    }
                    settings.signals = chosen
                }),
        .duration("sample_interval", \.sampleInterval, min: .milliseconds(10), max: .seconds(60), "how often signals are read while no work runs"),
        .duration("run_sample_interval", \.runSampleInterval, min: .milliseconds(5), max: .seconds(10), "how often signals are read while work runs"),
        .duration("store_turn", \.storeTurn, min: .milliseconds(100), max: .seconds(3600), "how long one store works before the next one's turn"),
        .custom("maintenance_window", .window, range: "HH:MM-HH:MM", "local time of day for deferred work; empty: any time",
                read: { $0.maintenanceWindow },
                write: { (settings, text) throws(SchedulerSettingError) in
                    guard text.isEmpty || SchedulerSettings.parseWindow(text) != nil else {
                        throw SchedulerSettingError(key: "maintenance_window", value: text, reason: "'\(text)' is not a window HH:MM-HH:MM (e.g. 02:00-05:00), or empty for any time")
                    }
                    settings.maintenanceWindow = text
                }),
        .duration("max_runtime", \.maxRuntime, "work time per window (per day without one); 0: no limit"),
        .custom("min_free_space", .size, range: "0 – 1024TiB (`512MiB`, `2GiB`)",
                "deferred work holds while a store's file system has less free space (signal `disk`); 0: never",
                read: { ByteSize.format($0.minFreeSpace) },
                write: { (settings, text) throws(SchedulerSettingError) in
                    guard let bytes = ByteSize.parse(text), bytes <= 1 << 50 else {
                        throw SchedulerSettingError(key: "min_free_space", value: text, reason: "'\(text)' is not a size between 0 and 1024TiB (e.g. 512MiB, 2GiB)")
                    }
                    settings.minFreeSpace = bytes
                }),
    ]

    /// The settings table of docs/Scheduler.md, rendered from ``table``.
    public static var markdownTable: String {
        var lines = ["| key | default | range | meaning |", "|---|---|---|---|"]
        for setting in table {
            let value = setting.defaultValue
            lines.append("| `\(setting.key)` | \(value.isEmpty ? "empty" : "`\(value)`") | \(setting.range) | \(setting.meaning) |")
        }
        return lines.joined(separator: "\n")
    }
}
