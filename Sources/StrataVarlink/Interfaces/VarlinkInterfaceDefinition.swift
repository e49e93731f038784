import Foundation

/// A Varlink interface described in Swift: its qualified name, its IDL (what
/// `GetInterfaceDescription` serves) and the Swift types of its methods and errors. A test
/// checks that the types and the IDL describe the same interface.
public protocol VarlinkInterfaceDefinition: Sendable {
    /// The qualified name, `io.strata.Admin`.
    static var name: String { get }
    /// The IDL text, as in `varlink/NAME.varlink`.
    static var definition: String { get }
    /// Every method of the interface.
    static var methods: [any VarlinkMethod.Type] { get }
    /// Every error of the interface, with its parameters.
    static var errors: [any VarlinkErrorParameters.Type] { get }
}

extension VarlinkInterfaceDefinition {
    /// The method names the interface declares, from ``methods``.
    public static var methodNames: Set<String> { Set(methods.map { $0.name }) }

    /// An error of this interface on the wire: `NAME.ErrorName` with the encoded parameters.
    public static func varlinkError<E: VarlinkErrorParameters>(_ parameters: E) -> VarlinkError {
        let encoded = (try? JSONValueEncoder(nilEncoding: .omit).encodeObject(parameters)) ?? ["reason": .string(parameters.reason)]
        return VarlinkError("\(name).\(E.errorName)", encoded)
    }

    /// The parameters of `error` if it is this interface's error `E`.
    public static func parameters<E: VarlinkErrorParameters>(_ type: E.Type, of error: VarlinkError) -> E? {
        guard error.name == "\(name).\(E.errorName)" else { return nil }
        return try? JSONValueDecoder(rejectsUnknownKeys: false).decode(E.self, from: .object(error.parameters))
    }
}
