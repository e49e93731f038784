import Foundation

/// A time of day in which deferred work may run (`02:00-05:00`; a window may wrap midnight,
/// `22:00-04:00`). Without a window, any time is allowed and a window is one calendar day
/// (so `max_runtime` is then a daily budget).
public struct MaintenanceWindow: Sendable, Hashable, CustomStringConvertible {
    /// Minutes since midnight.
    public var start: Int
    /// Minutes since midnight at which the window ends (before `start` when it wraps midnight).
    public var end: Int

    /// A window from `HH:MM-HH:MM` text, nil when it is not one.
    public init?(_ text: String) {
        guard let (start, end) = SchedulerSettings.parseWindow(text) else { return nil }
        self.start = start
        self.end = end
    }

    /// Which occurrence of the window `time` falls in (an id that changes from one window to
    /// the next), or nil when it is outside.
    public func occurrence(of time: LocalTime) -> Int? {
        if start < end {
            return (start..<end).contains(time.minute) ? time.day : nil
        }
        if time.minute >= start { return time.day }
        if time.minute < end { return time.day - 1 }
        return nil
    }

    /// A description in words.
    public var description: String {
        String(format: "%02d:%02d-%02d:%02d", start / 60, start % 60, end / 60, end % 60)
    }
}

/// A local wall-clock time for maintenance windows: days since the epoch and minutes since
/// midnight, both in the local time zone.
public struct LocalTime: Sendable, Hashable {
    /// Days since the epoch, local time.
    public var day: Int
    /// Minutes since local midnight.
    public var minute: Int

    /// Memberwise initializer.
    public init(day: Int, minute: Int) {
        self.day = day
        self.minute = minute
    }

    /// The local time now.
    public static var now: LocalTime {
        var seconds = time(nil)
        var parts = tm()
        localtime_r(&seconds, &parts)
        let local = Int(seconds) + Int(parts.tm_gmtoff)
        return LocalTime(day: local / 86_400, minute: Int(parts.tm_hour) * 60 + Int(parts.tm_min))
    }
}
