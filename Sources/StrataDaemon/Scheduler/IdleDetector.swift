import Foundation

/// The scheduler's decision, as a pure state machine over signal readings and time: may
/// deferred work run now, and if not, why.
///
/// - Any one busy signal makes the machine busy (and the reason names it and by how much).
/// - The machine is idle only once every signal has been at or below its threshold for
///   `idle_after` without a break (hysteresis): one busy reading restarts the wait. A backlog
///   signal (``SchedulerSignal/isBacklog``: the replica's lag) holds the work while busy but
///   restarts no wait: the work goes on as soon as it is back under its bound.
/// - A pause by the operator, being outside the maintenance window and having used
///   `max_runtime` in the current window each stop the work too. (`enabled=false` only keeps
///   the scheduler from starting work by itself: idle-respecting requests still follow the
///   verdict.)
///
/// It keeps no clock of its own: every call passes the time, so tests drive it with a fake one.
public struct IdleDetector: Sendable {
    /// Why work may not run (for the pause counters and metrics).
    public enum Cause: String, Sendable, Hashable {
        case signal, hysteresis, paused, disabled, window, maxRuntime = "max_runtime", shutdown
    }

    /// The outcome of one evaluation.
    public struct Verdict: Sendable, Hashable {
        /// Whether the scheduler lets deferred work run now.
        public var allowsWork: Bool
        /// `idle`, `waiting`, `paused` or `disabled` (the scheduler turns `idle` into `running`).
        public var state: SchedulerStatus.State
        /// "waiting: io pressure avg10 31% > 10%", "idle: quiet for 60s", …
        public var reason: String
        /// Nil when work may run.
        public var cause: Cause?
        /// The busy readings (empty unless `cause == .signal`).
        public var busy: [SignalReading]
    }

    /// The thresholds and timings it decides with.
    public var settings: SchedulerSettings
    /// The operator's pause reason, when paused.
    public private(set) var pausedReason: String?
    /// Since when every signal has been quiet; nil while one is busy.
    public private(set) var quietSince: ContinuousClock.Instant?
    /// Work time used in the current window.
    public private(set) var windowRuntime: Duration = .zero
    private var windowOccurrence: Int?

    /// Memberwise initializer.
    public init(settings: SchedulerSettings) {
        self.settings = settings
    }

    /// Pauses the detector: it reports busy with `reason` until resumed.
    public mutating func pause(reason: String) { pausedReason = reason }
    /// Resumes the detector.
    public mutating func resume() { pausedReason = nil }

    /// Counts work time against `max_runtime` (the scheduler calls it while work runs).
    public mutating func recordRuntime(_ duration: Duration) { windowRuntime += duration }

    /// Evaluates the readings taken at `now`.
    public mutating func evaluate(_ readings: [SignalReading], at now: ContinuousClock.Instant, local: LocalTime) -> Verdict {
        // Hysteresis: signals are followed even while paused or outside the window, so that
        // the wait is already served when those end.
        // A backlog (the replica's lag) holds the work but is no load: it does not restart
        // the wait, so the work goes on as soon as the replica has caught up.
        let busy = readings.filter(\.isBusy)
        if busy.contains(where: { !$0.signal.isBacklog }) {
            quietSince = nil
        } else if quietSince == nil {
            quietSince = now
        }

        // The window, and its runtime budget (reset when a new window starts).
        let window = settings.maintenanceWindow.isEmpty ? nil : MaintenanceWindow(settings.maintenanceWindow)
        let occurrence = window.map { $0.occurrence(of: local) } ?? local.day
        if let occurrence, occurrence != windowOccurrence {
            windowOccurrence = occurrence
            windowRuntime = .zero
        }

        if let pausedReason {
            return Verdict(allowsWork: false, state: .paused, reason: "paused: \(pausedReason)", cause: .paused, busy: busy)
        }
        if let window, occurrence == nil {
            return Verdict(allowsWork: false, state: .waiting, reason: "waiting: outside the maintenance window \(window)", cause: .window, busy: busy)
        }
        if settings.maxRuntime > .zero, windowRuntime >= settings.maxRuntime {
            let scope = window.map { "window \($0)" } ?? "day"
            return Verdict(allowsWork: false, state: .waiting,
                           reason: "waiting: max_runtime \(DurationText.format(settings.maxRuntime)) used up in this \(scope)", cause: .maxRuntime, busy: busy)
        }
        if !busy.isEmpty {
            return Verdict(allowsWork: false, state: .waiting, reason: "waiting: " + busy.map(\.summary).joined(separator: "; "), cause: .signal, busy: busy)
        }
        let quiet = quietSince.map { now - $0 } ?? .zero
        if quiet < settings.idleAfter {
            return Verdict(allowsWork: false, state: .waiting,
                           reason: "waiting: quiet for \(Self.seconds(quiet)) of idle_after \(DurationText.format(settings.idleAfter))",
                           cause: .hysteresis, busy: [])
        }
        return Verdict(allowsWork: true, state: .idle, reason: "idle: every signal below its threshold for \(Self.seconds(quiet))", cause: nil, busy: [])
    }

    static func seconds(_ duration: Duration) -> String {
        let s = duration.seconds
        return s < 10 ? String(format: "%.1fs", s) : "\(Int(s))s"
    }
}
