import Foundation
import Logging
import Metrics
import StrataUnits

/// Routes calls to the interfaces one socket serves, and answers `org.varlink.service`
/// (GetInfo, GetInterfaceDescription) for them.
public struct VarlinkDispatcher: Sendable {
    /// The interfaces, by name.
    public let interfaces: [String: any VarlinkInterface]
    /// What the daemon says about itself.
    public let info: ServiceInfo

    /// `org.varlink.service.GetInfo`'s answer.
    public struct ServiceInfo: Sendable {
        /// The daemon's vendor.
        public var vendor = "Strata"
        /// The daemon's product name.
        public var product = "stratad"
        /// The daemon's version, as `GetInfo` replies.
        public var version: String
        /// The project's URL.
        public var url = "https://github.com/strata/strata"
        /// Memberwise initializer.
        public init(version: String = "unknown") {
            self.version = version
        }
    }

    /// Memberwise initializer.
    public init(interfaces: [any VarlinkInterface], info: ServiceInfo = ServiceInfo()) {
        var map: [String: any VarlinkInterface] = [:]
        for interface in interfaces { map[interface.name] = interface }
        let service = VarlinkService.table(info: info, interfaces: interfaces)
        map[service.name] = service
        self.interfaces = map
        self.info = info
    }

    /// Handles one call and returns its final reply (nil for `oneway`). Intermediate replies go
    /// through `send`; pre-encoded ones through `sendEagerly`, and `sendNow` for writers other
    /// than the call's task, when given (see ``VarlinkReplySender/init(more:send:sendEagerly:sendNow:)``).
    public func dispatch(_ call: VarlinkCall, context: VarlinkCallContext,
                         sendEagerly: (@Sendable (VarlinkReply) async throws -> Void)? = nil,
                         sendNow: (@Sendable (VarlinkReply) -> Bool)? = nil,
                         send: @escaping @Sendable (VarlinkReply) async throws -> Void) async -> VarlinkReply? {
        let started = ContinuousClock.now
        let reply: VarlinkReply
        do {
            guard let interface = interfaces[call.interface] else { throw VarlinkError.interfaceNotFound(call.interface) }
            guard interface.methods.contains(call.member) else { throw VarlinkError.methodNotFound(call.method) }
            let sender = VarlinkReplySender(more: call.more && !call.oneway, send: send, sendEagerly: sendEagerly, sendNow: sendNow)
            reply = VarlinkReply(parameters: try await interface.handle(call, context: context, replies: sender))
        } catch let error as any VarlinkErrorConvertible {
            reply = VarlinkReply(error.varlinkError)
        } catch {
            context.logger.error("call failed", metadata: ["strata.method": "\(call.method)", "strata.error": "\(error)"])
            reply = VarlinkReply(VarlinkError("io.strata.Varlink.InternalError", ["reason": .string("\(error)")]))
        }
        let elapsed = ContinuousClock.now - started
        Timer(label: "strata_request_duration_seconds", dimensions: [("method", call.method)]).recordNanoseconds(
            elapsed.nanoseconds)
        Counter(label: "strata_requests_total", dimensions: [("method", call.method), ("outcome", reply.error ?? "ok")]).increment()
        context.logger.debug("call", metadata: ["strata.method": "\(call.method)", "strata.outcome": "\(reply.error ?? "ok")",
                                                 "strata.ms": "\(Int(elapsed.milliseconds))"])
        return call.oneway ? nil : reply
    }
}
