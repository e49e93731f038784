import Foundation
import Logging
import Synchronization

/// One replicated store's ``ReplicaLag``, turned into the scheduler's `replication` signal and
/// logged when its problem or its side of the bound changes.
///
/// The signal is the lag the replica may reach before Litestream's next sync if the deferred
/// work writes nothing more: the WAL bytes not yet shipped, plus what the store's other
/// writers (its clients) write in one `sync_interval` — their WAL rate, measured while the
/// work does not run. Holding the work at `max_lag` alone would let the clients' writes until
/// the sync carry the lag past it. A whole interval, not what is left of it: Litestream's
/// syncs come late on a loaded machine, and work written just as one starts waits for the next.
/// Plus the work's next batch: the WAL its last batch wrote, capped at half of what the
/// clients leave of `max_lag` (so that the work can always run once the replica has caught
/// up, however large its last batch was).
///
/// Every reading reads the WAL's end live from `-shm` (96 bytes), so the deferred work can
/// ask before each batch and stop within one batch of reaching `max_lag`; the replica's
/// position (a directory listing and an LTX header) is read again at most every ``interval``
/// (an older position only overstates the lag).
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
    /// The shortest time between two reads of the replica's position.
    static let interval: Duration = .milliseconds(50)
    /// The shortest span over which the other writers' WAL rate is measured, and the time
    /// constant of its average.
    static let rateSpan: Duration = .milliseconds(100)
    static let rateMemory = 1.0

    /// When a reading is made, which says whose writes the WAL's growth since the last one is.
    public enum Moment: Sendable {
        /// No deferred work runs on the store: the growth is the other writers' (their rate).
        case workIdle
        /// Before a batch of the deferred work: the growth since the last such reading is
        /// mostly that batch's (the next batch's estimate).
        case beforeBatch
        /// Anything else (a sampling tick while the work runs): nothing is measured.
        case other
    }

    /// A lag, and what the other writers and the work's next batch are expected to add.
    public struct Projection: Sendable, Hashable {
        /// The lag now.
        public var lag: ReplicaLag
        /// The bytes the other writers are expected to write in one sync interval.
        public var expectedBytes: Int
        /// The bytes the work's next batch is expected to write (capped; see the type's doc).
        public var nextBatchBytes = 0
        /// The lag the replica may reach before the next sync if the work runs one more batch.
        public var projectedBytes: Int { lag.unshippedBytes + expectedBytes + nextBatchBytes }
    }

    private struct Cache {
        var shipped: ShippedPosition?
        var at: ContinuousClock.Instant?
        var loggedProblem: String?
        var loggedOver = false
        var loggedCrowded = false
        /// The other writers' WAL rate in bytes per second (measured while the work does not run).
        var rate = 0.0
        var rateMark: (at: ContinuousClock.Instant, end: Int, generation: UInt64)?
        /// The WAL the work's last batch wrote, and the WAL's end before the batch in flight.
        var batchBytes = 0
        var batchMark: (end: Int, generation: UInt64)?
    }
    private let cache = Mutex(Cache())

    /// A probe for the store `store` at `storePath`.
    public init(store: String, storePath: String, configuration: ReplicationConfiguration) {
        self.store = store
        self.storePath = storePath
        self.configuration = configuration
    }

    /// The other writers' WAL rate now believed, in bytes per second.
    public var othersRate: Double { cache.withLock { $0.rate } }

    /// The lag now and what the other writers write in one sync interval.
    ///
    /// - Parameter moment: when the reading is made, which says whose writes the WAL's growth
    ///   since the last reading of the same moment is (the clients' rate, the work's batch).
    public func projection(now: ContinuousClock.Instant = .now, logger: Logger? = nil, at moment: Moment) -> Projection {
        let directory = configuration.positionDirectory(storePath: storePath)
        return cache.withLock { cache in
            let shipped: ShippedPosition
            if let known = cache.shipped, let at = cache.at, now - at < Self.interval {
                shipped = known
            } else {
                shipped = ShippedPosition.read(positionDirectory: directory)
                cache.shipped = shipped
                cache.at = now
            }
            let lag = ReplicaLag.between(storePath: storePath, and: shipped)
            Self.measure(lag, at: now, moment: moment, into: &cache)
            var projection = Projection(lag: lag, expectedBytes: 0)
            if lag.problem == nil {
                projection.expectedBytes = Int(cache.rate * configuration.syncInterval.seconds)
                projection.nextBatchBytes = min(cache.batchBytes, max(0, configuration.maxLag - projection.expectedBytes) / 2)
            }
            if let logger { log(projection, directory: directory, logger: logger, cache: &cache) }
            return projection
        }
    }

    /// Updates the other writers' rate from the WAL's growth since the last reading made while
    /// the work did not run (in the same WAL generation, at least ``rateSpan`` apart), or the
    /// work's batch size from the growth since the reading before its last batch.
    private static func measure(_ lag: ReplicaLag, at now: ContinuousClock.Instant, moment: Moment, into cache: inout Cache) {
        if moment == .beforeBatch, lag.walGeneration != 0 {
            if let mark = cache.batchMark, mark.generation == lag.walGeneration, lag.walEnd >= mark.end {
                cache.batchBytes = lag.walEnd - mark.end
            }
            cache.batchMark = (lag.walEnd, lag.walGeneration)
        } else if moment == .workIdle {
            cache.batchMark = nil
        }
        guard moment == .workIdle, lag.walGeneration != 0 else {
            cache.rateMark = nil
            return
        }
        guard let mark = cache.rateMark, mark.generation == lag.walGeneration, lag.walEnd >= mark.end else {
            cache.rateMark = (now, lag.walEnd, lag.walGeneration)
            return
        }
        let span = (now - mark.at).seconds
        guard span >= rateSpan.seconds else { return }
        let sample = Double(lag.walEnd - mark.end) / span
        let weight = 1 - exp(-span / rateMemory)
        cache.rate += (sample - cache.rate) * weight
        cache.rateMark = (now, lag.walEnd, lag.walGeneration)
    }

    private func log(_ projection: Projection, directory: String, logger: Logger, cache: inout Cache) {
        let lag = projection.lag
        if lag.problem != cache.loggedProblem {
            if let problem = lag.problem {
                logger.warning("replica position unreadable: deferred work on every store holds until it is", metadata: [
                    "strata.store": "\(store)", "strata.replica": "\(directory)", "strata.reason": "\(problem)"])
            } else {
                logger.notice("replica position readable again", metadata: ["strata.store": "\(store)", "strata.replica": "\(directory)"])
            }
            cache.loggedProblem = lag.problem
        }
        // The clients alone fill max_lag between two syncs: the work can only run in the gaps
        // (logged once, again only after the rate fell under 80 % of it).
        let crowded = projection.expectedBytes > configuration.maxLag
            || (cache.loggedCrowded && Double(projection.expectedBytes) > 0.8 * Double(configuration.maxLag))
        if crowded != cache.loggedCrowded {
            cache.loggedCrowded = crowded
            if crowded {
                logger.warning("the clients alone write more than max_lag between two syncs: deferred work holds until they write less; raise max_lag or shorten Litestream's sync-interval (and replication.sync_interval)", metadata: [
                    "strata.store": "\(store)", "strata.expected_bytes": "\(projection.expectedBytes)",
                    "strata.clients_bytes_per_second": "\(Int(cache.rate))", "strata.max_lag_bytes": "\(configuration.maxLag)"])
            }
        }
        let over = projection.projectedBytes > configuration.maxLag
        if over != cache.loggedOver {
            cache.loggedOver = over
            logger.log(level: over ? .warning : .notice, over ? "replica behind: deferred work holds" : "replica caught up", metadata: [
                "strata.store": "\(store)", "strata.unshipped_bytes": "\(lag.unshippedBytes)",
                "strata.expected_bytes": "\(projection.expectedBytes)", "strata.next_batch_bytes": "\(projection.nextBatchBytes)",
                "strata.max_lag_bytes": "\(configuration.maxLag)"])
        }
    }

    /// The `replication` signal: the lag the replica may reach before the next sync, in MiB
    /// (unshipped, plus the other writers' bytes of one sync interval and the work's next
    /// batch), against `max_lag` (``unknownValue``, busy, while the
    /// replica's position cannot be read).
    ///
    /// - Parameter moment: when the reading is made (see ``projection(now:logger:at:)``).
    public func reading(now: ContinuousClock.Instant = .now, logger: Logger? = nil, at moment: Moment = .other) -> SignalReading {
        let projection = self.projection(now: now, logger: logger, at: moment)
        let lag = projection.lag
        let mib = 1024.0 * 1024.0
        var note = lag.problem
        if note == nil {
            var parts: [String] = []
            if projection.expectedBytes > 0 || projection.nextBatchBytes > 0 {
                parts.append(String(format: "%.1f MiB unshipped + %.1f MiB the clients write per sync interval + %.1f MiB for the next batch",
                                    Double(lag.unshippedBytes) / mib, Double(projection.expectedBytes) / mib, Double(projection.nextBatchBytes) / mib))
            }
            if let shipped = lag.shippedAt, lag.unshippedBytes > 0 {
                parts.append("last shipped \(Int(max(0, Date().timeIntervalSince(shipped))))s ago")
            }
            note = parts.isEmpty ? nil : parts.joined(separator: "; ")
        }
        return SignalReading(signal: .replication, label: "replica lag (\(store))",
                             value: lag.problem == nil ? Double(projection.projectedBytes) / mib : Self.unknownValue,
                             threshold: Double(configuration.maxLag) / mib, unit: " MiB", note: note)
    }
}
