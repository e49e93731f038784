import Foundation

/// A typed Varlink interface: the handlers of its methods, each taking the method's
/// `Parameters` and returning its `Reply`, and the one place where the errors of the code
/// behind it become the interface's errors.
///
/// Parameters are decoded strictly (``JSONValueDecoder``): a missing, mistyped or unknown
/// parameter is `org.varlink.service.InvalidParameter` naming it (`operations[2].op`).
/// Replies are encoded with every field of the definition present (`null` when absent).
///
/// ```swift
/// var table = VarlinkMethodTable<StrataAdmin>(translatingErrors: AdminInterface.varlinkError)
/// table.on(StrataAdmin.Pending.self) { parameters, context, replies in
///     .init(stores: try await pending(parameters.store))
/// }
/// ```
public struct VarlinkMethodTable<Definition: VarlinkInterfaceDefinition>: VarlinkInterface {
    typealias Handler = @Sendable (VarlinkCall, VarlinkCallContext, VarlinkReplySender) async throws -> [String: JSONValue]

    /// The interface's name: `io.strata.Admin`.
    public var name: String { Definition.name }
    /// The interface definition text (Varlink IDL).
    public var definition: String { Definition.definition }
    /// The methods, by name (worked out once: the dispatcher asks on every call).
    public let methods: Set<String> = Definition.methodNames

    private var handlers: [String: Handler] = [:]
    private let translate: @Sendable (any Error) -> (any VarlinkErrorConvertible)?

    /// - Parameter translatingErrors: turns an error thrown by a handler (a store's, the
    ///   registry's, the scheduler's) into one of the interface's errors; nil leaves it an
    ///   internal error.
    public init(translatingErrors translate: @escaping @Sendable (any Error) -> (any VarlinkErrorConvertible)?) {
        self.translate = translate
    }

    /// Sets the handler of `method`. `replies` sends intermediate replies of a `more` call.
    public mutating func on<M: VarlinkMethod>(
        _ method: M.Type,
        _ body: @escaping @Sendable (M.Parameters, VarlinkCallContext, VarlinkReplies<M.Reply>) async throws -> M.Reply
    ) where M.Interface == Definition {
        handlers[M.name] = { call, context, sender in
            let parameters: M.Parameters
            do {
                parameters = try JSONValueDecoder().decode(M.Parameters.self, from: .object(call.parameters))
            } catch let error as JSONValueDecodingError {
                throw VarlinkError.invalidParameter(error.path.isEmpty ? "parameters" : error.path)
            }
            let reply = try await body(parameters, context, VarlinkReplies(sender))
            return try JSONValueEncoder().encodeObject(reply)
        }
    }

    /// Decodes the call's parameters, runs the method's handler and sends its replies; unknown methods get `MethodNotFound`.
    public func handle(_ call: VarlinkCall, context: VarlinkCallContext, replies: VarlinkReplySender) async throws -> [String: JSONValue] {
        guard let handler = handlers[call.member] else { throw VarlinkError.methodNotImplemented(call.method) }
        do {
            return try await handler(call, context, replies)
        } catch let error as any VarlinkErrorConvertible {
            throw error
        } catch {
            guard let translated = translate(error) else { throw error }
            throw translated
        }
    }
}
