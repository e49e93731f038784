import Foundation

/// `org.varlink.service`, the introspection interface every Varlink service implements:
/// `GetInfo` and `GetInterfaceDescription`, typed. ``VarlinkDispatcher`` serves it for the
/// interfaces of its socket; its errors are ``VarlinkError``'s `org.varlink.service` ones.
public enum VarlinkService: VarlinkInterfaceDefinition {
    /// The name on the wire.
    public static let name = "org.varlink.service"
    /// The interface definition (the `.varlink` file).
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

    /// The interface's methods.
    public static let methods: [any VarlinkMethod.Type] = [GetInfo.self, GetInterfaceDescription.self]
    /// The interface's errors.
    public static let errors: [any VarlinkErrorParameters.Type] = [
        InterfaceNotFound.self, MethodNotFound.self, MethodNotImplemented.self, InvalidParameter.self, PermissionDenied.self, ExpectedMore.self,
    ]

    // MARK: - Methods

    /// `org.varlink.service.GetInfo`: vendor, product, version, URL and interfaces.
    public enum GetInfo: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = VarlinkService
        /// The name on the wire.
        public static let name = "GetInfo"
        /// The method takes no parameters.
        public typealias Parameters = VarlinkEmpty

        /// What the method replies.
        public struct Reply: Codable, Sendable, Hashable {
            /// The daemon's vendor.
            public var vendor: String
            /// The daemon's product name.
            public var product: String
            /// The daemon's version.
            public var version: String
            /// The project's URL.
            public var url: String
            /// The interfaces, by name.
            public var interfaces: [String]
        }
    }

    /// `org.varlink.service.GetInterfaceDescription`: an interface's definition text.
    public enum GetInterfaceDescription: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = VarlinkService
        /// The name on the wire.
        public static let name = "GetInterfaceDescription"

        /// What the method takes.
        public struct Parameters: Codable, Sendable, Hashable {
            /// The interface's name.
            public var interface: String
            /// Memberwise initializer.
            public init(interface: String) { self.interface = interface }
        }

        /// What the method replies.
        public struct Reply: Codable, Sendable, Hashable {
            /// A description in words.
            public var description: String
        }
    }

    // MARK: - Errors

    /// `org.varlink.service.InterfaceNotFound`.
    public struct InterfaceNotFound: VarlinkErrorParameters {
        /// The error's name on the wire.
        public static let errorName = "InterfaceNotFound"
        /// The interface's name.
        public var interface: String
        /// Why, in words, and what to do.
        public var reason: String { "no interface \(interface) on this socket" }
    }

    /// `org.varlink.service.MethodNotFound`.
    public struct MethodNotFound: VarlinkErrorParameters {
        /// The error's name on the wire.
        public static let errorName = "MethodNotFound"
        /// The method's name.
        public var method: String
        /// Why, in words, and what to do.
        public var reason: String { "no method \(method)" }
    }

    /// `org.varlink.service.MethodNotImplemented`.
    public struct MethodNotImplemented: VarlinkErrorParameters {
        /// The error's name on the wire.
        public static let errorName = "MethodNotImplemented"
        /// The method's name.
        public var method: String
        /// Why, in words, and what to do.
        public var reason: String { "\(method) is declared but not implemented" }
    }

    /// `org.varlink.service.InvalidParameter`: a parameter is missing, unknown or of the wrong type.
    public struct InvalidParameter: VarlinkErrorParameters {
        /// The error's name on the wire.
        public static let errorName = "InvalidParameter"
        /// The parameter concerned.
        public var parameter: String
        /// Why, in words, and what to do.
        public var reason: String { "parameter '\(parameter)' is missing, of the wrong type, or not a parameter of the method" }
    }

    /// `org.varlink.service.PermissionDenied`.
    public struct PermissionDenied: VarlinkErrorParameters {
        /// The error's name on the wire.
        public static let errorName = "PermissionDenied"
        /// Why, in words, and what to do.
        public var reason: String { "permission denied" }
    }

    /// `org.varlink.service.ExpectedMore`.
    public struct ExpectedMore: VarlinkErrorParameters {
        /// The error's name on the wire.
        public static let errorName = "ExpectedMore"
        /// Why, in words, and what to do.
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
