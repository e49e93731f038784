import Histogram
import StrataUnits

/// Latencies of repeated operations, in nanoseconds, kept in an HdrHistogram (3 significant
/// digits, up to one minute per operation).
struct LatencyRecorder {
    private(set) var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
    private(set) var total: Duration = .zero

    /// Times one run of `body` and records it.
    @discardableResult
    mutating func measure<T>(_ body: () throws -> T) rethrows -> T {
        let clock = ContinuousClock()
        let start = clock.now
        let result = try body()
        record(clock.now - start)
        return result
    }

    mutating func record(_ duration: Duration) {
        total += duration
        histogram.record(UInt64(max(0, duration.nanoseconds)))
    }

    /// Adds another recorder's latencies to these.
    mutating func add(_ other: LatencyRecorder) {
        histogram.add(other.histogram)
        total += other.total
    }

    var count: UInt64 { histogram.totalCount }
    /// Mean, median and 99th percentile in microseconds.
    var meanMicroseconds: Double { histogram.mean / 1000 }
    var p50Microseconds: Double { Double(histogram.valueAtPercentile(50)) / 1000 }
    var p99Microseconds: Double { Double(histogram.valueAtPercentile(99)) / 1000 }
}
