import Logging
import NIOCore

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
