import NIOCore

/// Splits a byte stream into NUL-terminated Varlink messages, refusing any message longer
/// than `maxSize` (``VarlinkFrameError/tooLarge``) without buffering it whole.
public struct NULFrameDecoder: ByteToMessageDecoder {
    /// One message, without its NUL terminator.
    public typealias InboundOut = ByteBuffer
    /// The largest message accepted, in bytes.
    public let maxSize: Int

    /// Memberwise initializer.
    public init(maxSize: Int) {
        self.maxSize = maxSize
    }

    /// Splits off the next NUL-terminated message; refuses one longer than ``maxSize``.
    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let end = buffer.readableBytesView.firstIndex(of: 0) else {
            if buffer.readableBytes > maxSize { throw VarlinkFrameError.tooLarge(limit: maxSize) }
            return .needMoreData
        }
        let length = end - buffer.readerIndex
        if length > maxSize { throw VarlinkFrameError.tooLarge(limit: maxSize) }
        let frame = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        context.fireChannelRead(Self.wrapInboundOut(frame))
        return .continue
    }

    /// At EOF: the last complete messages; an unterminated rest is dropped.
    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        // An unterminated tail at EOF is dropped: the client went away mid-message.
        buffer.clear()
        return .needMoreData
    }
}

/// Framing failures on a Varlink connection.
public enum VarlinkFrameError: Error, Sendable, Hashable {
    case tooLarge(limit: Int)
}
