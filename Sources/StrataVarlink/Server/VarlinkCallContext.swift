import Foundation
import Logging

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
    /// Fires when the call must end now: the server shuts down, or the peer closed the
    /// connection (``VarlinkCallEnding``). A `more` call that waits listens for it.
    public var ending: VarlinkCallEnding

    /// A context outside a connection (the fuzz targets and in-process callers).
    public init(socket: String, peer: PeerIdentity? = nil, logger: Logger, closeConnection: @escaping @Sendable () -> Void = {},
                ending: VarlinkCallEnding = VarlinkCallEnding()) {
        self.socket = socket
        self.peer = peer
        self.logger = logger
        self.closeConnection = closeConnection
        self.ending = ending
    }
}
