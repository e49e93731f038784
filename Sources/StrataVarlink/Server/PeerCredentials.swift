import NIOCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Reads a connected Unix socket's peer credentials from the kernel: `SO_PEERCRED` (pid,
/// uid, gid) and `SO_PEERGROUPS` (supplementary groups, Linux 4.13+), through NIO's socket
/// option access. Call on the channel's event loop (the futures then complete at once).
enum PeerCredentials {
    /// Layout-compatible with `struct ucred` (pid_t, uid_t, gid_t) for SO_PEERCRED.
    struct UCred: Sendable {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
    }

    /// The most supplementary groups read; a peer with more gets `supplementaryGroups: nil`
    /// (only its user and primary group are matched).
    static let maxGroups = 1024

    /// The peer of `channel`, nil when its credentials cannot be read.
    static func identity(of channel: Channel) -> PeerIdentity? {
        guard let provider = channel as? SocketOptionProvider else { return nil }
        guard let credentials: UCred = read(provider, SO_PEERCRED) else { return nil }
        return PeerIdentity(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid,
                            supplementaryGroups: supplementaryGroups(provider))
    }

    // MARK: - SO_PEERGROUPS

    /// 16, 256 and 1024 gid_t: fixed-size buffers for getsockopt through NIO.
    typealias Gids16 = (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32,
                        UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)
    typealias Gids256 = (Gids16, Gids16, Gids16, Gids16, Gids16, Gids16, Gids16, Gids16,
                         Gids16, Gids16, Gids16, Gids16, Gids16, Gids16, Gids16, Gids16)
    struct Gids1024: Sendable {
        var storage: (Gids256, Gids256, Gids256, Gids256)
    }
    /// A zero-length buffer: getsockopt succeeds only when the peer has no supplementary group.
    struct NoGids: Sendable {}

    /// The peer's supplementary groups. NIO hides getsockopt's returned length, so the list
    /// is decoded from a zero-filled buffer: the kernel keeps a process's groups sorted
    /// (`groups_sort`), so zeros after the first non-zero entry are padding, and a leading
    /// zero is the root group. A probe with a zero-length buffer tells "no groups" from "only
    /// group 0". Any doubt drops group 0 (a refusal, never an acceptance).
    static func supplementaryGroups(_ provider: SocketOptionProvider) -> [UInt32]? {
        if let _: NoGids = read(provider, SO_PEERGROUPS) { return [] }
        guard let buffer: Gids1024 = read(provider, SO_PEERGROUPS) else { return nil }
        let raw = withUnsafeBytes(of: buffer) { Array($0.bindMemory(to: UInt32.self)) }
        guard let firstNonZero = raw.firstIndex(where: { $0 != 0 }) else { return [0] }
        let run = raw[firstNonZero...].prefix { $0 != 0 }
        let padding = raw[(firstNonZero + run.count)...]
        guard zip(run, run.dropFirst()).allSatisfy({ $0 <= $1 }), padding.allSatisfy({ $0 == 0 }) else {
            return raw.filter { $0 != 0 }
        }
        return (firstNonZero > 0 ? [0] : []) + run
    }

    private static func read<Value: Sendable>(_ provider: SocketOptionProvider, _ option: Int32) -> Value? {
        let future: EventLoopFuture<Value> = provider.unsafeGetSocketOption(level: .socket, name: NIOBSDSocket.Option(rawValue: option))
        // On the channel's event loop the future is already complete: the callback runs now.
        let result = Mutex<Value?>(nil)
        future.whenSuccess { value in result.withLock { $0 = value } }
        return result.withLock { $0 }
    }
}
