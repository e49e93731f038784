import Synchronization

/// Whether a connection is running a call and whether it should close: shared between the
/// event loop (stall detection, quiescing) and the task that runs the calls. A call runs from
/// ``begin()`` until its final reply has been written to the socket (``end()``), so the
/// event loop may close an idle connection without losing a reply.
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

    /// Marks the call as finished (its final reply written); true when the connection should
    /// now close (draining).
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
