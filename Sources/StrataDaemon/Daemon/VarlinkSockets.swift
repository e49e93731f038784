import Foundation
import Logging
import StrataVarlink

/// The daemon's two Varlink servers as its configuration describes them: `admin`
/// (`io.strata.Admin` and `io.strata.Store`) and `data` (`io.strata.Store`), each on a socket
/// passed by systemd (`FileDescriptorName=`) or bound at its configured path.
enum VarlinkSockets {
    static func servers(_ configuration: DaemonConfiguration, activation: SocketActivation, admin: AdminInterface,
                        store: StoreInterface, logger: Logger) -> [VarlinkServer] {
        let info = VarlinkDispatcher.ServiceInfo(version: StrataDaemonVersion.string)
        func source(_ name: String, _ socket: SocketConfiguration) -> VarlinkServer.Source {
            activation.descriptors[name].map { .descriptor($0) } ?? .path(socket.path, mode: socket.mode)
        }
        return [
            VarlinkServer(configuration: .init(
                name: "admin", source: source("admin", configuration.adminSocket), authorization: PeerAuthorization(configuration.adminSocket),
                dispatcher: VarlinkDispatcher(interfaces: [admin, store], info: info), limits: configuration.limits.varlink), logger: logger),
            VarlinkServer(configuration: .init(
                name: "data", source: source("data", configuration.dataSocket), authorization: PeerAuthorization(configuration.dataSocket),
                dispatcher: VarlinkDispatcher(interfaces: [store], info: info), limits: configuration.limits.varlink), logger: logger),
        ]
    }
}

extension PeerAuthorization {
    /// Who may use `socket`: its users and groups, or anyone with `allow_any_peer`.
    public init(_ socket: SocketConfiguration, ownUID: UInt32 = getuid()) {
        self.init(users: socket.users, groups: socket.groups, allowAnyPeer: socket.allowAnyPeer, ownUID: ownUID)
    }
}

extension Limits {
    /// The limits a Varlink server enforces.
    public var varlink: VarlinkServer.Limits {
        VarlinkServer.Limits(maxMessageSize: maxMessageSize, idleTimeout: idleTimeout, messageTimeout: messageTimeout,
                             maxConnections: maxConnections, maxJSONDepth: Self.maxJSONDepth)
    }
}
