import Foundation

/// Sends the intermediate replies of a typed method (``VarlinkReplySender``, typed).
public struct VarlinkReplies<Reply: Encodable & Sendable>: Sendable {
    private let sender: VarlinkReplySender

    init(_ sender: VarlinkReplySender) {
        self.sender = sender
    }

    /// Whether the client asked for several replies.
    public var more: Bool { sender.more }

    /// An intermediate reply (dropped when the client did not ask for `more`).
    public func progress(_ reply: Reply) async throws {
        try await sender.progress(try JSONValueEncoder().encodeObject(reply))
    }

    /// Several intermediate replies encoded beforehand with ``message(_:)``, joined by NUL
    /// (the framer adds the last): one write for all, and one encoding of a reply that goes
    /// to many connections.
    public func progress(encoded messages: Data) async throws {
        try await sender.progress(encoded: messages)
    }

    /// The same, only if the connection takes the write now, without waiting; false when it
    /// did not (``VarlinkReplySender/tryProgress(encoded:)``).
    public func tryProgress(encoded messages: Data) -> Bool {
        sender.tryProgress(encoded: messages)
    }

    /// The bytes of `reply` as an intermediate reply (`continues: true`), without the NUL.
    public static func message(_ reply: Reply) throws -> Data {
        VarlinkReply(parameters: try JSONValueEncoder().encodeObject(reply), continues: true).encoded()
    }
}
