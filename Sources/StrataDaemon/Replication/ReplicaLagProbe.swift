import Foundation
import Logging
import Synchronization

/// One replicated store's ``ReplicaLag``, read at most every ``interval`` (the scheduler
/// samples every 25 ms while work runs; the work then stops within a batch of the reading), turned into the scheduler's `replication` signal,
/// and logged when its problem or its side of the bound changes.
public final class ReplicaLagProbe: Sendable {
    /// The store's name (in the reading's label).
    public let store: String
    /// The store file.
    public let storePath: String
    /// The store's `replication:` settings.
    public let configuration: ReplicationConfiguration
    /// The signal's value (in MiB) while the replica's position cannot be read: far above any
    /// `max_lag`, finite for JSON and Prometheus.
    public static let unknownValue = 1e9
    /// The shortest time between two reads of the files.
    static let interval: Duration = .milliseconds(50)

    private struct Cache {
        var lag: ReplicaLag?
        var at: ContinuousClock.Instant?
        var loggedProblem: String?
        var loggedOver = false
    }
    private let cache = Mutex(Cache())

    /// A probe for the store `store` at `storePath`.
    public init(store: String, storePath: String, configuration: ReplicationConfiguration) {
        self.store = store
        self.storePath = storePath
        self.configuration = configuration
    }

    /// The latest lag (read again when the last read is older than ``interval``).
    public func lag(now: ContinuousClock.Instant = .now, logger: Logger? = nil) -> ReplicaLag {
        let directory = configuration.positionDirectory(storePath: storePath)
        return cache.withLock { cache in
            if let lag = cache.lag, let at = cache.at, now - at < Self.interval { return lag }
            let lag = ReplicaLag.read(storePath: storePath, positionDirectory: directory)
            cache.lag = lag
            cache.at = now
            if let logger {
                if lag.problem != cache.loggedProblem {
                    if let problem = lag.problem {
                        logger.warning("replica position unreadable: deferred work on every store holds until it is", metadata: [
                            "strata.store": "\(store)", "strata.replica": "\(directory)", "strata.reason": "\(problem)"])
                    } else {
                        logger.notice("replica position readable again", metadata: ["strata.store": "\(store)", "strata.replica": "\(directory)"])
                    }
                    cache.loggedProblem = lag.problem
                }
                let over = lag.unshippedBytes > configuration.maxLag
                if over != cache.loggedOver {
                    cache.loggedOver = over
                    logger.log(level: over ? .warning : .notice, over ? "replica behind: deferred work holds" : "replica caught up", metadata: [
                        "strata.store": "\(store)", "strata.unshipped_bytes": "\(lag.unshippedBytes)", "strata.max_lag_bytes": "\(configuration.maxLag)"])
                }
            }
            return lag
        }
    }

    /// The `replication` signal: the unshipped WAL in MiB against `max_lag` (``unknownValue``,
    /// busy, while the replica's position cannot be read).
    public func reading(now: ContinuousClock.Instant = .now, logger: Logger? = nil) -> SignalReading {
        let lag = self.lag(now: now, logger: logger)
        let mib = 1024.0 * 1024.0
        var note = lag.problem
        if note == nil, let shipped = lag.shippedAt, lag.unshippedBytes > 0 {
            note = "last shipped \(Int(max(0, Date().timeIntervalSince(shipped))))s ago"
        }
        return SignalReading(signal: .replication, label: "replica lag (\(store))",
                             value: lag.problem == nil ? Double(lag.unshippedBytes) / mib : Self.unknownValue,
                             threshold: Double(configuration.maxLag) / mib, unit: " MiB", note: note)
    }
}
