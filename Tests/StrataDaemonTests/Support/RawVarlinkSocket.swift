import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// A Unix stream socket that speaks raw bytes, for tests that misbehave on purpose (many
/// connections, partial messages, trickled bytes) where ``VarlinkClient`` would not. Its
/// socket calls block, so each runs on a thread of its own (``offThread(_:)``).
final class RawVarlinkSocket: @unchecked Sendable {
    // @unchecked: wraps a socket descriptor; a test uses it from one writer and one reader at
    // most (the kernel serializes them), and only the reader touches `pending`.
    let fd: Int32
    private var pending: [UInt8] = []

    /// Connects; nil when the socket cannot be reached.
    static func connect(_ path: String, receiveTimeout: Duration = .seconds(10)) async -> RawVarlinkSocket? {
        await offThread { RawVarlinkSocket(path: path, receiveTimeout: receiveTimeout) }
    }

    private init?(path: String, receiveTimeout: Duration) {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            path.utf8CString.withUnsafeBytes { buffer.copyMemory(from: $0) }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        // No close here: a failable initializer that returns nil after every stored property
        // is set still runs `deinit`, which closes the descriptor. Closing it here too closed
        // it twice, and the second close could take a descriptor another test had just opened
        // under the same number (a store file read in `StoreFile.check` failed with EBADF).
        guard connected == 0 else { return nil }
        let seconds = receiveTimeout.components.seconds
        var timeout = timeval(tv_sec: Int(seconds), tv_usec: Int(receiveTimeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { Glibc.close(fd) }

    /// Writes bytes as they are (no terminator); false when the peer has gone (no SIGPIPE).
    @discardableResult
    func write(_ bytes: [UInt8]) async -> Bool {
        await offThread { bytes.withUnsafeBytes { send(self.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count }
    }

    /// Writes one call, NUL-terminated.
    @discardableResult
    func call(_ method: String, _ parameters: [String: JSONValue] = [:]) async -> Bool {
        await write(Array(VarlinkCall(method: method, parameters: parameters).encoded()) + [0])
    }

    /// The next NUL-terminated reply; nil at end of stream or timeout.
    func reply() async -> VarlinkReply? {
        await offThread { self.blockingReply() }
    }

    private func blockingReply() -> VarlinkReply? {
        while true {
            if let end = pending.firstIndex(of: 0) {
                let frame = Data(pending[..<end])
                pending.removeSubrange(...end)
                return try? VarlinkReply.parse(frame)
            }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { return nil }
            pending += buffer[..<count]
        }
    }

    /// Bytes of a reply that the end of the stream cut off (after ``reply()`` returned nil at
    /// end of stream): none when every reply came whole.
    var cutOffBytes: Int { pending.count }

    /// Whether the daemon closed the connection within the receive timeout: end of stream,
    /// or ECONNRESET (Linux's answer when the daemon closed with bytes of ours unread).
    func isClosedByPeer() async -> Bool {
        await offThread {
            var byte: UInt8 = 0
            let count = recv(self.fd, &byte, 1, 0)
            return count == 0 || (count < 0 && errno == ECONNRESET)
        }
    }
}

