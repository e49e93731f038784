import NIOCore

/// Appends the NUL terminator on the way out.
public struct NULFrameEncoder: MessageToByteEncoder {
    /// One message, without its NUL terminator.
    public typealias OutboundIn = ByteBuffer
    /// Memberwise initializer.
    public init() {}
    /// Writes the message followed by its NUL terminator.
    public func encode(data: ByteBuffer, out: inout ByteBuffer) throws {
        var data = data
        out.writeBuffer(&data)
        out.writeInteger(UInt8(0))
    }
}
