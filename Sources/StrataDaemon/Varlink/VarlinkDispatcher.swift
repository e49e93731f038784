import Foundation
import Logging
import Metrics

/// Routes calls to the interfaces one socket serves, and answers `org.varlink.service`
/// (GetInfo, GetInterfaceDescription) for them.
public struct VarlinkDispatcher: Sendable {
    public let interfaces: [String: any VarlinkInterface]
    public let info: ServiceInfo

    /// `org.varlink.service.GetInfo`'s answer.
    public struct ServiceInfo: Sendable {
        public var vendor = "Strata"
        public var product = "stratad"
        public var version = StrataDaemonVersion.string
        public var url = "https://github.com/strata/strata"
        public init() {}
    }

    public init(interfaces: [any VarlinkInterface], info: ServiceInfo = ServiceInfo()) {
        var map: [String: any VarlinkInterface] = [:]
        for interface in interfaces { map[interface.name] = interface }
        let definitions = map.mapValues(\.definition)
        let service = VarlinkServiceInterface(info: info, names: [VarlinkServiceInterface.interfaceName] + interfaces.map(\.name), definitions: { name in definitions[name] })
        map[service.name] = service
        self.interfaces = map
        self.info = info
    }

    /// Handles one call and returns its final reply (nil for `oneway`). Intermediate replies go
    /// through `send`.
    public func dispatch(_ call: VarlinkCall, context: VarlinkCallContext,
                         send: @escaping @Sendable (VarlinkReply) async throws -> Void) async -> VarlinkReply? {
        let started = ContinuousClock.now
        let reply: VarlinkReply
        do {
            guard let interface = interfaces[call.interface] else { throw VarlinkError.interfaceNotFound(call.interface) }
            guard interface.methods.contains(call.member) else { throw VarlinkError.methodNotFound(call.method) }
            let sender = VarlinkReplySender(more: call.more && !call.oneway, send: send)
            reply = VarlinkReply(parameters: try await interface.handle(call, context: context, replies: sender))
        } catch let error as VarlinkError {
            reply = VarlinkReply(error)
        } catch {
            context.logger.error("call failed", metadata: ["strata.method": "\(call.method)", "strata.error": "\(error)"])
            reply = VarlinkReply(VarlinkError("io.strata.Varlink.InternalError", ["reason": .string("\(error)")]))
        }
        let elapsed = ContinuousClock.now - started
        Timer(label: "strata_request_duration_seconds", dimensions: [("method", call.method)]).recordNanoseconds(
            elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
        Counter(label: "strata_requests_total", dimensions: [("method", call.method), ("outcome", reply.error ?? "ok")]).increment()
        context.logger.debug("call", metadata: ["strata.method": "\(call.method)", "strata.outcome": "\(reply.error ?? "ok")",
                                                 "strata.ms": "\(Int(elapsed.seconds * 1000))"])
        return call.oneway ? nil : reply
    }
}

/// `org.varlink.service`: introspection.
struct VarlinkServiceInterface: VarlinkInterface {
    static let interfaceName = "org.varlink.service"
    static let idl = """
        # The Varlink service interface, implemented by every Varlink service.
        interface org.varlink.service

        # Get a list of all the interfaces a service provides and information
        # about the implementation.
        method GetInfo() -> (
          vendor: string,
          product: string,
          version: string,
          url: string,
          interfaces: []string
        )

        # Get the description of an interface that is implemented by this service.
        method GetInterfaceDescription(interface: string) -> (description: string)

        # The requested interface was not found.
        error InterfaceNotFound (interface: string)

        # The requested method was not found
        error MethodNotFound (method: string)

        # The interface defines the requested method, but the service does not
        # implement it.
        error MethodNotImplemented (method: string)

        # One of the passed parameters is invalid.
        error InvalidParameter (parameter: string)

        # Client is denied access
        error PermissionDenied ()

        # Method is expected to be called with 'more' set to true, but wasn't
        error ExpectedMore ()

        """

    let info: VarlinkDispatcher.ServiceInfo
    let names: [String]
    let definitions: @Sendable (String) -> String?

    var name: String { Self.interfaceName }
    var definition: String { Self.idl }
    var methods: Set<String> { ["GetInfo", "GetInterfaceDescription"] }

    func handle(_ call: VarlinkCall, context: VarlinkCallContext, replies: VarlinkReplySender) async throws -> [String: JSONValue] {
        switch call.member {
        case "GetInfo":
            _ = try VarlinkParameters(call.parameters, allowed: [])
            return ["vendor": .string(info.vendor), "product": .string(info.product), "version": .string(info.version),
                    "url": .string(info.url), "interfaces": .array(names.map(JSONValue.string))]
        default:
            let parameters = try VarlinkParameters(call.parameters, allowed: ["interface"])
            let interface = try parameters.requiredString("interface")
            if interface == name { return ["description": .string(definition)] }
            guard let description = definitions(interface) else { throw VarlinkError.interfaceNotFound(interface) }
            return ["description": .string(description)]
        }
    }
}
