import Foundation

/// Durations as people write them in configuration and settings: `250ms`, `30s`, `5m`, `1h`,
/// or a bare number of seconds.
public enum DurationText {
    public static func parse(_ text: String) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        for (suffix, scale) in units where trimmed.hasSuffix(suffix) {
            let number = trimmed.dropLast(suffix.count)
            if suffix == "s", number.hasSuffix("m") { continue }
            guard let value = Double(number), value >= 0, value.isFinite else { return nil }
            return .milliseconds(Int64((value * scale * 1000).rounded()))
        }
        guard let seconds = Double(trimmed), seconds >= 0, seconds.isFinite else { return nil }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// The shortest faithful text: `250ms`, `30s`, `5m`, `1h`.
    public static func format(_ duration: Duration) -> String {
        let ms = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        if ms % 3_600_000 == 0, ms > 0 { return "\(ms / 3_600_000)h" }
        if ms % 60_000 == 0, ms > 0 { return "\(ms / 60_000)m" }
        if ms % 1000 == 0 { return "\(ms / 1000)s" }
        return "\(ms)ms"
    }
}

extension Duration {
    /// The duration in (fractional) seconds.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// Sizes as people write them: `1048576`, `512KiB`, `1MiB`.
public enum ByteSize {
    public static func parse(_ text: String) -> Int? {
        let units: [(String, Int)] = [("KiB", 1 << 10), ("MiB", 1 << 20), ("K", 1 << 10), ("M", 1 << 20), ("KB", 1000), ("MB", 1_000_000)]
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        for (suffix, scale) in units.sorted(by: { $0.0.count > $1.0.count }) where trimmed.hasSuffix(suffix) {
            guard let value = Int(trimmed.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)), value >= 0 else { return nil }
            return value * scale
        }
        return Int(trimmed).flatMap { $0 >= 0 ? $0 : nil }
    }
}
