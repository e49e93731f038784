import ArgumentParser
import Foundation
import Logging
import NIOCore
import NIOPosix
import Strata
import StrataVarlink
import Synchronization

/// `strata-bench transport-floor` (internal, spawned by `serve`): the transport floor — a
/// server on the same SwiftNIO stack as stratad (Unix socket, NUL framing with the same size
/// limit) that answers every message with the same canned reply, touching no store and
/// parsing no JSON. What a call costs here is what any Varlink daemon on this stack pays.
///
/// With `--store`, the **store ceiling**: before each reply the same operation runs through
/// the library in-process, on the event loop that read the message (no JSON, no thread
/// crossing, no call deadline or schema check) — what a daemon on this stack and this library
/// could at best serve, with nothing of its own per call.
struct TransportFloor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transport-floor",
        abstract: "Serve a canned reply to every message on a Unix socket (the serve scenario's floor).",
        shouldDisplay: false
    )

    @Option(name: .long, help: "The socket path to bind.") var socket: String
    @Option(name: .long, help: "A file holding the reply to send (without the NUL).") var reply: String
    @Option(name: .long, help: "A store of the crud model: run --operation on it before each reply (the store ceiling).") var store: String?
    @Option(name: .long, help: "The operation to run with --store.") var operation: String?
    @Option(name: .long, help: "Objects in --store.") var rows = 100_000

    func run() throws {
        let bytes = try Data(contentsOf: URL(filePath: reply))
        let work: StoreCeilingWork?
        if let store {
            guard let name = operation, let operation = ServeOperation(rawValue: name) else {
                throw ValidationError("--store needs --operation (\(ServeOperation.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            var logger = Logger(label: "io.strata.bench")
            logger.logLevel = .warning
            let opened = try PersistentStore.open(at: URL(filePath: store), model: CRUDDataSet.model, options: StoreOptions(logger: logger))
            work = StoreCeilingWork(operation: operation, store: opened, data: CRUDDataSet(rows: rows, batchSize: 10_000))
        } else {
            work = nil
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        let channel = try ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 128)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        ByteToMessageHandler(NULFrameDecoder(maxSize: 1 << 20)),
                        MessageToByteHandler(NULFrameEncoder()),
                        CannedReplyHandler(reply: ByteBuffer(bytes: bytes), work: work),
                    ])
                }
            }
            .bind(unixDomainSocketPath: socket, cleanupExistingSocketFile: true).wait()
        FileHandle.standardOutput.write(Data("listening\n".utf8))
        try channel.closeFuture.wait()
    }
}

/// The store ceiling's work per message: the n-th call of the operation through the library.
final class StoreCeilingWork: @unchecked Sendable {
    let operation: ServeOperation
    let store: PersistentStore
    let data: CRUDDataSet
    private let next = Atomic<Int>(0)

    init(operation: ServeOperation, store: PersistentStore, data: CRUDDataSet) {
        self.operation = operation
        self.store = store
        self.data = data
    }

    func perform() throws {
        let n = next.wrappingAdd(1, ordering: .relaxed).oldValue
        _ = try operation.runInProcess(n: n, store: store, data: data)
    }
}

/// Answers each inbound message with `reply` (after `work`, when there is some).
final class CannedReplyHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let reply: ByteBuffer
    let work: StoreCeilingWork?

    init(reply: ByteBuffer, work: StoreCeilingWork? = nil) {
        self.reply = reply
        self.work = work
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if let work {
            do {
                try work.perform()
            } catch {
                FileHandle.standardError.write(Data("transport-floor: \(error)\n".utf8))
                context.close(promise: nil)
                return
            }
        }
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

    /// `store`: the store ceiling (the operation and row count with it).
    init(executable: URL, socket: String, replyFile: String, store: (path: String, operation: ServeOperation, rows: Int)? = nil) throws {
        self.socket = socket
        let process = Process()
        process.executableURL = executable
        process.arguments = ["transport-floor", "--socket", socket, "--reply", replyFile]
        if let store {
            process.arguments! += ["--store", store.path, "--operation", store.operation.rawValue, "--rows", "\(store.rows)"]
        }
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
