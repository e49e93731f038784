import NIOCore

/// Tells a refused peer why and closes: as soon as it sends anything (or, if it sends nothing
/// within the grace time or when the server quiesces, unasked) it gets the error — `NotAuthorized`, `TooManyConnections`
/// or `ShuttingDown` — as the reply to its first call, then the connection closes.
///
/// Runs entirely on the event loop with no frame decoder: a refused connection holds no
/// connection slot, no task and no message buffer, and ``VarlinkServer`` bounds how many are
/// being told at once.
final class RefusedConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let error: VarlinkError
    private let grace: Duration
    private let onClose: @Sendable () -> Void
    private var timer: Scheduled<Void>?
    private var answered = false
    private var closed = false

    /// - Parameter onClose: called once, when the connection has closed.
    init(error: VarlinkError, grace: Duration, onClose: @escaping @Sendable () -> Void) {
        self.error = error
        self.grace = grace
        self.onClose = onClose
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        let reply = encodedReply(channel.allocator)
        timer = context.eventLoop.scheduleTask(in: TimeAmount(clamping: grace)) {
            channel.writeAndFlush(reply).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        answer(context)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        answer(context)
    }

    /// The server quiesces: tell the peer now rather than after the grace time.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent { answer(context) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        if !closed {
            closed = true
            onClose()
        }
    }

    private func answer(_ context: ChannelHandlerContext) {
        guard !answered else { return }
        answered = true
        timer?.cancel()
        let channel = context.channel
        context.writeAndFlush(Self.wrapOutboundOut(encodedReply(context.channel.allocator))).whenComplete { _ in channel.close(promise: nil) }
    }

    /// The reply, NUL-terminated (the pipeline of a refused connection has no frame encoder).
    private func encodedReply(_ allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(bytes: VarlinkReply(error).encoded())
        buffer.writeInteger(UInt8(0))
        return buffer
    }
}
