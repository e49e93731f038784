import Foundation
import Logging
import Synchronization

/// Rate-limits a repeated log line: the first occurrence of a key is logged at once, later
/// ones within `interval` are only counted, and the next one after the interval is logged
/// with how many were left out (`strata.repeated`, and "(N more like it since the last such
/// line)" in the message). An operator reads one line per interval, not one per batch.
///
/// ```swift
/// let throttle = LogThrottle(interval: .seconds(30))
/// throttle.log(logger, level: .info, "deferred work held the write lock longer than its budget",
///              key: "aircraft|copy rows", metadata: ["strata.ms": "41.0"])
/// ```
public final class LogThrottle: Sendable {
    private struct Entry {
        var lastLogged: ContinuousClock.Instant
        var suppressed = 0
    }

    /// Keys kept at most (a new key past it forgets the oldest half: bounded memory).
    static let maximumKeys = 1024
    /// The shortest time between two lines of one key.
    public let interval: Duration
    private let now: @Sendable () -> ContinuousClock.Instant
    private let entries = Mutex<[String: Entry]>([:])

    /// The throttle every deferred-work run of the process shares (30 s per key).
    public static let deferredWork = LogThrottle(interval: .seconds(30))

    /// - Parameters:
    ///   - interval: the shortest time between two lines of one key.
    ///   - now: the clock (tests pass a fake one).
    public init(interval: Duration, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.interval = interval
        self.now = now
    }

    /// How many occurrences of `key` to report as left out when it is logged now, or nil
    /// when this occurrence is to be counted and not logged.
    public func admit(_ key: String) -> Int? {
        let instant = now()
        return entries.withLock { entries -> Int? in
            guard var entry = entries[key] else {
                if entries.count >= Self.maximumKeys {
                    for old in entries.sorted(by: { $0.value.lastLogged < $1.value.lastLogged }).prefix(Self.maximumKeys / 2) {
                        entries.removeValue(forKey: old.key)
                    }
                }
                entries[key] = Entry(lastLogged: instant)
                return 0
            }
            guard instant - entry.lastLogged >= interval else {
                entry.suppressed += 1
                entries[key] = entry
                return nil
            }
            let suppressed = entry.suppressed
            entries[key] = Entry(lastLogged: instant)
            return suppressed
        }
    }

    /// Logs `message` unless a line of `key` was logged less than ``interval`` ago; a line
    /// after left-out ones says how many.
    public func log(_ logger: Logger, level: Logger.Level, _ message: String, key: String, metadata: Logger.Metadata = [:]) {
        guard let suppressed = admit(key) else { return }
        guard suppressed > 0 else { return logger.log(level: level, "\(message)", metadata: metadata) }
        var metadata = metadata
        metadata["strata.repeated"] = "\(suppressed)"
        logger.log(level: level, "\(message) (\(suppressed) more like it since the last such line)", metadata: metadata)
    }
}
