import Foundation
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// Serves Varlink on one listening Unix socket: bound by the daemon (removing a stale socket
/// file first) or passed by systemd. Each connection is checked against the socket's
/// ``PeerAuthorization`` (SO_PEERCRED), framed by NUL with a size limit, and disconnected
/// when it stalls. Calls on one connection run in order; connections run concurrently.
public final class VarlinkServer: Sendable {
    /// Where the listening socket comes from.
    public enum Source: Sendable, Hashable {
        /// Bind this path (mode applied after binding).
        case path(String, mode: UInt16)
        /// A listening socket passed by systemd (socket activation).
        case descriptor(CInt)
    }

    public struct Configuration: Sendable {
        /// `admin` or `data`, for logs and errors.
        public var name: String
        public var source: Source
        public var authorization: PeerAuthorization
        public var dispatcher: VarlinkDispatcher
        public var limits: Limits

        public init(name: String, source: Source, authorization: PeerAuthorization, dispatcher: VarlinkDispatcher, limits: Limits) {
            self.name = name
            self.source = source
            self.authorization = authorization
            self.dispatcher = dispatcher
            self.limits = limits
        }
    }

    typealias Listener = NIOAsyncChannel<AcceptedConnection, Never>

    private enum State {
        case idle
        case listening(Channel)
        case draining
    }

    private struct Shared {
        var state = State.idle
        var connections: [ObjectIdentifier: AcceptedConnection] = [:]
    }

    public let configuration: Configuration
    private let logger: Logger
    private let group: any EventLoopGroup
    private let shared = Mutex(Shared())

