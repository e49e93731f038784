import Foundation
import Prometheus
import Testing
@testable import StrataDaemon

/// The scheduler's pause latency percentiles are read from the exported histogram, as
/// Prometheus' `histogram_quantile` computes them, and its maximum from the exported gauge.
struct SchedulerMetricsTests {
    @Test func percentilesComeFromTheExportedHistogram() {
        let registry = PrometheusCollectorRegistry()
        let metrics = SchedulerMetrics(registry: registry)
        #expect(metrics.pauseLatencyMilliseconds() == (0, 0, 0))
        for milliseconds in [10, 10, 10, 40] { metrics.recordPause(latency: .milliseconds(milliseconds)) }
        metrics.pauseLatencyMax.set(to: 0.040)
        let (p50, p99, max) = metrics.pauseLatencyMilliseconds()
        // Rank 2 of 4 falls in (5 ms, 10 ms] holding 3: 5 + 5 × 2/3. Rank 3.96 in (30 ms, 40 ms]
        // holding 1 above 3: 30 + 10 × 0.96.
        #expect(abs(p50 - (5 + 5 * 2.0 / 3)) < 1e-9, "\(p50)")
        #expect(abs(p99 - 39.6) < 1e-9, "\(p99)")
        #expect(max == 40)
        let text = registry.emitToString()
        #expect(text.contains("strata_scheduler_pause_latency_seconds_count 4"), "\(text)")
        #expect(text.contains("strata_scheduler_pause_latency_seconds_bucket{le=\"0.01\"} 3"), "\(text)")
    }

    @Test func aRankInTheInfiniteBucketGivesTheHighestBound() {
        let exposition = PrometheusExposition("""
            # TYPE x histogram
            x_bucket{le="0.1"} 1
            x_bucket{le="1.0"} 1
            x_bucket{le="+Inf"} 3
            x_count 3
            """)
        #expect(exposition.histogramQuantile(0.99, "x") == 1.0)
        #expect(abs(exposition.histogramQuantile(0.2, "x") - 0.06) < 1e-12)  // rank 0.6 of the first bucket
        #expect(exposition.histogramQuantile(0.5, "nothing") == 0)
    }
}
