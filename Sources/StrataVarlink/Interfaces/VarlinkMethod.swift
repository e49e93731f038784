import Foundation

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
