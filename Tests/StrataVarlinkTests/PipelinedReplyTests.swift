import Foundation
import Logging
import NIOCore
import NIOPosix
import Testing
@testable import StrataVarlink

/// A connection's task goes on to the next call while the last call's reply is still on its
/// way to the socket (the call counts as running until the write completes). Replies must
/// still arrive whole and in order — also for a client that sends many calls and reads
/// nothing for a while (the writes back up past the channel's high-water mark, and the task
/// then waits for them) — and a connection that drains must not close ahead of them.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct PipelinedReplyTests {
    /// `io.strata.Test.Echo(n)`: replies `n` and `pad`, `size` bytes of it.
    struct EchoInterface: VarlinkInterface {
        let name = "io.strata.Test"
        let definition = "interface io.strata.Test\n\nmethod Echo(n: int) -> (n: int, pad: string)\n"
        let methods: Set<String> = ["Echo"]
        let pad: String

        func handle(_ call: VarlinkCall, context: VarlinkCallContext, replies: VarlinkReplySender) async throws -> [String: JSONValue] {
            ["n": call.parameters["n"] ?? .null, "pad": .string(pad)]
        }
    }

    /// A blocking Unix-socket client that writes raw frames and reads NUL-framed replies.
    final class RawClient: @unchecked Sendable {
        let fd: Int32

        init(path: String) throws {
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { buffer in
                buffer.copyBytes(from: Array(path.utf8) + [0])
            }
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard result == 0 else { throw POSIXError(.ECONNREFUSED) }
            // A server that stops answering fails the test in 10 s instead of holding a thread.
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { close(fd) }

        func send(_ text: String) {
            var bytes = Array(text.utf8) + [0]
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
                guard written > 0 else { return }
                offset += written
            }
        }

        /// Bytes of a reply cut off by the end of the connection (none when every reply came whole).
        private(set) var cutOff = 0
        private var pending: [UInt8] = []

        /// Reads replies until `count` have come or the connection closes.
        func replies(_ count: Int) -> [[String: JSONValue]] {
            var result: [[String: JSONValue]] = []
            defer { cutOff = pending.count }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while result.count < count {
                let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
                guard got > 0 else { break }
                pending.append(contentsOf: chunk[0..<got])
                while let end = pending.firstIndex(of: 0) {
                    if case .object(let reply)? = try? JSONValue.decode(Data(pending[..<end])) { result.append(reply) }
                    pending.removeSubrange(...end)
                }
            }
            return result
        }
    }

    /// Runs blocking socket I/O on a thread of its own: never on Swift's cooperative pool,
    /// whose threads (two on a two-core machine) the server's own tasks need to answer.
    static func offThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: body()) }
        }
    }

    static func withServer(pad: Int, _ body: (String, VarlinkServer) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pipelined-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("test.sock").path
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let interface = EchoInterface(pad: String(repeating: "x", count: pad))
        let server = VarlinkServer(
            configuration: .init(name: "test", source: .path(path, mode: 0o600), authorization: PeerAuthorization(),
                                 dispatcher: VarlinkDispatcher(interfaces: [interface]), limits: .init()),
            logger: Logger(label: "test"), group: loops)
        try await server.bind()
        let serving = Task { await server.serve() }
        try await body(path, server)
        server.quiesce()
        await serving.value
        try await loops.shutdownGracefully()
    }

    static func numbers(_ replies: [[String: JSONValue]]) -> [Int64?] {
        replies.map { reply in
            guard case .object(let parameters)? = reply["parameters"], case .int(let n)? = parameters["n"] else { return nil }
            return n
        }
    }

    @Test func manyCallsSentAtOnceAndReadLateAreAnsweredWholeAndInOrder() async throws {
        let pad = 32 * 1024
        try await Self.withServer(pad: pad) { path, _ in
            let client = try RawClient(path: path)
            // 120 calls of 32 KiB replies: about 4 MiB, far past what the socket and the
            // channel buffer; nothing is read for 300 ms.
            await Self.offThread {
                for n in 0..<120 { client.send(#"{"method":"io.strata.Test.Echo","parameters":{"n":\#(n)}}"#) }
            }
            try await Task.sleep(for: .milliseconds(300))
            let replies = await Self.offThread { client.replies(120) }
            #expect(replies.count == 120)
            #expect(client.cutOff == 0)
            #expect(Self.numbers(replies) == (0..<120).map { Int64($0) })
            #expect(replies.allSatisfy { reply in
                guard case .object(let parameters)? = reply["parameters"], case .string(let text)? = parameters["pad"] else { return false }
                return text.utf8.count == pad
            })
        }
    }

    @Test func aDrainingConnectionClosesOnlyAfterTheRepliesItOwes() async throws {
        try await Self.withServer(pad: 128 * 1024) { path, server in
            let client = try RawClient(path: path)
            await Self.offThread {
                for n in 0..<20 { client.send(#"{"method":"io.strata.Test.Echo","parameters":{"n":\#(n)}}"#) }
            }
            // Replies of 128 KiB back up in the socket (nothing is read yet): the server has a
            // call running, its reply on the way, when it starts draining.
            let deadline = ContinuousClock.now + .seconds(20)
            while server.runningCalls == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            #expect(server.runningCalls > 0)
            server.quiesce()
            let replies = await Self.offThread { client.replies(20) }
            // Every call the server started is answered whole before the connection closes (the
            // running one at least); calls it had not started get ShuttingDown or nothing.
            let answered = Self.numbers(replies).compactMap { $0 }
            #expect(!answered.isEmpty)
            #expect(answered == (0..<Int64(answered.count)).map { $0 }, "answers in order, none lost in the middle")
            #expect(replies.dropFirst(answered.count).allSatisfy { $0["error"] == .string("io.strata.Varlink.ShuttingDown") },
                    "\(replies.dropFirst(answered.count))")
            #expect(client.cutOff == 0, "the connection closed in the middle of a reply")
        }
    }
}
