import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The credentials of a connected peer as the kernel recorded them when it connected:
/// process, user and primary group (`SO_PEERCRED`) and supplementary groups
/// (`SO_PEERGROUPS`). Nothing here comes from the user or group database: a process that
/// dropped a group does not have it, and one given a group (`setgroups`, `newgrp`,
/// `SupplementaryGroups=`) has it whatever `/etc/group` says.
public struct PeerIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The daemon's process id.
    public var pid: Int32
    /// The peer's user id.
    public var uid: UInt32
    /// The peer's group id.
    public var gid: UInt32
    /// The peer's supplementary groups; nil when the kernel could not tell (then only the
    /// primary group counts, and group authorization is refused for the others).
    public var supplementaryGroups: [UInt32]?

    /// Memberwise initializer.
    public init(pid: Int32, uid: UInt32, gid: UInt32, supplementaryGroups: [UInt32]? = []) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.supplementaryGroups = supplementaryGroups
    }

    /// A description in words.
    public var description: String { "pid=\(pid) uid=\(uid) gid=\(gid)" }

    /// The peer's primary group and its supplementary groups, as the kernel recorded them.
    public var groups: Set<UInt32> { Set(supplementaryGroups ?? []).union([gid]) }

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
}
