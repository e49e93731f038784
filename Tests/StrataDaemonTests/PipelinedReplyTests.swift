import Foundation
import Logging
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

    /// Sends `count` Echo calls at once, reading nothing.
    static func send(_ count: Int, on socket: RawVarlinkSocket) async {
        for n in 0..<count { await socket.call("io.strata.Test.Echo", ["n": .int(Int64(n))]) }
    }

    /// Replies until `count` have come or the connection ends.
    static func replies(_ count: Int, on socket: RawVarlinkSocket) async -> [VarlinkReply] {
        var replies: [VarlinkReply] = []
        while replies.count < count, let reply = await socket.reply() { replies.append(reply) }
        return replies
    }

    static func numbers(_ replies: [VarlinkReply]) -> [Int64?] {
        replies.map { reply in
            guard case .int(let n)? = reply.parameters["n"] else { return nil }
            return n
        }
    }

    @Test func manyCallsSentAtOnceAndReadLateAreAnsweredWholeAndInOrder() async throws {
        let pad = 32 * 1024
        try await Self.withServer(pad: pad) { path, _ in
            let socket = try #require(await RawVarlinkSocket.connect(path))
            // 120 calls of 32 KiB replies: about 4 MiB, far past what the socket and the
            // channel buffer; nothing is read for 300 ms.
            await Self.send(120, on: socket)
            try await Task.sleep(for: .milliseconds(300))
            let replies = await Self.replies(120, on: socket)
            #expect(replies.count == 120)
            #expect(socket.cutOffBytes == 0)
            #expect(Self.numbers(replies) == (0..<120).map { Int64($0) })
            #expect(replies.allSatisfy { reply in
                guard case .string(let text)? = reply.parameters["pad"] else { return false }
                return text.utf8.count == pad
            })
        }
    }

    @Test func aDrainingConnectionClosesOnlyAfterTheRepliesItOwes() async throws {
        try await Self.withServer(pad: 128 * 1024) { path, server in
            let socket = try #require(await RawVarlinkSocket.connect(path))
            await Self.send(20, on: socket)
            // Replies of 128 KiB back up in the socket (nothing is read yet): the server has a
            // call running, its reply on the way, when it starts draining.
            let deadline = ContinuousClock.now + .seconds(20)
            while server.runningCalls == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            #expect(server.runningCalls > 0)
            server.quiesce()
            let replies = await Self.replies(20, on: socket)
            // Every call the server started is answered whole before the connection closes (the
            // running one at least); calls it had not started get ShuttingDown or nothing.
            let answered = Self.numbers(replies).compactMap { $0 }
            #expect(!answered.isEmpty)
            #expect(answered == (0..<Int64(answered.count)).map { $0 }, "answers in order, none lost in the middle")
            #expect(replies.dropFirst(answered.count).allSatisfy { $0.error == "io.strata.Varlink.ShuttingDown" },
                    "\(replies.dropFirst(answered.count))")
            #expect(socket.cutOffBytes == 0, "the connection closed in the middle of a reply")
        }
    }
}
