import CoreMetrics
import Prometheus

/// The swift-metrics backend of the daemon: `PrometheusMetricsFactory`, but the metrics that
/// the daemon's parts create through swift-metrics (`Counter(label:)`, `Timer(label:)`) get
/// their `# HELP` text from ``help`` — the plain factory registers them without one. A
/// metric without an entry is created as the plain factory would (and a test fails: every
/// family carries HELP and TYPE).
public struct DescribedMetricsFactory: MetricsFactory {
    /// The HELP text of every metric the daemon creates through swift-metrics.
    public static let help: [String: String] = [
        "strata_requests_total": "Varlink calls answered, by method and outcome (ok or the error name)",
        "strata_store_requests_total": "Calls served on the store",
        "strata_client_calls_total": "Data-socket calls to the store by the model version they were served at (named by the call, or the store's)",
        "strata_request_duration_seconds": "Time to answer a Varlink call, by method",
        "strata_deferred_client_wait_max_seconds": "The longest a client arriving at the worst moment could have waited behind each step of deferred work",
    ]

    private let plain: PrometheusMetricsFactory
    private let registry: PrometheusCollectorRegistry

    /// A factory over `plain` (its registry and buckets).
    public init(_ plain: PrometheusMetricsFactory) {
        self.plain = plain
        self.registry = plain.registry
    }

    /// A counter; with its HELP text when ``help`` has one.
    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        guard let help = Self.help[label] else { return plain.makeCounter(label: label, dimensions: dimensions) }
        return registry.makeCounter(descriptor: .named(label, help: help), labels: dimensions)
    }

    /// A floating-point counter; with its HELP text when ``help`` has one.
    public func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        guard let help = Self.help[label] else { return plain.makeFloatingPointCounter(label: label, dimensions: dimensions) }
        return registry.makeCounter(descriptor: .named(label, help: help), labels: dimensions)
    }

    /// A recorder, as the plain factory makes it; a gauge (`aggregate` false) with its HELP
    /// text when ``help`` has one.
    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard !aggregate, let help = Self.help[label] else { return plain.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate) }
        return registry.makeGauge(descriptor: .named(label, help: help), labels: dimensions)
    }

    /// A meter, as the plain factory makes it.
    public func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        plain.makeMeter(label: label, dimensions: dimensions)
    }

    /// A timer (a duration histogram); with its HELP text when ``help`` has one.
    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        guard let help = Self.help[label] else { return plain.makeTimer(label: label, dimensions: dimensions) }
        let buckets = plain.durationHistogramBuckets[label] ?? plain.defaultDurationHistogramBuckets
        return registry.makeDurationHistogram(descriptor: .named(label, help: help), labels: dimensions, buckets: buckets)
    }

    /// Unregisters a counter.
    public func destroyCounter(_ handler: any CounterHandler) { plain.destroyCounter(handler) }
    /// Unregisters a floating-point counter.
    public func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { plain.destroyFloatingPointCounter(handler) }
    /// Unregisters a recorder.
    public func destroyRecorder(_ handler: any RecorderHandler) { plain.destroyRecorder(handler) }
    /// Unregisters a meter.
    public func destroyMeter(_ handler: any MeterHandler) { plain.destroyMeter(handler) }
    /// Unregisters a timer.
    public func destroyTimer(_ handler: any TimerHandler) { plain.destroyTimer(handler) }
}
