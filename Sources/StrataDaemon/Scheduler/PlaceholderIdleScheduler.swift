import Foundation
import Logging

/// A stand-in for the idle scheduler: it treats the machine as **always idle** and never starts
/// deferred work by itself. It keeps the real contract — status with a reason, pause /
/// resume (which stop idle-respecting work at its next batch), settings readable and settable
/// at run time — so the daemon, the admin interface and `stratactl` are complete; the signal
/// sources and the work loop replace it later (see the scheduler issue).
public actor PlaceholderIdleScheduler: DeferredWorkScheduler {
    private var current: SchedulerSettings
    private var pausedReason: String?
    private let logger: Logger
    public nonisolated let gate = SchedulerGate()

    public init(settings: SchedulerSettings, logger: Logger) {
        self.current = settings
        self.logger = logger
    }

    public func run() async {
        logger.info("placeholder scheduler started: the machine counts as always idle; deferred work runs only on request")
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(3600))
        }
    }

    public func status() -> SchedulerStatus {
        if let pausedReason { return SchedulerStatus(state: .paused, reason: "paused: \(pausedReason)", paused: true) }
        if !current.enabled { return SchedulerStatus(state: .disabled, reason: "disabled by setting enabled=false", paused: false) }
        return SchedulerStatus(state: .idle, reason: "idle (placeholder scheduler: signals not measured yet; work runs on request)", paused: false)
    }

    public func pause(reason: String) -> SchedulerStatus {
        pausedReason = reason.isEmpty ? "by request" : reason
        gate.set(open: false)
        logger.notice("scheduler paused", metadata: ["strata.reason": "\(pausedReason!)"])
        return status()
    }

    public func resume() -> SchedulerStatus {
        pausedReason = nil
        gate.set(open: true)
        logger.notice("scheduler resumed")
        return status()
    }

    public func settings() -> SchedulerSettings { current }

    public func set(_ key: String, to value: String) throws(SchedulerSettingError) -> String {
        let previous = current.value(of: key) ?? ""
        try current.set(key, to: value)
        logger.notice("scheduler setting changed", metadata: ["strata.key": "\(key)", "strata.value": "\(value)", "strata.previous": "\(previous)"])
        return previous
    }

    public func apply(_ settings: SchedulerSettings) { current = settings }

    public func permission() -> (allowed: Bool, reason: String) {
        let status = status()
        return (status.state == .idle || status.state == .disabled, status.reason)
    }

    public func heartbeat() {}
}
