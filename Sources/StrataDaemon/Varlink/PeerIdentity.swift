import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The credentials of a connected peer (SO_PEERCRED) and the user / group look-ups that
/// authorization needs.
public struct PeerIdentity: Sendable, Hashable, CustomStringConvertible {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    public var description: String { "pid=\(pid) uid=\(uid) gid=\(gid)" }

    /// A user id from a name or a number; nil for an unknown user.
    public static func userID(named name: String) -> UInt32? {
        if let number = UInt32(name) { return number }
        guard let entry = getpwnam(name) else { return nil }
        return entry.pointee.pw_uid
    }

    /// A group id from a name or a number; nil for an unknown group.
    public static func groupID(named name: String) -> UInt32? {
        if let number = UInt32(name) { return number }
        guard let entry = getgrnam(name) else { return nil }
        return entry.pointee.gr_gid
    }

    /// The peer's primary group and the supplementary groups of its user (from the group
    /// database; SO_PEERCRED carries only the primary group).
    public var groups: Set<UInt32> {
        var result: Set<UInt32> = [gid]
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return result }
        var count: Int32 = 64
        var list = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(name, gid, &list, &count) < 0 {
            list = [gid_t](repeating: 0, count: Int(count))
            _ = getgrouplist(name, gid, &list, &count)
        }
        result.formUnion(list.prefix(Int(max(0, count))))
        return result
    }
}

/// Who may use a socket: the daemon's own user always, then the configured users and groups.
public struct PeerAuthorization: Sendable, Hashable {
    public var users: Set<UInt32>
    public var groups: Set<UInt32>
    public var allowAnyPeer: Bool
    /// The daemon's own user id.
    public var ownUID: UInt32

    public init(_ socket: SocketConfiguration, ownUID: UInt32 = getuid()) {
        self.users = Set(socket.users)
        self.groups = Set(socket.groups)
        self.allowAnyPeer = socket.allowAnyPeer
        self.ownUID = ownUID
    }

    /// Whether `peer` is accepted; nil identity (credentials unreadable) is refused.
    public func permits(_ peer: PeerIdentity?) -> Bool {
        guard let peer else { return false }
        if peer.uid == ownUID || allowAnyPeer || users.contains(peer.uid) { return true }
        return !groups.isEmpty && !groups.isDisjoint(with: peer.groups)
    }
}
