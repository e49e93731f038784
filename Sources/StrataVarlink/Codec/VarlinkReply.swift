import Foundation

/// A Varlink reply: parameters, or an error name with parameters; `continues` for all but the
/// last reply to a `more` call.
public struct VarlinkReply: Sendable, Hashable {
    /// The parameters, as JSON.
    public var parameters: [String: JSONValue]
    /// Whether more replies follow (`continues`).
    public var continues: Bool
    /// The error's qualified name, nil for a successful reply.
    public var error: String?
    /// Replies already encoded (``encodedMessages(_:)``): sent as they are, instead of
    /// `parameters`. Several messages are joined by NUL; the framer adds the last NUL.
    public var preEncoded: Data?

    /// Memberwise initializer.
    public init(parameters: [String: JSONValue] = [:], continues: Bool = false, error: String? = nil) {
        self.parameters = parameters
        self.continues = continues
        self.error = error
    }

    /// Memberwise initializer.
    public init(_ error: VarlinkError) {
        self.init(parameters: error.parameters, error: error.name)
    }

    /// Intermediate replies (`continues: true`) that a streaming call encoded once and sends
    /// to several connections (an observer's fan-out): each message's bytes, joined by NUL.
    public static func encodedMessages(_ messages: Data) -> VarlinkReply {
        var reply = VarlinkReply(continues: true)
        reply.preEncoded = messages
        return reply
    }

    /// Messages encoded beforehand (``VarlinkReplies/message(_:)``) joined by NUL, as
    /// ``encodedMessages(_:)`` and `progress(encoded:)` take them (the framer adds the last NUL).
    public static func joined(_ messages: some Sequence<Data>) -> Data {
        var joined = Data()
        for (n, message) in messages.enumerated() {
            if n > 0 { joined.append(0) }
            joined.append(message)
        }
        return joined
    }

    /// The reply as JSON bytes (without the NUL terminator).
    public func encoded() -> Data {
        if let preEncoded { return preEncoded }
        var object: [String: JSONValue] = ["parameters": .object(parameters)]
        if continues { object["continues"] = true }
        if let error { object["error"] = .string(error) }
        return JSONValue.object(object).encoded()
    }

    /// Parses one reply message.
    /// - Throws: ``VarlinkError`` for bytes that are not a reply object.
    public static func parse(_ bytes: Data) throws(VarlinkError) -> VarlinkReply {
        guard let value = try? JSONValue.decode(bytes), case .object(let object) = value else {
            throw VarlinkError.malformedMessage("the reply is not a JSON object")
        }
        return VarlinkReply(parameters: object["parameters"]?.objectValue ?? [:], continues: object["continues"]?.boolValue ?? false,
                            error: object["error"]?.stringValue)
    }
}
