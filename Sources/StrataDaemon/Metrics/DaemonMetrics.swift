import Foundation
import Prometheus
import StrataVarlink
import Synchronization

/// The daemon's metrics: one `PrometheusCollectorRegistry` that `stratad` bootstraps as the
/// swift-metrics backend (``factory``) and that the scheduler (``SchedulerMetrics``) writes
/// to directly. `io.strata.Admin.Metrics()`, `stratactl metrics` and the textfile
/// (``MetricsTextfileService``) export it in the Prometheus text format (``exposition(stores:servers:)``).
///
/// | metric | type | labels |
/// |---|---|---|
/// | `strata_requests_total` | counter | `method`, `outcome` (`ok` or the error name) |
/// | `strata_request_duration_seconds` | histogram | `method` |
/// | `strata_store_requests_total` | counter | `store` |
/// | `strata_client_calls_total` | counter | `store`, `version` |
/// | `strata_store_ready` | gauge (1 serving, 0 failed) | `store` |
/// | `strata_store_pending_tasks` | gauge (deferred ledger) | `store` |
/// | `strata_store_in_flight` | gauge (calls running) | `store` |
/// | `strata_store_deferred_running` | gauge (1 scheduler turn, 2 request, 0 none) | `store` |
/// | `strata_varlink_connections` | gauge (admitted connections) | `socket` |
/// | `strata_scheduler_…` | see ``SchedulerMetrics`` | |
public final class DaemonMetrics: Sendable {
    /// The hosted stores.
    public let registry: PrometheusCollectorRegistry
    /// The idle scheduler's state and statistics.
    public let scheduler: SchedulerMetrics
    /// Stores with gauges, so that a store removed by a reload loses them.
    private let gauged = Mutex<Set<String>>([])

    /// Request durations: from half a millisecond (a cached count) to ten seconds.
    static let requestDurationBuckets: [Duration] = [0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000]
        .map { .microseconds(Int64($0 * 1000)) }

    /// Memberwise initializer.
    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        self.scheduler = SchedulerMetrics(registry: registry)
    }

    /// The swift-metrics backend that feeds ``registry`` (`MetricsSystem.bootstrap(metrics.factory)`,
    /// once per process: `stratad`'s main does it).
    /// Every metric it makes carries `# HELP` (``DescribedMetricsFactory``).
    public var factory: DescribedMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["strata_request_duration_seconds"] = Self.requestDurationBuckets
        return DescribedMetricsFactory(factory)
    }

    /// The metrics in the Prometheus text exposition format (version 0.0.4), after updating
    /// the gauges read at export time from `stores` and `servers`.
    public func exposition(stores: [HostedStore], servers: [VarlinkServer]) -> String {
        let names = Set(stores.map(\.name))
        let removed = gauged.withLock { gauged in
            defer { gauged = names }
            return gauged.subtracting(names)
        }
        for name in removed {
            for gauge in storeGauges(name) { registry.unregisterGauge(gauge) }
        }
        for store in stores {
            let gauges = storeGauges(store.name)
            gauges[0].set(to: store.state == .ready ? 1 : 0)
            gauges[1].set(to: Double(store.pendingTasks().count))
            gauges[2].set(to: Double(store.inFlight))
            gauges[3].set(to: store.isFinishingOnRequest ? 2 : store.isFinishing ? 1 : 0)
        }
        for server in servers {
            registry.makeGauge(descriptor: .named("strata_varlink_connections", help: "Admitted Varlink connections"),
                               labels: [("socket", server.configuration.name)]).set(to: Double(server.connectionCount))
        }
        return registry.emitToString()
    }

    /// Ready, pending tasks, in flight, deferred work running.
    private func storeGauges(_ store: String) -> [Gauge] {
        [
            MetricNameDescriptor.named("strata_store_ready", help: "1 when the store serves, 0 when it failed"),
            MetricNameDescriptor.named("strata_store_pending_tasks", help: "Tasks in the store's deferred ledger"),
            MetricNameDescriptor.named("strata_store_in_flight", help: "Calls running on the store"),
            MetricNameDescriptor.named("strata_store_deferred_running", help: "Deferred work running on the store: 1 a scheduler turn, 2 a request, 0 none"),
        ].map { registry.makeGauge(descriptor: $0, labels: [("store", store)]) }
    }
}

extension MetricNameDescriptor {
    /// A metric by its full name (`strata_scheduler_rows_total`) and `# HELP` text.
    static func named(_ name: String, help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }
}
