import Foundation
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// Serves Varlink on one listening Unix socket: bound by the daemon (removing a stale socket
/// file first) or passed by systemd.
///
/// Every connection is admitted or refused the moment it is accepted, on the event loop,
/// before it holds anything: the peer's kernel credentials (``PeerCredentials``) are checked
/// against the socket's ``PeerAuthorization``, then a connection slot is taken (at most
/// `limits.max_connections`). A refused peer gets `NotAuthorized`, `TooManyConnections` or
/// `ShuttingDown` from a ``RefusedConnectionHandler`` and is closed. An admitted connection
/// is framed by NUL with a size limit, must complete each message within
/// `limits.message_timeout` (``MessageDeadlineHandler``), is disconnected when silent for
/// `limits.idle_timeout`, and has its calls run in order, one at a time.
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

    /// What the child-channel initializer hands over: an admitted connection, or one that a
    /// ``RefusedConnectionHandler`` is turning away.
    enum Incoming: Sendable {
        case admitted(AcceptedConnection)
        case refused
    }

    typealias Listener = NIOAsyncChannel<Incoming, Never>

    /// How long a refused peer may take to send its first message before it is told anyway.
    static let refusalGrace: Duration = .seconds(1)

    /// Refused connections being told why at once; past that, refused connections are
    /// closed without a reply.
    static func maxRefusing(_ limits: Limits) -> Int { max(64, limits.maxConnections) }

    private enum State {
        case idle
        case listening(Channel)
        case draining
    }

    private struct Shared {
        var state = State.idle
        /// Admitted connections not yet ended (slots in use).
        var slots = 0
        var connections: [ObjectIdentifier: AcceptedConnection] = [:]
        /// Refused connections still being told why.
        var refusing = 0
    }

    private enum Admission {
        case admit
        case refuse(VarlinkError, reason: String)
        /// Too many refusals in progress: close without a word.
        case drop
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
        let initializer: @Sendable (Channel) -> EventLoopFuture<Incoming> = { [self] channel in
            channel.eventLoop.makeCompletedFuture { try self.initialize(channel) }
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

    /// Admits or refuses a freshly accepted connection (on its event loop) and builds its
    /// pipeline accordingly.
    private func initialize(_ channel: Channel) throws -> Incoming {
        let peer = PeerCredentials.identity(of: channel)
        switch admit(peer) {
        case .admit:
            do {
                return .admitted(try admittedPipeline(channel, peer: peer))
            } catch {
                shared.withLock { $0.slots -= 1 }
                throw error
            }
        case .refuse(let error, let reason):
            logger.notice("\(reason)", metadata: ["strata.peer": "\(peer.map(\.description) ?? "unknown")", "strata.error": "\(error.name)"])
            let grace = min(Self.refusalGrace, configuration.limits.idleTimeout)
            do {
                try channel.pipeline.syncOperations.addHandler(RefusedConnectionHandler(error: error, grace: grace) { [self] in
                    shared.withLock { $0.refusing -= 1 }
                })
            } catch {
                shared.withLock { $0.refusing -= 1 }
                throw error
            }
            return .refused
        case .drop:
            channel.close(promise: nil)
            return .refused
        }
    }

    /// The pipeline of an admitted connection, wrapped for its task.
    private func admittedPipeline(_ channel: Channel, peer: PeerIdentity?) throws -> AcceptedConnection {
        let limits = configuration.limits
        let activity = ConnectionActivity()
        try channel.pipeline.syncOperations.addHandlers([
            IdleStateHandler(readTimeout: TimeAmount(clamping: limits.idleTimeout)),
            StallTimeoutHandler(activity: activity, logger: logger, peer: peer),
            MessageDeadlineHandler(timeout: limits.messageTimeout, logger: logger, peer: peer),
            ByteToMessageHandler(NULFrameDecoder(maxSize: limits.maxMessageSize)),
            MessageToByteHandler(NULFrameEncoder()),
        ])
        // At most two decoded messages wait for the connection's task (calls run one at a
        // time); past that NIO stops reading and the kernel's buffer pushes back.
        let async = try NIOAsyncChannel<ByteBuffer, ByteBuffer>(
            wrappingChannelSynchronously: channel,
            configuration: .init(backPressureStrategy: .init(lowWatermark: 1, highWatermark: 2)))
        return AcceptedConnection(channel: async, peer: peer, activity: activity, socket: configuration.name)
    }

    private func admit(_ peer: PeerIdentity?) -> Admission {
        let limits = configuration.limits
        let authorized = configuration.authorization.permits(peer)
        return shared.withLock { shared -> Admission in
            let verdict: Admission
            if case .draining = shared.state {
                verdict = .refuse(.shuttingDown(), reason: "connection refused: stopping")
            } else if !authorized {
                verdict = .refuse(.notAuthorized(uid: peer?.uid ?? UInt32.max, socket: configuration.name), reason: "refused peer")
            } else if shared.slots >= limits.maxConnections {
                verdict = .refuse(.tooManyConnections(limit: limits.maxConnections, socket: configuration.name),
                                  reason: "connection refused: too many connections")
            } else {
                shared.slots += 1
                return .admit
            }
            // Refusals being told are bounded too: past the limit, close without a reply.
            guard shared.refusing < Self.maxRefusing(limits) else { return .drop }
            shared.refusing += 1
            return verdict
        }
    }

    // MARK: - Serving

    /// Accepts connections until ``beginDrain()``; returns when every connection has ended.
    /// Every admitted connection is run (and so closed) here, even while draining.
    func serve(_ listener: Listener) async {
        do {
            try await listener.executeThenClose { inbound in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await incoming in inbound {
                        guard case .admitted(let connection) = incoming else { continue }
                        let draining = shared.withLock { shared -> Bool in
                            shared.connections[ObjectIdentifier(connection.activity)] = connection
                            if case .draining = shared.state { return true }
                            return false
                        }
                        if draining, connection.activity.drainIfIdle() { connection.channel.channel.close(promise: nil) }
                        group.addTask {
                            await self.handle(connection)
                            self.shared.withLock { shared in
                                shared.connections.removeValue(forKey: ObjectIdentifier(connection.activity))
                                shared.slots -= 1
                            }
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

    /// The number of open client connections (admitted ones: the slots in use).
    public var connectionCount: Int { shared.withLock { $0.slots } }

    private func handle(_ connection: AcceptedConnection) async {
        let context = VarlinkCallContext(socket: configuration.name, peer: connection.peer, logger: logger)
        let peer = connection.peer.map(\.description) ?? "?"
        do {
            try await connection.channel.executeThenClose { inbound, outbound in
                let send: @Sendable (VarlinkReply) async throws -> Void = { reply in
                    try await outbound.write(ByteBuffer(bytes: reply.encoded()))
                }
                do {
                    for try await frame in inbound {
                        guard connection.activity.begin() else {
                            try await send(VarlinkReply(.shuttingDown()))
                            return
                        }
                        let reply: VarlinkReply?
                        do {
                            let call = try VarlinkCall.parse(Data(frame.readableBytesView))
                            reply = await configuration.dispatcher.dispatch(call, context: context, send: send)
                        } catch let error as VarlinkError {
                            logger.notice("malformed message", metadata: ["strata.peer": "\(peer)", "strata.reason": "\(error.reason)"])
                            reply = VarlinkReply(error)
                        }
                        if let reply { try await send(reply) }
                        if connection.activity.end() { return }
                    }
                } catch let error as VarlinkFrameError {
                    guard case .tooLarge(let limit) = error else { return }
                    logger.notice("message too large, disconnecting", metadata: ["strata.peer": "\(peer)", "strata.limit": "\(limit)"])
                    try? await send(VarlinkReply(.messageTooLarge(limit: limit)))
                }
            }
        } catch {
            logger.debug("connection ended with an error", metadata: ["strata.error": "\(error)"])
        }
    }
}

/// An admitted connection as the child-channel initializer hands it over.
struct AcceptedConnection: Sendable {
    let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
    let peer: PeerIdentity?
    let activity: ConnectionActivity
    let socket: String
}
