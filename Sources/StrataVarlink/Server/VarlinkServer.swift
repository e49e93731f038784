import Foundation
import Logging
import NIOCore
import NIOExtras
import NIOPosix
import Synchronization

/// Serves Varlink on one listening Unix socket: bound here (removing a stale socket file
/// first) or passed by systemd.
///
/// Every connection is admitted or refused the moment it is accepted, on the event loop,
/// before it holds anything: the peer's kernel credentials (``PeerCredentials``) are checked
/// against the socket's ``PeerAuthorization``, then a connection slot is taken (at most
/// ``Limits/maxConnections``). A refused peer gets `NotAuthorized`, `TooManyConnections` or
/// `ShuttingDown` from a ``RefusedConnectionHandler`` and is closed. An admitted connection
/// is framed by NUL with a size limit, must complete each message within
/// ``Limits/messageTimeout`` (``MessageDeadlineHandler``), is disconnected when silent for
/// ``Limits/idleTimeout``, and has its calls run in order, one at a time.
///
/// Its life: ``bind()`` (``State/listening``), ``serve()`` until ``quiesce()`` — NIOExtras'
/// `ServerQuiescingHelper` closes the listener and tells every connection, which closes when
/// idle or after its running call has written its last reply (``State/quiescing``) — and
/// every connection has ended (``State/stopped``). A call counts as running until its final
/// reply is written to the socket, so the drain never closes a connection with a reply still
/// on its way. ``closeAll()`` ends the connections still open at a deadline.
public final class VarlinkServer: Sendable {
    /// Where the listening socket comes from.
    public enum Source: Sendable, Hashable {
        /// Bind this path (mode applied after binding).
        case path(String, mode: UInt16)
        /// A listening socket passed by systemd (socket activation).
        case descriptor(CInt)
    }

    /// The protocol limits that protect the server from misbehaving clients.
    public struct Limits: Sendable, Hashable {
        /// Largest accepted message in bytes; a larger one gets `MessageTooLarge` and a disconnect.
        public var maxMessageSize: Int
        /// A client that sends nothing for this long (while none of its calls runs) is disconnected.
        public var idleTimeout: Duration
        /// A message must be complete within this long of its first byte (`MessageTimeout`).
        public var messageTimeout: Duration
        /// Most admitted connections at once (refused peers never hold a slot).
        public var maxConnections: Int
        /// Deepest nesting of arrays and objects in a message (`LimitExceeded`).
        public var maxJSONDepth: Int

        /// Memberwise initializer.
        public init(maxMessageSize: Int = 1 << 20, idleTimeout: Duration = .seconds(60), messageTimeout: Duration = .seconds(10),
                    maxConnections: Int = 256, maxJSONDepth: Int = VarlinkCall.defaultMaxDepth) {
            self.maxMessageSize = maxMessageSize
            self.idleTimeout = idleTimeout
            self.messageTimeout = messageTimeout
            self.maxConnections = maxConnections
            self.maxJSONDepth = maxJSONDepth
        }
    }

    /// What the server listens on and how much it accepts.
    public struct Configuration: Sendable {
        /// `admin` or `data`, for logs and errors.
        public var name: String
        /// Where the listening socket comes from: a path to bind, or one inherited from systemd.
        public var source: Source
        /// Who may connect.
        public var authorization: PeerAuthorization
        /// The dispatcher that routes calls to interfaces.
        public var dispatcher: VarlinkDispatcher
        /// Bounds on input from outside.
        public var limits: Limits

        /// Memberwise initializer.
        public init(name: String, source: Source, authorization: PeerAuthorization, dispatcher: VarlinkDispatcher, limits: Limits) {
            self.name = name
            self.source = source
            self.authorization = authorization
            self.dispatcher = dispatcher
            self.limits = limits
        }
    }

    /// Where the server is in its life.
    public enum State: Sendable, Hashable {
        /// Created; nothing bound yet.
        case idle
        /// Bound (or adopted); accepting once ``serve()`` runs.
        case listening
        /// No longer accepting; connections close when idle or after their running call.
        case quiescing
        /// ``serve()`` returned: every connection has ended.
        case stopped
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

