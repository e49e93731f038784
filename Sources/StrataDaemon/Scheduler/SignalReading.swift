import Foundation

/// One reading of one signal: its value against its threshold.
///
/// ```swift
/// let io = SignalReading(signal: .io, label: "io pressure avg10", value: 31, threshold: 10, unit: "%")
/// io.isBusy   // true
/// io.summary  // "io pressure avg10 31% > 10%"
/// ```
public struct SignalReading: Sendable, Hashable {
    /// Which signal.
    public var signal: SchedulerSignal
    /// What was measured, for people ("io pressure avg10", "cgroup cpu pressure avg10").
    public var label: String
    /// The reading, in the signal's unit (percent, requests per second, …).
    public var value: Double
    /// The threshold above which it counts as busy.
    public var threshold: Double
    /// Appended to numbers: "%", "/s", " per core", or "" for plain numbers.
    public var unit: String
    /// Extra context ("busiest store: aircraft").
    public var note: String?
    /// Busy below the threshold instead of above it (free disk space).
    public var busyBelow = false

    /// Memberwise initializer.
    public init(signal: SchedulerSignal, label: String, value: Double, threshold: Double, unit: String, note: String? = nil, busyBelow: Bool = false) {
        self.signal = signal
        self.label = label
        self.value = value
        self.threshold = threshold
        self.unit = unit
        self.note = note
        self.busyBelow = busyBelow
    }

    /// Busy when strictly above the threshold (strictly below it with ``busyBelow``).
    public var isBusy: Bool { busyBelow ? value < threshold : value > threshold }

    /// "io pressure avg10 31% > 10%", or "≤" when not busy ("<" and "≥" with ``busyBelow``).
    public var summary: String {
        if signal == .logind {
            return isBusy ? "logind IdleHint is false (a user session is active)" : "logind IdleHint is true"
        }
        if signal == .replication, value >= ReplicaLagProbe.unknownValue {
            return "\(label) unknown: \(note ?? "the replica's position cannot be read")"
        }
        let relation = busyBelow ? (isBusy ? "<" : "≥") : (isBusy ? ">" : "≤")
        let text = "\(label) \(Self.format(value))\(unit) \(relation) \(Self.format(threshold))\(unit)"
        return note.map { "\(text) (\($0))" } ?? text
    }

    static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e12 { return String(Int64(value)) }
        var text = String(format: abs(value) >= 10 ? "%.1f" : "%.2f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }
}
