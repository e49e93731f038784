import Synchronization

/// Tells the calls of one connection that they must end now: the server is shutting down (or
/// reloading), or the peer closed the connection. A `more` call that waits for something to
/// send (an observer waiting for the next commit) listens for it, so that it gives its final
/// reply within moments of a shutdown instead of at the shutdown deadline, and gives its
/// connection slot back as soon as the peer goes, not at the next thing it would have sent.
///
/// ```swift
/// context.ending.onEnd { reason in inbox.end(.interrupted(reason)) }
/// ```
public final class VarlinkCallEnding: Sendable {
    /// Why the calls must end.
    public enum Reason: Sendable, Hashable {
        /// The server stops taking calls (shutdown): the call ends with a final reply.
        case shutdown
        /// The peer closed the connection: nobody is left to reply to.
        case peerClosed
    }

    private struct State {
        var reason: Reason?
        var handlers: [@Sendable (Reason) -> Void] = []
    }

    private let state = Mutex(State())

    /// A signal that has not fired.
    public init() {}

    /// Why the calls must end, once they must (the first reason wins).
    public var reason: Reason? { state.withLock { $0.reason } }

    /// Fires the signal: every handler runs once, now (later ones at once when registered).
    public func fire(_ reason: Reason) {
        let handlers = state.withLock { state -> [@Sendable (Reason) -> Void] in
            guard state.reason == nil else { return [] }
            state.reason = reason
            defer { state.handlers = [] }
            return state.handlers
        }
        for handler in handlers { handler(reason) }
    }

    /// Runs `handler` when the signal fires (at once when it has).
    public func onEnd(_ handler: @escaping @Sendable (Reason) -> Void) {
        let fired = state.withLock { state -> Reason? in
            if let reason = state.reason { return reason }
            state.handlers.append(handler)
            return nil
        }
        if let fired { handler(fired) }
    }
}
