import Foundation
import StrataVarlink

/// A listening socket and who may talk to it.
public struct SocketConfiguration: Sendable, Hashable {
    /// The socket file (ignored when systemd passes the socket).
    public var path: String
    /// File mode of a socket the daemon binds itself.
    public var mode: UInt16
    /// Peers accepted besides the daemon's own user: user ids resolved from names or numbers.
    public var users: [UInt32]
    /// Peers whose primary or supplementary groups include one of these are accepted.
    public var groups: [UInt32]
    /// When true (and both lists are empty) any peer that can open the socket file is accepted.
    public var allowAnyPeer: Bool

    /// Memberwise initializer.
    public init(path: String, mode: UInt16, users: [UInt32] = [], groups: [UInt32] = [], allowAnyPeer: Bool = false) {
        self.path = path
        self.mode = mode
        self.users = users
        self.groups = groups
        self.allowAnyPeer = allowAnyPeer
    }

    /// `/run/strata/admin.sock`, mode 0660.
    public static let defaultAdmin = SocketConfiguration(path: "/run/strata/admin.sock", mode: 0o660, users: [0])
    /// `/run/strata/data.sock`, mode 0660.
    public static let defaultData = SocketConfiguration(path: "/run/strata/data.sock", mode: 0o660, users: [0])
}
