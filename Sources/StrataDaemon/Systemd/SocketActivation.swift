import CSystemd
import Foundation

/// Listening sockets passed by systemd (`sd_listen_fds_with_names(3)`), by their
/// `FileDescriptorName=` (`admin`, `data`).
public struct SocketActivation: Sendable {
    /// Descriptor by name; unnamed sockets are called `unknown` by systemd.
    public let descriptors: [String: CInt]

    /// Reads (and unsets) `LISTEN_FDS` / `LISTEN_FDNAMES`. Empty when not socket-activated.
    public static func fromEnvironment() -> SocketActivation {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = sd_listen_fds_with_names(1, &names)
        guard count > 0 else { return SocketActivation(descriptors: [:]) }
        defer { CSystemd_freeNames(names, count) }
        var result: [String: CInt] = [:]
        for index in 0..<Int(count) {
            let fd = CSystemd_listenFDsStart() + CInt(index)
            let name = names?[index].map { String(cString: $0) } ?? "unknown"
            if sd_is_socket_unix(fd, CInt(SOCK_STREAM.rawValue), 1, nil, 0) > 0 {
                result[name] = fd
            }
        }
        return SocketActivation(descriptors: result)
    }

    /// Memberwise initializer.
    public init(descriptors: [String: CInt]) {
        self.descriptors = descriptors
    }
}
