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

/// One method: the Swift types of its parameters and reply.
///
/// ```swift
/// let reply = try await connection.call(StrataAdmin.Pending.self, .init(store: "aircraft"))
/// reply.stores.first?.tasks.count
/// ```
public protocol VarlinkMethod: Sendable {
    associatedtype Interface: VarlinkInterfaceDefinition
    associatedtype Parameters: Codable & Sendable
    associatedtype Reply: Codable & Sendable
    /// The unqualified method name, `Pending`.
    static var name: String { get }
}

extension VarlinkMethod {
    /// `io.strata.Admin.Pending`.
    public static var qualifiedName: String { "\(Interface.name).\(name)" }
}

/// The parameters of one error (a `Codable` structure with the error's fields).
public protocol VarlinkErrorParameters: Codable, Sendable, Hashable {
    /// The unqualified error name, `NoSuchStore`.
    static var errorName: String { get }
    /// The human part of the error, for messages.
    var reason: String { get }
}

/// The parameters of a method that takes none, or the reply of one that returns nothing.
public struct VarlinkEmpty: Codable, Sendable, Hashable {
    /// Memberwise initializer.
    public init() {}

    private enum NoKeys: CodingKey {}

    /// Decodes an object with no keys (``JSONValueDecoder`` refuses any key it has).
    public init(from decoder: any Decoder) throws {
        _ = try decoder.container(keyedBy: NoKeys.self)
    }

    /// Encodes the value (see ``init(from:)``).
    public func encode(to encoder: any Encoder) throws {
        _ = encoder.container(keyedBy: NoKeys.self)
    }
}

/// A Varlink enum (`state: (ready, failed, closed)` in the IDL): a Swift enum whose raw values
/// are the cases, a JSON string on the wire; a value outside the set is refused when decoded.
public protocol VarlinkStringEnum: RawRepresentable<String>, CaseIterable, Codable, Sendable {}

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
