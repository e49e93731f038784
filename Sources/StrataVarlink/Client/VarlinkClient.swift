import Foundation
import NIOCore
import NIOPosix

/// A Varlink client over a Unix socket, used by `stratactl` and the tests.
///
/// ```swift
/// try await VarlinkClient.withConnection(to: "/run/strata/admin.sock") { client in
///     let status = try await client.call("io.strata.Admin.Status")
/// }
/// ```
public struct VarlinkClient: Sendable {
    private let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>

    /// Why a call did not get a reply (the connection, not the daemon, failed).
    public enum ClientError: Error, Sendable, CustomStringConvertible {
        /// The socket cannot be reached (no such file, refused, no permission).
        case cannotConnect(path: String, reason: String)
        /// The daemon closed the connection before replying.
        case connectionClosed
        /// The reply is not Varlink.
        case badReply(String)

        /// A description in words.
        public var description: String {
            switch self {
            case .cannotConnect(let path, let reason): "cannot connect to \(path): \(reason)"
            case .connectionClosed: "the daemon closed the connection"
            case .badReply(let reason): "unexpected reply: \(reason)"
            }
        }
    }

    /// Connects, runs `body`, closes.
    public static func withConnection<Result: Sendable>(
        to path: String, maxReplySize: Int = 64 << 20,
        _ body: (Connection) async throws -> Result
    ) async throws -> Result {
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(unixDomainSocketPath: path) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers([
                            ByteToMessageHandler(NULFrameDecoder(maxSize: maxReplySize)),
                            MessageToByteHandler(NULFrameEncoder()),
                        ])
                        return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch let error as IOError {
            throw ClientError.cannotConnect(path: path, reason: String(cString: strerror(error.errnoCode)))
        } catch {
            throw ClientError.cannotConnect(path: path, reason: "\(error)")
        }
        return try await channel.executeThenClose { inbound, outbound in
            var iterator = inbound.makeAsyncIterator()
            let connection = Connection(outbound: outbound, next: {
                try await iterator.next()
            })
            return try await body(connection)
        }
    }

    /// One open connection.
    public final class Connection {
        private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
        private let nextFrame: () async throws -> ByteBuffer?

        fileprivate init(outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, next: @escaping () async throws -> ByteBuffer?) {
            self.outbound = outbound
            self.nextFrame = next
        }

        /// Calls a method and returns the reply's parameters.
        ///
        /// - Throws: ``VarlinkError`` for an error reply, ``ClientError`` otherwise.
        public func call(_ method: String, _ parameters: [String: JSONValue] = [:]) async throws -> [String: JSONValue] {
            try await send(VarlinkCall(method: method, parameters: parameters))
            let reply = try await nextReply()
            if let error = reply.error { throw VarlinkError(error, reply.parameters) }
            return reply.parameters
        }

        /// Calls a method with `more` and hands every reply to `onReply`; returns the last one.
        public func callMore(_ method: String, _ parameters: [String: JSONValue] = [:],
                             onReply: ([String: JSONValue]) throws -> Void) async throws -> [String: JSONValue] {
            try await send(VarlinkCall(method: method, parameters: parameters, more: true))
            while true {
                let reply = try await nextReply()
                if let error = reply.error { throw VarlinkError(error, reply.parameters) }
                try onReply(reply.parameters)
                if !reply.continues { return reply.parameters }
            }
        }

        /// Sends a call without waiting for its reply (`oneway`, or before reading replies).
        public func send(_ call: VarlinkCall) async throws {
            try await sendRaw(Array(call.encoded()))
        }

        /// Sends bytes as one message (a NUL is appended).
        public func sendRaw(_ bytes: [UInt8]) async throws {
            try await outbound.write(ByteBuffer(bytes: bytes))
        }

        /// The next reply; ``ClientError/connectionClosed`` at end of stream.
        public func nextReply() async throws -> VarlinkReply {
            guard let frame = try await nextFrame() else { throw ClientError.connectionClosed }
            do {
                return try VarlinkReply.parse(Data(frame.readableBytesView))
            } catch {
                throw ClientError.badReply(error.reason)
            }
        }
    }
}
