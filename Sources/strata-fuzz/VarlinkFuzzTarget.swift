import Foundation
import Logging
import NIOCore
import NIOEmbedded
import Strata
import StrataDaemon
import StrataVarlink

/// The Varlink frame decoder and dispatcher: the input is a byte stream from a client,
/// split into NUL-terminated frames by ``NULFrameDecoder`` (64 KiB limit), each frame parsed
/// as a call and dispatched to `io.strata.Store` (on a real store) and `org.varlink.service`.
final class VarlinkFuzzTarget: FuzzTarget {
    static let name = "varlink"
    let dispatcher: VarlinkDispatcher
    let registry: StoreRegistry
    let context: VarlinkCallContext

    init() throws {
        let directory = try FuzzTargets.scratchDirectory(Self.name)
        let models = directory.appending(path: "models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        try ModelFile.encode(FuzzTargets.model, format: .yaml).write(to: models.appending(path: "Fuzz 1.yaml"))
        try Data("versions: [Fuzz 1.yaml]\n".utf8).write(to: models.appending(path: "versions.yaml"))
        try FuzzTargets.seededStore(in: directory).close()
        var logger = Logger(label: "strata-fuzz")
        logger.logLevel = .critical
        let registry = StoreRegistry(logger: logger)
        let configuration = StoreConfiguration(name: "fuzz", path: directory.appending(path: "fuzz.sqlite").path, modelDirectory: models.path)
        Self.wait { await registry.reconcile(with: [configuration], drainTimeout: .seconds(1)) }
        self.registry = registry
        dispatcher = VarlinkDispatcher(interfaces: [StoreInterface(registry: registry)])
        context = VarlinkCallContext(socket: "data", logger: logger)
    }

    func run(_ data: Data) {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(NULFrameDecoder(maxSize: 64 << 10)))
        defer { _ = try? channel.finish() }
        do {
            try channel.writeInbound(ByteBuffer(bytes: data))
        } catch {
            return  // a frame past the limit: the server replies MessageTooLarge and closes
        }
        var frames = 0
        while frames < 16, let frame = try? channel.readInbound(as: ByteBuffer.self) {
            frames += 1
            guard let call = try? VarlinkCall.parse(Data(frame.readableBytesView)) else { continue }
            let dispatcher = self.dispatcher
            let context = self.context
            Self.wait {
                let reply = await dispatcher.dispatch(call, context: context) { _ in }
                _ = reply?.encoded()
            }
        }
    }

    /// Runs `body` to completion from synchronous code.
    static func wait(_ body: @escaping @Sendable () async -> Void) {
        let done = DispatchSemaphore(value: 0)
        Task {
            await body()
            done.signal()
        }
        done.wait()
    }
}