    public init(configuration: Configuration, logger: Logger, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: "strata.socket"] = "\(configuration.name)"
        self.logger = logger
        self.group = group
    }

    // MARK: - Binding

    /// Binds (or adopts) the listening socket. Call once, then ``serve(_:)``.
    func bind() async throws -> Listener {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 128)
        let limits = configuration.limits
        let name = configuration.name
        let logger = self.logger
        let initializer: @Sendable (Channel) -> EventLoopFuture<AcceptedConnection> = { channel in
            channel.eventLoop.makeCompletedFuture {
                let activity = ConnectionActivity()
                let peer = Self.peerIdentity(of: channel)
                try channel.pipeline.syncOperations.addHandlers([
                    IdleStateHandler(readTimeout: TimeAmount.nanoseconds(Int64(limits.idleTimeout.seconds * 1e9))),
                    StallTimeoutHandler(activity: activity, logger: logger, peer: peer),
                    ByteToMessageHandler(NULFrameDecoder(maxSize: limits.maxMessageSize)),
                    MessageToByteHandler(NULFrameEncoder()),
                ])
                let async = try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                return AcceptedConnection(channel: async, peer: peer, activity: activity, socket: name)
            }
        }
        let listener: Listener
        switch configuration.source {
        case .path(let path, let mode):
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            listener = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true, childChannelInitializer: initializer)
            if chmod(path, mode_t(mode)) != 0 {
                logger.warning("cannot set the socket's mode", metadata: ["strata.path": "\(path)", "strata.errno": "\(errno)"])
            }
            logger.info("listening", metadata: ["strata.path": "\(path)", "strata.mode": "\(String(mode, radix: 8))"])
        case .descriptor(let fd):
            listener = try await bootstrap.bind(fd, childChannelInitializer: initializer)
            logger.info("listening on a socket passed by systemd", metadata: ["strata.fd": "\(fd)"])
        }
        let adopted = shared.withLock { shared -> Bool in
            guard case .idle = shared.state else { return false }
            shared.state = .listening(listener.channel)
            return true
        }
        if !adopted { listener.channel.close(promise: nil) }
        return listener
    }

    private static func peerIdentity(of channel: Channel) -> PeerIdentity? {
        guard let provider = channel as? SocketOptionProvider else { return nil }
        let future: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: .socket, name: NIOBSDSocket.Option(rawValue: SO_PEERCRED))
        // Already on the channel's event loop: the future is completed synchronously.
        let result = Mutex<PeerIdentity?>(nil)
        future.whenSuccess { credentials in result.withLock { $0 = PeerIdentity(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid) } }
        return result.withLock { $0 }
    }

    // MARK: - Serving

    /// Accepts connections until ``beginDrain()``; returns when every connection has ended.
    func serve(_ listener: Listener) async {
        do {
            try await listener.executeThenClose { inbound in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await connection in inbound {
                        let accepted = shared.withLock { shared -> Bool in
                            guard case .listening = shared.state, shared.connections.count < configuration.limits.maxConnections else { return false }
                            shared.connections[ObjectIdentifier(connection.activity)] = connection
                            return true
                        }
                        guard accepted else {
                            logger.warning("connection refused: draining or too many connections", metadata: ["strata.peer": "\(connection.peer.map(\.description) ?? "?")"])
                            connection.channel.channel.close(promise: nil)
                            continue
                        }
                        group.addTask {
                            await self.handle(connection)
                            _ = self.shared.withLock { $0.connections.removeValue(forKey: ObjectIdentifier(connection.activity)) }
                        }
                    }
                }
            }
        } catch {
            logger.error("the listener failed", metadata: ["strata.error": "\(error)"])
        }
    }

    /// Stops accepting, closes idle connections, and lets each busy connection finish its
    /// current call before closing.
    public func beginDrain() {
        let (listener, connections) = shared.withLock { shared -> (Channel?, [AcceptedConnection]) in
            var listener: Channel?
            if case .listening(let channel) = shared.state { listener = channel }
            shared.state = .draining
            return (listener, Array(shared.connections.values))
        }
        listener?.close(promise: nil)
        for connection in connections where connection.activity.drainIfIdle() {
            connection.channel.channel.close(promise: nil)
        }
    }

    /// Closes every connection now (after the drain timeout).
    public func closeAll() {
        let connections = shared.withLock { Array($0.connections.values) }
        for connection in connections { connection.channel.channel.close(promise: nil) }
    }

    /// The number of open client connections.
    public var connectionCount: Int { shared.withLock { $0.connections.count } }

    private func handle(_ connection: AcceptedConnection) async {
        let context = VarlinkCallContext(socket: configuration.name, peer: connection.peer, logger: logger)
        let authorized = configuration.authorization.permits(connection.peer)
        do {
            try await connection.channel.executeThenClose { inbound, outbound in
                let send: @Sendable (VarlinkReply) async throws -> Void = { reply in
                    try await outbound.write(ByteBuffer(bytes: reply.encoded()))
                }
                do {
                    for try await frame in inbound {
                        guard authorized else {
                            logger.warning("refused peer", metadata: ["strata.peer": "\(connection.peer.map(\.description) ?? "unknown")"])
                            try await send(VarlinkReply(.notAuthorized(uid: connection.peer?.uid ?? UInt32.max, socket: configuration.name)))
                            return
                        }
                        guard connection.activity.begin() else {
                            try await send(VarlinkReply(.shuttingDown()))
                            return
                        }
                        let reply: VarlinkReply?
                        do {
                            let call = try VarlinkCall.parse(Data(frame.readableBytesView))
                            reply = await configuration.dispatcher.dispatch(call, context: context, send: send)
                        } catch let error as VarlinkError {
                            logger.notice("malformed message", metadata: ["strata.peer": "\(connection.peer.map(\.description) ?? "?")", "strata.reason": "\(error.reason)"])
                            reply = VarlinkReply(error)
                        }
                        if let reply { try await send(reply) }
                        if connection.activity.end() { return }
                    }
                } catch let error as VarlinkFrameError {
                    guard case .tooLarge(let limit) = error else { return }
                    logger.notice("message too large, disconnecting", metadata: ["strata.peer": "\(connection.peer.map(\.description) ?? "?")", "strata.limit": "\(limit)"])
                    try? await send(VarlinkReply(.messageTooLarge(limit: limit)))
                }
            }
        } catch {
            logger.debug("connection ended with an error", metadata: ["strata.error": "\(error)"])
        }
    }
}

/// The accepted connection as the child-channel initializer hands it over.
struct AcceptedConnection: Sendable {
    let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
    let peer: PeerIdentity?
    let activity: ConnectionActivity
    let socket: String
}

/// Layout-compatible with `struct ucred` (pid_t, uid_t, gid_t) for SO_PEERCRED.
struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}