    private struct Shared {
        var state = State.idle
        var listener: Listener?
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

    /// What the server listens on and how much it accepts.
    public let configuration: Configuration
    private let logger: Logger
    private let group: any EventLoopGroup
    private let quiescing: ServerQuiescingHelper
    private let shared = Mutex(Shared())

    /// Memberwise initializer.
    public init(configuration: Configuration, logger: Logger, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: "strata.socket"] = "\(configuration.name)"
        self.logger = logger
        self.group = group
        self.quiescing = ServerQuiescingHelper(group: group)
    }

    /// The state, in words (see the interface definition for the values).
    public var state: State { shared.withLock { $0.state } }

    /// The number of open client connections (admitted ones: the slots in use).
    public var connectionCount: Int { shared.withLock { $0.slots } }

    /// Calls running now on the admitted connections (a call runs until its final reply is
    /// written to the socket).
    var runningCalls: Int {
        shared.withLock { shared in shared.connections.values.filter { $0.activity.isBusy }.count }
    }

    // MARK: - Binding

    /// Binds (or adopts) the listening socket. Call once, then ``serve()``.
    public func bind() async throws {
        let quiescing = self.quiescing
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 128)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(quiescing.makeServerChannelHandler(channel: channel))
                }
            }
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
            shared.state = .listening
            shared.listener = listener
            return true
        }
        if !adopted { listener.channel.close(promise: nil) }
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
            ConnectionQuiescingHandler(activity: activity),
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
        // The peer's close ends the connection's calls at once (an observer gives its slot back
        // without waiting for the next commit to find the socket gone).
        let ending = VarlinkCallEnding()
        channel.closeFuture.whenComplete { _ in ending.fire(.peerClosed) }
        return AcceptedConnection(channel: async, peer: peer, activity: activity, socket: configuration.name, ending: ending)
    }

    private func admit(_ peer: PeerIdentity?) -> Admission {
        let limits = configuration.limits
        let authorized = configuration.authorization.permits(peer)
        return shared.withLock { shared -> Admission in
            let verdict: Admission
            // (A connection may come before bind() has returned: the socket listens already.)
            if shared.state == .quiescing || shared.state == .stopped {
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

    /// Accepts connections until ``quiesce()``; returns when every connection has ended.
    /// Every admitted connection is run (and so closed) here, even while quiescing.
    public func serve() async {
        guard let listener = shared.withLock({ $0.listener }) else { return }
        do {
            try await listener.executeThenClose { inbound in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await incoming in inbound {
                        guard case .admitted(let connection) = incoming else { continue }
                        shared.withLock { $0.connections[ObjectIdentifier(connection.activity)] = connection }
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
        shared.withLock {
            $0.state = .stopped
            $0.listener = nil
        }
    }

    /// Stops accepting and tells every connection: an idle one closes now, a busy one after
    /// its running call. ``serve()`` returns once all have closed.
    public func quiesce() {
        let listening = shared.withLock { shared -> Bool in
            guard shared.state == .listening || shared.state == .idle else { return false }
            shared.state = .quiescing
            return true
        }
        guard listening else { return }
        quiescing.initiateShutdown(promise: nil)
        // Calls that wait for something to send (observers) end now, with a final reply.
        for connection in shared.withLock({ Array($0.connections.values) }) { connection.ending.fire(.shutdown) }
    }

    /// Closes every connection now (at the shutdown deadline).
    public func closeAll() {
        let connections = shared.withLock { Array($0.connections.values) }
        for connection in connections { connection.channel.channel.close(promise: nil) }
    }

    private func handle(_ connection: AcceptedConnection) async {
        let closing = connection.channel.channel
        let context = VarlinkCallContext(socket: configuration.name, peer: connection.peer, logger: logger,
                                         closeConnection: { closing.close(promise: nil) },
                                         connection: VarlinkCallContext.nextConnectionNumber(), connectionOpen: { closing.isActive },
                                         ending: connection.ending)
        let peer = connection.peer.map(\.description) ?? "?"
        let maxDepth = configuration.limits.maxJSONDepth
        do {
            let channel = connection.channel.channel
            try await connection.channel.executeThenClose { inbound, _ in
                // An intermediate reply of a `more` call (and the replies that end a connection)
                // is written through the channel and awaited until its bytes are in the socket.
                // Replies are never written through NIOAsyncChannel's writer, which returns as
                // soon as a reply is queued for the event loop: a quiesce event queued there
                // before it then found the connection idle and closed it, and the reply was
                // lost. A call counts as running until its final reply is out (below).
                let send: @Sendable (VarlinkReply) async throws -> Void = { reply in
                    try await channel.writeAndFlush(ByteBuffer(bytes: reply.encoded())).get()
                }
                // A streamed reply to many connections (an observer's): queued without a wait
                // for the socket while the channel is writable (below its high-water mark), so
                // the caller does not wait for the event loop's round trip; awaited otherwise,
                // so a client that does not read holds back its sender. The call's final reply
                // still goes through `send`, after these (the event loop keeps their order).
                let sendEagerly: @Sendable (VarlinkReply) async throws -> Void = { reply in
                    guard channel.isActive else { throw ChannelError.ioOnClosedChannel }
                    let buffer = ByteBuffer(bytes: reply.encoded())
                    if channel.isWritable {
                        channel.writeAndFlush(buffer, promise: nil)
                    } else {
                        try await channel.writeAndFlush(buffer).get()
                    }
                }
                // Queued only if the connection takes writes now, from whichever thread; never waits.
                let sendNow: @Sendable (VarlinkReply) -> Bool = { reply in
                    guard channel.isActive, channel.isWritable else { return false }
                    channel.writeAndFlush(ByteBuffer(bytes: reply.encoded()), promise: nil)
                    return true
                }
                // A call's final reply is queued for the socket without waiting for the event
                // loop's round trip while the channel is writable, and the task goes on to the
                // next message: the call ends (``ConnectionActivity/end()``) when the write
                // completes, on the event loop, which closes a draining connection there once
                // its last call has ended. When the channel is not writable the write is
                // awaited (a client that does not read holds back its own calls), and the
                // last one is awaited before the task ends, so the connection never closes
                // with a reply on its way.
                let activity = connection.activity
                var lastReply: EventLoopFuture<Void>?
                func reply(_ reply: VarlinkReply) async throws {
                    let promise = channel.eventLoop.makePromise(of: Void.self)
                    channel.writeAndFlush(ByteBuffer(bytes: reply.encoded()), promise: promise)
                    let written = promise.futureResult
                    written.whenComplete { _ in
                        if activity.end() { channel.close(promise: nil) }
                    }
                    if channel.isWritable {
                        lastReply = written
                    } else {
                        lastReply = nil
                        try await written.get()
                    }
                }
                var failure: (any Error)?
                do {
                    for try await frame in inbound {
                        guard activity.begin() else {
                            try await send(VarlinkReply(.shuttingDown()))
                            return
                        }
                        let final: VarlinkReply?
                        do {
                            let call = try VarlinkCall.parse(Data(frame.readableBytesView), maxDepth: maxDepth)
                            final = await configuration.dispatcher.dispatch(call, context: context, sendEagerly: sendEagerly, sendNow: sendNow, send: send)
                        } catch let error as VarlinkError {
                            logger.notice("malformed message", metadata: ["strata.peer": "\(peer)", "strata.reason": "\(error.reason)"])
                            final = VarlinkReply(error)
                        }
                        if let final {
                            try await reply(final)
                        } else if activity.end() {
                            break   // a oneway call, and the connection drains
                        }
                    }
                } catch let error as VarlinkFrameError {
                    if case .tooLarge(let limit) = error {
                        logger.notice("message too large, disconnecting", metadata: ["strata.peer": "\(peer)", "strata.limit": "\(limit)"])
                        try? await send(VarlinkReply(.messageTooLarge(limit: limit)))   // after the replies still on their way
                    }
                } catch {
                    failure = error
                }
                // However the loop ended, the replies already queued go out before the
                // connection closes.
                try? await lastReply?.get()
                if let failure { throw failure }
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
    /// Fired at shutdown and when the peer closes (``VarlinkCallEnding``).
    let ending: VarlinkCallEnding
}
