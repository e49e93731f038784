import Foundation
import Logging

/// Sends the replies of one call. A call that was made with `more` may send several replies
/// with `continues: true` before the last; other calls send exactly one.
public struct VarlinkReplySender: Sendable {
    let send: @Sendable (VarlinkReply) async throws -> Void
    let sendEagerly: (@Sendable (VarlinkReply) async throws -> Void)?
    let sendNow: (@Sendable (VarlinkReply) -> Bool)?
    /// Whether the client asked for several replies.
    public let more: Bool

    /// Memberwise initializer. `sendEagerly`, when given, queues a reply on the connection
    /// without waiting for it to reach the socket while the connection takes writes (and waits
    /// like `send` once it does not): for replies that go to many connections at once.
    /// `sendNow`, when given, queues a reply only if the connection takes writes now, and says
    /// whether it did: for a writer that is not the call's own task (an observer feed).
    public init(more: Bool, send: @escaping @Sendable (VarlinkReply) async throws -> Void,
                sendEagerly: (@Sendable (VarlinkReply) async throws -> Void)? = nil,
                sendNow: (@Sendable (VarlinkReply) -> Bool)? = nil) {
        self.more = more
        self.send = send
        self.sendEagerly = sendEagerly
        self.sendNow = sendNow
    }

    /// An intermediate reply (dropped when the client did not ask for `more`).
    public func progress(_ parameters: [String: JSONValue]) async throws {
        guard more else { return }
        try await send(VarlinkReply(parameters: parameters, continues: true))
    }

    /// Intermediate replies encoded beforehand (``VarlinkReplies/message(_:)``), joined by NUL,
    /// written at once (dropped when the client did not ask for `more`).
    public func progress(encoded messages: Data) async throws {
        guard more, !messages.isEmpty else { return }
        try await (sendEagerly ?? send)(.encodedMessages(messages))
    }

    /// Queues intermediate replies encoded beforehand, joined by NUL, if the connection takes
    /// writes now (open, below its high-water mark), without waiting; false when it did not
    /// (nothing was written: send them with ``progress(encoded:)``). Safe from any thread; the
    /// connection keeps the order of everything queued on it.
    public func tryProgress(encoded messages: Data) -> Bool {
        guard more, !messages.isEmpty else { return true }
        return sendNow?(.encodedMessages(messages)) ?? false
    }
}
