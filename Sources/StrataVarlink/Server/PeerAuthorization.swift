import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Who may use a socket: the daemon's own user always, then the configured users and groups
/// (matched against the peer's own credentials, see ``PeerIdentity``).
public struct PeerAuthorization: Sendable, Hashable {
    /// User names allowed on the socket.
    public var users: Set<UInt32>
    /// Group names allowed on the socket.
    public var groups: Set<UInt32>
    /// Whether any peer may connect (file mode only).
    public var allowAnyPeer: Bool
    /// The daemon's own user id.
    public var ownUID: UInt32

    /// - Parameters:
    ///   - users: user ids accepted besides `ownUID`.
    ///   - groups: a peer whose primary or supplementary groups include one of these is accepted.
    ///   - allowAnyPeer: accept anyone who can open the socket file.
    public init(users: [UInt32] = [], groups: [UInt32] = [], allowAnyPeer: Bool = false, ownUID: UInt32 = getuid()) {
        self.users = Set(users)
        self.groups = Set(groups)
        self.allowAnyPeer = allowAnyPeer
        self.ownUID = ownUID
    }

    /// Whether `peer` is accepted; nil identity (credentials unreadable) is refused.
    public func permits(_ peer: PeerIdentity?) -> Bool {
        guard let peer else { return false }
        if peer.uid == ownUID || allowAnyPeer || users.contains(peer.uid) { return true }
        return !groups.isEmpty && !groups.isDisjoint(with: peer.groups)
    }
}
