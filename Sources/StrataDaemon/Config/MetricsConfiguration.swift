import Foundation
import StrataVarlink

/// Where the daemon writes its metrics for node_exporter's textfile collector (the unit has
/// no network, so nothing scrapes it): `metrics.textfile` and `metrics.interval`.
public struct MetricsConfiguration: Sendable, Hashable {
    /// The file (`*.prom`) rewritten atomically every ``interval``; nil writes none.
    public var textfile: String?
    /// How often the textfile is rewritten.
    public var interval: Duration

    /// The range of ``interval``.
    public static let intervalRange: ClosedRange<Duration> = .seconds(1) ... .seconds(3600)

    /// Memberwise initializer.
    public init(textfile: String? = nil, interval: Duration = .seconds(15)) {
        self.textfile = textfile
        self.interval = interval
    }
}
