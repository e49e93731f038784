import ArgumentParser
import Foundation
import NIOCore
import NIOPosix
import StrataVarlink

/// `strata-bench transport-floor` (internal, spawned by `serve`): the transport floor — a
/// server on the same SwiftNIO stack as stratad (Unix socket, NUL framing with the same size
/// limit) that answers every message with the same canned reply, touching no store and
/// parsing no JSON. What a call costs here is what any Varlink daemon on this stack pays.
struct TransportFloor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transport-floor",
        abstract: "Serve a canned reply to every message on a Unix socket (the serve scenario's floor).",
        shouldDisplay: false
    )

    @Option(name: .long, help: "The socket path to bind.") var socket: String
    @Option(name: .long, help: "A file holding the reply to send (without the NUL).") var reply: String

    func run() throws {
        let bytes = try Data(contentsOf: URL(filePath: reply))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        let channel = try ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 128)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        ByteToMessageHandler(NULFrameDecoder(maxSize: 1 << 20)),
                        MessageToByteHandler(NULFrameEncoder()),
                        CannedReplyHandler(reply: ByteBuffer(bytes: bytes)),
                    ])
                }
            }
            .bind(unixDomainSocketPath: socket, cleanupExistingSocketFile: true).wait()
        FileHandle.standardOutput.write(Data("listening\n".utf8))
        try channel.closeFuture.wait()
    }
}

/// Answers each inbound message with `reply`.
final class CannedReplyHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let reply: ByteBuffer

    init(reply: ByteBuffer) { self.reply = reply }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.write(wrapOutboundOut(reply), promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }
}

/// A running `transport-floor` child process.
final class TransportFloorProcess {
    let process: Process
    let socket: String

    init(executable: URL, socket: String, replyFile: String) throws {
        self.socket = socket
        let process = Process()
        process.executableURL = executable
        process.arguments = ["transport-floor", "--socket", socket, "--reply", replyFile]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        self.process = process
        let line = pipe.fileHandleForReading.availableData
        guard String(decoding: line, as: UTF8.self).contains("listening") else {
            process.terminate()
            process.waitUntilExit()
            throw BenchError("the transport floor did not start (exit status \(process.terminationStatus))")
        }
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}
