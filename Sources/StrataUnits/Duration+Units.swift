/// `Duration` in the units logs, replies, settings and benchmarks print: the one place where
/// a duration's (seconds, attoseconds) components become a number.
///
/// ```swift
/// let elapsed = clock.now - start
/// logger.info("done", metadata: ["ms": "\(elapsed.milliseconds)"])
/// let ratio = elapsed.seconds / budget.seconds
/// ```
extension Duration {
    /// The duration in (fractional) seconds.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in (fractional) milliseconds.
    public var milliseconds: Double {
        Double(components.seconds) * 1e3 + Double(components.attoseconds) / 1e15
    }

    /// The duration in whole nanoseconds (truncated toward zero).
    public var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }

    /// The duration in whole milliseconds (truncated toward zero).
    public var wholeMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
