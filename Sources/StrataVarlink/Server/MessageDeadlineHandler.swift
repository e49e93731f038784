import Logging
import NIOCore
import StrataUnits

/// Disconnects a client that starts a message and does not finish it (the NUL terminator)
/// within `limits.message_timeout`: a client trickling one byte a second is never silent, so
/// the idle timeout alone would keep it (and its connection slot) forever.
///
/// Sits before the frame decoder and sees the raw bytes: a message is pending from the first
/// byte after a NUL (or the first byte of the connection) until the next NUL. On the deadline
/// it writes `io.strata.Varlink.MessageTimeout`, logs, and closes.
final class MessageDeadlineHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let timeout: Duration
    private let logger: Logger
    private let peer: PeerIdentity?
    private var deadline: Scheduled<Void>?

    init(timeout: Duration, logger: Logger, peer: PeerIdentity?) {
        self.timeout = timeout
        self.logger = logger
        self.peer = peer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = Self.unwrapInboundIn(data)
        let view = bytes.readableBytesView
        if let lastNUL = view.lastIndex(of: 0) {
            // Everything up to the last NUL is complete; a tail after it starts a new message now.
            cancel()
            if lastNUL + 1 < view.endIndex { arm(context) }
        } else if deadline == nil, !view.isEmpty {
            arm(context)
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancel()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancel()
    }

    private func arm(_ context: ChannelHandlerContext) {
        let channel = context.channel
        let (timeout, logger, peer) = (self.timeout, self.logger, self.peer)
        deadline = context.eventLoop.scheduleTask(in: TimeAmount(clamping: timeout)) {
            logger.notice("client did not complete a message in time, disconnecting", metadata: [
                "strata.peer": "\(peer.map(\.description) ?? "?")", "strata.message_timeout": "\(timeout)",
            ])
            // Written from the channel's tail: the frame encoder adds the NUL.
            let reply = channel.allocator.buffer(bytes: VarlinkReply(.messageTimeout(timeout)).encoded())
            channel.writeAndFlush(reply).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    private func cancel() {
        deadline?.cancel()
        deadline = nil
    }
}

extension TimeAmount {
    /// A duration as a NIO time amount, saturating instead of trapping on huge values.
    init(clamping duration: Duration) {
        let nanoseconds = duration.seconds * 1e9
        self = .nanoseconds(nanoseconds >= Double(Int64.max) ? Int64.max : Int64(max(0, nanoseconds)))
    }
}
