import Foundation

/// The samples of a Prometheus text exposition (what `PrometheusCollectorRegistry` emits),
/// read back: the daemon's status reports quantiles from the same histograms it exports,
/// computed as Prometheus' `histogram_quantile` does.
struct PrometheusExposition: Sendable {
    struct Sample: Sendable, Hashable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    let samples: [Sample]

    /// Parses `name{label="value",…} number` lines; comments and anything else are skipped.
    init(_ text: String) {
        var samples: [Sample] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            let series = line[..<space]
            var labels: [String: String] = [:]
            var name = Substring(series)
            if let open = series.firstIndex(of: "{"), series.last == "}" {
                name = series[..<open]
                for pair in series[series.index(after: open)..<series.index(before: series.endIndex)].split(separator: ",") {
                    let parts = pair.split(separator: "=", maxSplits: 1)
                    guard parts.count == 2 else { continue }
                    labels[String(parts[0])] = String(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
                }
            }
            samples.append(Sample(name: String(name), labels: labels, value: value))
        }
        self.samples = samples
    }

    /// The value of the sample `name` (with exactly `labels`), nil when absent.
    func value(_ name: String, labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    /// The `q`-quantile (0…1) of histogram `name`, as `histogram_quantile` computes it: the
    /// bucket holding rank `q × count`, interpolated linearly within it (the first bucket
    /// starts at 0; a rank in the `+Inf` bucket gives the highest finite bound). Zero when
    /// the histogram has no observation.
    func histogramQuantile(_ q: Double, _ name: String) -> Double {
        let buckets = samples.filter { $0.name == "\(name)_bucket" }
            .compactMap { sample -> (bound: Double, count: Double)? in
                guard let le = sample.labels["le"] else { return nil }
                return (le == "+Inf" ? .infinity : Double(le) ?? .nan, sample.value)
            }
            .filter { !$0.bound.isNaN }
            .sorted { $0.bound < $1.bound }
        guard let total = buckets.last?.count, total > 0 else { return 0 }
        let rank = q * total
        var lower = 0.0, below = 0.0
        for bucket in buckets {
            if bucket.count >= rank {
                if bucket.bound.isInfinite { return lower }
                let inBucket = bucket.count - below
                return inBucket > 0 ? lower + (bucket.bound - lower) * (rank - below) / inBucket : bucket.bound
            }
            lower = bucket.bound
            below = bucket.count
        }
        return lower
    }
}
