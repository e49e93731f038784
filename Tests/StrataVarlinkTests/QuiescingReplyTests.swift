import Foundation
import Logging
import NIOCore
import NIOPosix
import Synchronization
import Testing
@testable import StrataVarlink

/// A call running when the server quiesces gets its final reply before its connection closes,
/// with or without `more`, even when the event loop gets to the quiesce event before it gets
/// to the reply: the race that lost `FinishDeferred`'s last reply on SIGTERM
/// (`ShutdownDuringFinishTests`), made deterministic by holding the server's only event loop
/// (``LoopHold``) while the quiesce event and then the reply queue up on it.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct QuiescingReplyTests {
    /// `io.strata.Test.Hold()`: with `more`, one intermediate reply at once; then waits until
    /// the test releases it and replies `done: true`.
    struct HoldInterface: VarlinkInterface {
        let name = "io.strata.Test"
        let definition = "interface io.strata.Test\n\nmethod Hold() -> (done: bool)\n"
        let methods: Set<String> = ["Hold"]
        let started: AsyncStream<Void>.Continuation
        let releases: AsyncStream<Void>

        func handle(_ call: VarlinkCall, context: VarlinkCallContext, replies: VarlinkReplySender) async throws -> [String: JSONValue] {
            try await replies.progress(["done": .bool(false)])
            started.yield()
            for await _ in releases { break }
            return ["done": .bool(true)]
        }
    }

    /// Holds an event loop's thread from the moment a task queued on it runs until released.
    final class LoopHold: Sendable {
        private let entered = Mutex(false)
        private let gate = DispatchSemaphore(value: 0)

        init(_ loop: any EventLoop) {
            loop.execute { [self] in
                entered.withLock { $0 = true }
                gate.wait()
            }
        }

        /// Returns once the loop runs the hold (everything queued before it has run).
        func waitUntilHeld() async throws {
            while !entered.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(1)) }
        }

        func release() { gate.signal() }
    }

    @Test(arguments: [false, true])
    func aRunningCallIsAnsweredBeforeTheDrainCloses(more: Bool) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("quiescing-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("test.sock").path
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = loops.next()
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        let (releases, release) = AsyncStream<Void>.makeStream()
        let interface = HoldInterface(started: startedContinuation, releases: releases)
        let server = VarlinkServer(
            configuration: .init(name: "test", source: .path(path, mode: 0o600), authorization: PeerAuthorization(),
                                 dispatcher: VarlinkDispatcher(interfaces: [interface]), limits: .init()),
            logger: Logger(label: "test"), group: loops)
        try await server.bind()
        let serving = Task { await server.serve() }

        let call = Task {
            try await VarlinkClient.withConnection(to: path) { client in
                if more {
                    var replies = 0
                    let last = try await client.callMore("io.strata.Test.Hold") { _ in replies += 1 }
                    return (last, replies)
                }
                return (try await client.call("io.strata.Test.Hold"), 1)
            }
        }
        for await _ in started { break }
        #expect(server.runningCalls == 1)

        // The loop is held while quiesce() queues NIOExtras' shutdown, which queues the quiesce
        // event of the connection when it runs: held again behind it, the loop has the event
        // queued before the reply.
        let first = LoopHold(loop)
        server.quiesce()
        let second = LoopHold(loop)
        first.release()
        try await second.waitUntilHeld()
        release.yield()
        // The call ends once its reply is out, which needs the loop: before the fix the
        // connection's task counted it finished once the reply was queued, and the quiesce
        // event then closed the connection as idle, ahead of the reply.
        let deadline = ContinuousClock.now + .milliseconds(500)
        while server.runningCalls > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        second.release()

        let (last, replies) = try await call.value
        #expect(last["done"] == .bool(true), "\(last)")
        #expect(replies == (more ? 2 : 1))
        await serving.value
        #expect(server.state == .stopped && server.connectionCount == 0)
        try await loops.shutdownGracefully()
    }
}
