import Foundation

extension VarlinkClient.Connection {
    /// Calls a typed method and decodes its reply.
    ///
    /// ```swift
    /// let pending = try await admin.call(StrataAdmin.Pending.self, .init(store: "aircraft"))
    /// ```
    ///
    /// - Throws: ``VarlinkError`` for an error reply (``StrataAdmin/Failure/init(_:)`` types
    ///   it), ``VarlinkClient/ClientError`` when the reply is not the method's.
    public func call<M: VarlinkMethod>(_ method: M.Type, _ parameters: M.Parameters) async throws -> M.Reply {
        try Self.decode(M.self, try await call(M.qualifiedName, try Self.encode(parameters)))
    }

    /// Calls a typed method that takes no parameters.
    public func call<M: VarlinkMethod>(_ method: M.Type) async throws -> M.Reply where M.Parameters == VarlinkEmpty {
        try await call(method, VarlinkEmpty())
    }

    /// Calls a typed method with `more`, handing every reply to `onReply`; returns the last.
    public func callMore<M: VarlinkMethod>(_ method: M.Type, _ parameters: M.Parameters,
                                           onReply: (M.Reply) throws -> Void) async throws -> M.Reply {
        let last = try await callMore(M.qualifiedName, try Self.encode(parameters)) { reply in
            try onReply(try Self.decode(M.self, reply))
        }
        return try Self.decode(M.self, last)
    }

    private static func encode<P: Encodable>(_ parameters: P) throws -> [String: JSONValue] {
        try JSONValueEncoder(nilEncoding: .omit).encodeObject(parameters)
    }

    /// A reply as the method's type; fields a newer daemon added are ignored.
    private static func decode<M: VarlinkMethod>(_ method: M.Type, _ reply: [String: JSONValue]) throws -> M.Reply {
        do {
            return try JSONValueDecoder(rejectsUnknownKeys: false).decode(M.Reply.self, from: .object(reply))
        } catch {
            throw VarlinkClient.ClientError.badReply("\(M.qualifiedName): \(error)")
        }
    }
}
