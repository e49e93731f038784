import NIOCore

/// Closes a connection when the server quiesces (`ChannelShouldQuiesceEvent`, sent by
/// NIOExtras' `ServerQuiescingHelper`): at once when no call of its own runs, otherwise the
/// connection's task closes it after the running call has written its final reply
/// (``ConnectionActivity``); a call the client sent after the running one is answered
/// `ShuttingDown`. A call not yet read when an idle connection closes is never started.
final class ConnectionQuiescingHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let activity: ConnectionActivity

    init(activity: ConnectionActivity) {
        self.activity = activity
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        if activity.drainIfIdle() { context.close(promise: nil) }
    }
}
