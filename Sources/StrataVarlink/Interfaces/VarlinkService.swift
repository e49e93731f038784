import Foundation

/// `org.varlink.service`, the introspection interface every Varlink service implements:
/// `GetInfo` and `GetInterfaceDescription`, typed. ``VarlinkDispatcher`` serves it for the
/// interfaces of its socket; its errors are ``VarlinkError``'s `org.varlink.service` ones.
public enum VarlinkService: VarlinkInterfaceDefinition {
    public static let name = "org.varlink.service"
    public static let definition = """
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

    public static let methods: [any VarlinkMethod.Type] = [GetInfo.self, GetInterfaceDescription.self]
    public static let errors: [any VarlinkErrorParameters.Type] = [
        InterfaceNotFound.self, MethodNotFound.self, MethodNotImplemented.self, InvalidParameter.self, PermissionDenied.self, ExpectedMore.self,
    ]

    // MARK: - Methods

    public enum GetInfo: VarlinkMethod {
        public typealias Interface = VarlinkService
        public static let name = "GetInfo"
        public typealias Parameters = VarlinkEmpty

        public struct Reply: Codable, Sendable, Hashable {
            public var vendor: String
            public var product: String
            public var version: String
            public var url: String
            public var interfaces: [String]
        }
    }

    public enum GetInterfaceDescription: VarlinkMethod {
        public typealias Interface = VarlinkService
        public static let name = "GetInterfaceDescription"

        public struct Parameters: Codable, Sendable, Hashable {
            public var interface: String
            public init(interface: String) { self.interface = interface }
        }

        public struct Reply: Codable, Sendable, Hashable {
            public var description: String
        }
    }

    // MARK: - Errors

    public struct InterfaceNotFound: VarlinkErrorParameters {
        public static let errorName = "InterfaceNotFound"
        public var interface: String
        public var reason: String { "no interface \(interface) on this socket" }
    }

    public struct MethodNotFound: VarlinkErrorParameters {
        public static let errorName = "MethodNotFound"
        public var method: String
        public var reason: String { "no method \(method)" }
    }

    public struct MethodNotImplemented: VarlinkErrorParameters {
        public static let errorName = "MethodNotImplemented"
        public var method: String
        public var reason: String { "\(method) is declared but not implemented" }
    }

    public struct InvalidParameter: VarlinkErrorParameters {
        public static let errorName = "InvalidParameter"
        public var parameter: String
        public var reason: String { "parameter '\(parameter)' is missing, of the wrong type, or not a parameter of the method" }
    }

    public struct PermissionDenied: VarlinkErrorParameters {
        public static let errorName = "PermissionDenied"
        public var reason: String { "permission denied" }
    }

    public struct ExpectedMore: VarlinkErrorParameters {
        public static let errorName = "ExpectedMore"
        public var reason: String { "the method must be called with more: true" }
    }

    // MARK: - Serving

    /// The interface as a socket serves it: `info` and the interfaces (name and definition).
    static func table(info: VarlinkDispatcher.ServiceInfo, interfaces: [any VarlinkInterface]) -> VarlinkMethodTable<VarlinkService> {
        let names = [name] + interfaces.map(\.name)
        let definitions = Dictionary(interfaces.map { ($0.name, $0.definition) }, uniquingKeysWith: { $1 }).merging([name: definition]) { $1 }
        var table = VarlinkMethodTable<VarlinkService>(translatingErrors: { _ in nil })
        table.on(GetInfo.self) { _, _, _ in
            GetInfo.Reply(vendor: info.vendor, product: info.product, version: info.version, url: info.url, interfaces: names)
        }
        table.on(GetInterfaceDescription.self) { parameters, _, _ in
            guard let description = definitions[parameters.interface] else { throw VarlinkError.interfaceNotFound(parameters.interface) }
            return GetInterfaceDescription.Reply(description: description)
        }
        return table
    }
}
