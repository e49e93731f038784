import Foundation
import Prometheus

/// The idle scheduler's metrics, registered in the daemon's `PrometheusCollectorRegistry`
/// (exported by `Metrics()`, `stratactl metrics` and the textfile). The status' pause
/// latency percentiles are read back from ``pauseLatency``, the exported histogram.
///
/// | metric | type | labels |
/// |---|---|---|
/// | `strata_scheduler_runs_total` | counter | |
/// | `strata_scheduler_rows_total`, `strata_scheduler_batches_total`, `strata_scheduler_tasks_finished_total` | counter | `store` |
/// | `strata_scheduler_errors_total` | counter | `store` |
/// | `strata_scheduler_work_seconds_total`, `strata_scheduler_delay_seconds_total` | counter | |
/// | `strata_scheduler_pauses_total` | counter | `cause` |
/// | `strata_scheduler_pause_latency_seconds` | histogram | |
/// | `strata_scheduler_pause_latency_max_seconds` | gauge | |
/// | `strata_scheduler_signal` | gauge | `signal`, `reading` |
public struct SchedulerMetrics: Sendable {
    static let pauseLatencyName = "strata_scheduler_pause_latency_seconds"
    /// Fine below 100 ms, the pause latency the scheduler aims under.
    static let pauseLatencyBuckets: [Duration] = [1, 2, 5, 10, 15, 20, 25, 30, 40, 50, 75, 100, 150, 250, 500, 1000, 2500, 5000]
        .map { .milliseconds($0) }

    let registry: PrometheusCollectorRegistry
    let runs: Counter
    let workSeconds: Counter
    let delaySeconds: Counter
    let pauseLatency: DurationHistogram
    let pauseLatencyMax: Gauge

    /// - Parameter registry: the daemon's registry (tests pass a fresh one).
    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        runs = registry.makeCounter(descriptor: .named("strata_scheduler_runs_total", help: "Work periods the idle scheduler started"))
        workSeconds = registry.makeCounter(descriptor: .named("strata_scheduler_work_seconds_total", help: "Time spent running deferred work"))
        delaySeconds = registry.makeCounter(descriptor: .named("strata_scheduler_delay_seconds_total",
                                                               help: "Cost delay slept between deferred batches"))
        pauseLatency = registry.makeDurationHistogram(
            descriptor: .named(Self.pauseLatencyName, help: "From the first busy reading to deferred work having stopped"),
            buckets: Self.pauseLatencyBuckets)
        pauseLatencyMax = registry.makeGauge(descriptor: .named("strata_scheduler_pause_latency_max_seconds", help: "The longest pause latency"))
    }

    // MARK: - Per store, cause and signal

    private static var rowsName: MetricNameDescriptor { .named("strata_scheduler_rows_total",
                                                               help: "Rows the idle scheduler's deferred work processed") }
    private static var batchesName: MetricNameDescriptor { .named("strata_scheduler_batches_total",
                                                               help: "Deferred batches the idle scheduler ran") }
    private static var tasksName: MetricNameDescriptor { .named("strata_scheduler_tasks_finished_total",
                                                               help: "Deferred tasks the idle scheduler finished") }
    private static var errorsName: MetricNameDescriptor { .named("strata_scheduler_errors_total", help: "Failed deferred-work turns") }
    private static var pausesName: MetricNameDescriptor { .named("strata_scheduler_pauses_total",
                                                               help: "Running deferred work stopped, by cause") }
    private static var signalName: MetricNameDescriptor { .named("strata_scheduler_signal",
                                                               help: "The latest reading of each scheduler signal") }

    func rows(_ store: String) -> Counter { registry.makeCounter(descriptor: Self.rowsName, labels: [("store", store)]) }
    func batches(_ store: String) -> Counter { registry.makeCounter(descriptor: Self.batchesName, labels: [("store", store)]) }
    func tasksFinished(_ store: String) -> Counter { registry.makeCounter(descriptor: Self.tasksName, labels: [("store", store)]) }
    func errors(_ store: String) -> Counter { registry.makeCounter(descriptor: Self.errorsName, labels: [("store", store)]) }
    func pauses(_ cause: String) -> Counter { registry.makeCounter(descriptor: Self.pausesName, labels: [("cause", cause)]) }

    func signal(_ reading: SignalReading) -> Gauge {
        registry.makeGauge(descriptor: Self.signalName, labels: [("signal", reading.signal.rawValue), ("reading", reading.label)])
    }

    // MARK: - Pause latency

    func recordPause(latency: Duration) {
        pauseLatency.record(latency)
    }

    /// p50, p99 and max of the pause latency in milliseconds, from the exported histogram
    /// (`histogram_quantile`) and gauge.
    func pauseLatencyMilliseconds() -> (p50: Double, p99: Double, max: Double) {
        let exposition = PrometheusExposition(registry.emitToString())
        return (exposition.histogramQuantile(0.50, Self.pauseLatencyName) * 1000,
                exposition.histogramQuantile(0.99, Self.pauseLatencyName) * 1000,
                (exposition.value("strata_scheduler_pause_latency_max_seconds") ?? 0) * 1000)
    }
}
