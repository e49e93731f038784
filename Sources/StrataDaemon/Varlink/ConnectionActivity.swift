import Logging
import NIOCore
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

/// Closes a connection that has sent nothing for the idle timeout while none of its calls
/// runs: a client that connects and stalls (or stops mid-message) cannot hold a slot forever.
final class StallTimeoutHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let activity: ConnectionActivity
    private let logger: Logger
    private let peer: PeerIdentity?

    init(activity: ConnectionActivity, logger: Logger, peer: PeerIdentity?) {
        self.activity = activity
        self.logger = logger
        self.peer = peer
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
            if !activity.isBusy {
                logger.notice("idle client disconnected", metadata: ["strata.peer": "\(peer.map(\.description) ?? "?")"])
                context.close(promise: nil)
            }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
