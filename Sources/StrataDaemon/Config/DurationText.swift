import Foundation
import StrataUnits

/// Durations as people write them in configuration and settings: `250ms`, `30s`, `5m`, `1h`,
/// or a bare number of seconds.
///
/// Any text parses without trapping: a negative, infinite, NaN or absurdly large number
/// (`1e308`, `99999999999999999999h`) is simply not a duration (nil). Each setting then checks
/// its own range and names it in its error.
public enum DurationText {
    /// The longest duration any text denotes: 100 years. Every setting's own range is far
    /// shorter; this bound only keeps the arithmetic in range.
    public static let longest: Duration = .seconds(100 * 365 * 86_400)

    /// The duration `text` denotes, or nil when it is not one (see the type's discussion).
    public static func parse(_ text: String) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400)]
        for (suffix, scale) in units where trimmed.hasSuffix(suffix) {
            let number = trimmed.dropLast(suffix.count)
            if suffix == "s", number.hasSuffix("m") { continue }
            guard let value = Double(number) else { return nil }
            return duration(seconds: value * scale)
        }
        guard let seconds = Double(trimmed) else { return nil }
        return duration(seconds: seconds)
    }

    /// Whole milliseconds, or nil for a negative, non-finite or too long number of seconds.
    private static func duration(seconds: Double) -> Duration? {
        let milliseconds = (seconds * 1000).rounded()
        guard milliseconds.isFinite, milliseconds >= 0, milliseconds <= Double(longest.components.seconds) * 1000 else { return nil }
        return .milliseconds(Int64(milliseconds))
    }

    /// The shortest faithful text: `250ms`, `30s`, `5m`, `1h`.
    public static func format(_ duration: Duration) -> String {
        // Durations come from parse (at most `longest`) or code; clamp so that any prints.
        let ms = min(max(duration, .zero - longest), longest).wholeMilliseconds
        if ms % 3_600_000 == 0, ms > 0 { return "\(ms / 3_600_000)h" }
        if ms % 60_000 == 0, ms > 0 { return "\(ms / 60_000)m" }
        if ms % 1000 == 0 { return "\(ms / 1000)s" }
        return "\(ms)ms"
    }
}

/// Sizes as people write them: `1048576`, `512KiB`, `1MiB`, `2GiB`.
public enum ByteSize {
    /// The size in bytes, or nil for text that is not a size or a size past `Int.max` bytes.
    public static func parse(_ text: String) -> Int? {
        let units: [(String, Int)] = [("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("TiB", 1 << 40),
                                      ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30), ("T", 1 << 40),
                                      ("KB", 1000), ("MB", 1_000_000), ("GB", 1_000_000_000), ("TB", 1_000_000_000_000)]
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        for (suffix, scale) in units.sorted(by: { $0.0.count > $1.0.count }) where trimmed.hasSuffix(suffix) {
            guard let value = Int(trimmed.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)), value >= 0 else { return nil }
            let (bytes, overflow) = value.multipliedReportingOverflow(by: scale)
            return overflow ? nil : bytes
        }
        return Int(trimmed).flatMap { $0 >= 0 ? $0 : nil }
    }

    /// `bytes` in the largest binary unit that divides it: `1GiB`, `512MiB`, `1000`.
    public static func format(_ bytes: Int) -> String {
        for (suffix, scale) in [("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] where bytes > 0 && bytes % scale == 0 {
            return "\(bytes / scale)\(suffix)"
        }
        return "\(bytes)"
    }
}
