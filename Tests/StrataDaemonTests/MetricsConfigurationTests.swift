import Foundation
import Testing
@testable import StrataDaemon

/// The `metrics:` section: an optional textfile for node_exporter and its interval.
struct MetricsConfigurationTests {
    func parse(_ metrics: String) throws(ConfigurationError) -> MetricsConfiguration {
        try ConfigurationLoader().parse("stores: []\nmetrics:\n" + metrics, file: "test.yaml").metrics
    }

    @Test func defaultsAndEveryKey() throws {
        #expect(try ConfigurationLoader().parse("stores: []\n", file: "test.yaml").metrics == MetricsConfiguration(textfile: nil, interval: .seconds(15)))
        let metrics = try parse("  textfile: /var/lib/strata/metrics/stratad.prom\n  interval: 30s\n")
        #expect(metrics.textfile == "/var/lib/strata/metrics/stratad.prom")
        #expect(metrics.interval == .seconds(30))
    }

    @Test(arguments: [
        ("  textfile: /var/lib/strata/metrics.txt\n", "metrics.textfile", "reads only *.prom files"),
        ("  textfile: \"\"\n", "metrics.textfile", "empty"),
        ("  interval: 100ms\n", "metrics.interval", "between 1s and 1h"),
        ("  interval: 2h\n", "metrics.interval", "between 1s and 1h"),
        ("  interval: often\n", "metrics.interval", "not a duration"),
        ("  textfle: a.prom\n", "metrics.textfle", "did you mean 'textfile'?"),
    ])
    func refused(text: String, key: String, reason: String) {
        expectRefused(text, key: key, reason: reason, kinds: [.invalidValue, .unknownKey], parse)
    }
}
