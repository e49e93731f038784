import CSystemd
import Foundation
import Synchronization

/// logind's `IdleHint` (org.freedesktop.login1.Manager) read over the system bus with sd-bus:
/// true when every user session is idle. Off by default (signal `logind`), since it tracks
/// people at a console rather than load. Readings are cached for a second.
public final class LogindIdleHint: Sendable {
    private struct State {
        /// sd_bus *, opened on first use.
        var bus: OpaquePointer?
        var cached: (idle: Bool, at: ContinuousClock.Instant)?
        var failure: String?
    }

    // The bus pointer is only used with this lock held.
    private let state = Mutex<State>(State())

    /// Memberwise initializer.
    public init() {}

    deinit {
        state.withLock { state in
            if let bus = state.bus { _ = sd_bus_flush_close_unref(bus) }
        }
    }

    /// The hint, or an error text when logind cannot be asked.
    public func read(now: ContinuousClock.Instant = .now) -> Result<Bool, LogindError> {
        state.withLock { state in
            if let cached = state.cached, now - cached.at < .seconds(1) { return .success(cached.idle) }
            if state.bus == nil {
                var bus: OpaquePointer?
                let r = sd_bus_open_system(&bus)
                guard r >= 0, let bus else { return .failure(LogindError(reason: "cannot open the system bus: \(String(cString: strerror(-r)))")) }
                state.bus = bus
            }
            let r = CSystemd_logindIdleHint(state.bus)
            guard r >= 0 else {
                if let bus = state.bus { _ = sd_bus_flush_close_unref(bus) }
                state.bus = nil
                return .failure(LogindError(reason: "cannot read org.freedesktop.login1 IdleHint: \(String(cString: strerror(-r)))"))
            }
            state.cached = (r == 1, now)
            return .success(r == 1)
        }
    }
}

/// logind could not be asked (no system bus, no session).
public struct LogindError: Error, Sendable, CustomStringConvertible {
    /// Why, in words, and what to do.
    public var reason: String
    /// A description in words.
    public var description: String { reason }
}
