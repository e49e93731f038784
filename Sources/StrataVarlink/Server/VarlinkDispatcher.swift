import Foundation
import Logging
import Metrics
import StrataUnits
import Synchronization

/// Routes calls to the interfaces one socket serves, and answers `org.varlink.service`
/// (GetInfo, GetInterfaceDescription) for them.
public struct VarlinkDispatcher: Sendable {
    /// The interfaces, by name.
    public let interfaces: [String: any VarlinkInterface]
    /// What the daemon says about itself.
    public let info: ServiceInfo
    /// The per-method metrics, made once per method (and outcome) instead of per call.
    private let metrics = RequestMetrics()

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
        var known = false
        do {
            guard let interface = interfaces[call.interface] else { throw VarlinkError.interfaceNotFound(call.interface) }
            guard interface.methods.contains(call.member) else { throw VarlinkError.methodNotFound(call.method) }
            known = true
            let sender = VarlinkReplySender(more: call.more && !call.oneway, send: send, sendEagerly: sendEagerly, sendNow: sendNow)
            reply = VarlinkReply(parameters: try await interface.handle(call, context: context, replies: sender))
        } catch let error as any VarlinkErrorConvertible {
            reply = VarlinkReply(error.varlinkError)
        } catch {
            context.logger.error("call failed", metadata: ["strata.method": "\(call.method)", "strata.error": "\(error)"])
            reply = VarlinkReply(VarlinkError("io.strata.Varlink.InternalError", ["reason": .string("\(error)")]))
        }
        let elapsed = ContinuousClock.now - started
        // A method no interface has is counted as `unknown`: clients choose those names.
        let label = known ? call.method : RequestMetrics.unknownMethod
        metrics.timer(method: label).recordNanoseconds(elapsed.nanoseconds)
        metrics.counter(method: label, outcome: reply.error ?? "ok").increment()
        context.logger.debug("call", metadata: ["strata.method": "\(call.method)", "strata.outcome": "\(reply.error ?? "ok")",
                                                 "strata.ms": "\(Int(elapsed.milliseconds))"])
        return call.oneway ? nil : reply
    }
}

/// `strata_request_duration_seconds{method}` and `strata_requests_total{method,outcome}`, each
/// made through swift-metrics on a method's (or outcome's) first call and kept: making one
/// looks it up in the backend's registry under its lock, on every call otherwise. Bounded:
/// methods are the interfaces' own (or ``unknownMethod``), outcomes `ok` or an error name.
final class RequestMetrics: Sendable {
    /// The `method` label of calls to a method that no interface has.
    static let unknownMethod = "unknown"

    private struct Key: Hashable {
        let method: String
        let outcome: String
    }

    private let timers = Mutex<[String: Timer]>([:])
    private let counters = Mutex<[Key: Counter]>([:])

    func timer(method: String) -> Timer {
        if let timer = timers.withLock({ $0[method] }) { return timer }
        let timer = Timer(label: "strata_request_duration_seconds", dimensions: [("method", method)])
        timers.withLock { $0[method] = timer }
        return timer
    }

    func counter(method: String, outcome: String) -> Counter {
        let key = Key(method: method, outcome: outcome)
        if let counter = counters.withLock({ $0[key] }) { return counter }
        let counter = Counter(label: "strata_requests_total", dimensions: [("method", method), ("outcome", outcome)])
        counters.withLock { $0[key] = counter }
        return counter
    }
}
