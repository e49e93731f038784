import Synchronization

/// Whether a connection is running a call and whether it should close: shared between the
/// event loop (stall detection) and the task that runs the calls.
final class ConnectionActivity: Sendable {
    private struct State {
        var busy = false
        var draining = false
    }

    private let state = Mutex(State())

    /// Marks a call as started; false when the connection is draining.
    func begin() -> Bool {
        state.withLock { state in
            guard !state.draining else { return false }
            state.busy = true
            return true
        }
    }

    /// Marks the call as finished; true when the connection should now close (draining).
    func end() -> Bool {
        state.withLock { state in
            state.busy = false
            return state.draining
        }
    }

    var isBusy: Bool { state.withLock { $0.busy } }

    /// Starts draining; true when idle (close now), false when a call runs (close after it).
    func drainIfIdle() -> Bool {
        state.withLock { state in
            state.draining = true
            return !state.busy
        }
    }
}
