import Synchronization

/// Whether a connection has calls running and whether it should close: shared between the
/// event loop (stall detection, quiescing, reply writes) and the task that runs the calls.
/// A call runs from ``begin()`` until its final reply has been written to the socket
/// (``end()``, called when the write completes), so the event loop may close an idle
/// connection without losing a reply. The connection's task starts the next call while the
/// last one's reply may still be on its way to the socket: two calls can count as running.
final class ConnectionActivity: Sendable {
    private struct State {
        /// Calls begun whose final reply is not written yet.
        var running = 0
        var draining = false
    }

    private let state = Mutex(State())

    /// Marks a call as started; false when the connection is draining.
    func begin() -> Bool {
        state.withLock { state in
            guard !state.draining else { return false }
            state.running += 1
            return true
        }
    }

    /// Marks a call as finished (its final reply written, or given up); true when the
    /// connection should now close (draining, and no other call runs).
    func end() -> Bool {
        state.withLock { state in
            state.running = max(0, state.running - 1)
            return state.draining && state.running == 0
        }
    }

    var isBusy: Bool { state.withLock { $0.running > 0 } }

    /// Starts draining; true when idle (close now), false when a call runs (close after it).
    func drainIfIdle() -> Bool {
        state.withLock { state in
            state.draining = true
            return state.running == 0
        }
    }
}
