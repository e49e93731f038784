import Foundation
import Logging
import Synchronization

/// What a handler knows about the connection a call came in on.
public struct VarlinkCallContext: Sendable {
    /// `admin` or `data`.
    public var socket: String
    /// The peer's credentials.
    public var peer: PeerIdentity?
    /// Where it logs.
    public var logger: Logger
    /// Closes the connection the call came in on (a no-op outside one): for a streaming call
    /// whose client stopped reading (`ObserverOverflow`).
    public var closeConnection: @Sendable () -> Void
    /// The connection's number, unique in this process (0 outside a connection): which calls
    /// came in on one connection (stratad's `Clients`).
    public var connection: UInt64
    /// Whether the connection the call came in on is still open (true outside one).
    public var connectionOpen: @Sendable () -> Bool
    /// Fires when the call must end now: the server shuts down, or the peer closed the
    /// connection (``VarlinkCallEnding``). A `more` call that waits listens for it.
    public var ending: VarlinkCallEnding

    /// A context outside a connection (the fuzz targets and in-process callers).
    public init(socket: String, peer: PeerIdentity? = nil, logger: Logger, closeConnection: @escaping @Sendable () -> Void = {},
                connection: UInt64 = 0, connectionOpen: @escaping @Sendable () -> Bool = { true },
                ending: VarlinkCallEnding = VarlinkCallEnding()) {
        self.socket = socket
        self.peer = peer
        self.logger = logger
        self.closeConnection = closeConnection
        self.connection = connection
        self.connectionOpen = connectionOpen
        self.ending = ending
    }

    /// The next connection number (``connection``).
    static func nextConnectionNumber() -> UInt64 {
        connectionNumbers.add(1, ordering: .relaxed).newValue
    }
    private static let connectionNumbers = Atomic<UInt64>(0)
}
