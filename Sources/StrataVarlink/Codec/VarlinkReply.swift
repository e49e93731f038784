import Foundation

/// A Varlink reply: parameters, or an error name with parameters; `continues` for all but the
/// last reply to a `more` call.
public struct VarlinkReply: Sendable, Hashable {
    public var parameters: [String: JSONValue]
    public var continues: Bool
    /// The error's qualified name, nil for a successful reply.
    public var error: String?

    public init(parameters: [String: JSONValue] = [:], continues: Bool = false, error: String? = nil) {
        self.parameters = parameters
        self.continues = continues
        self.error = error
    }

    public init(_ error: VarlinkError) {
        self.init(parameters: error.parameters, error: error.name)
    }

    public func encoded() -> Data {
        var object: [String: JSONValue] = ["parameters": .object(parameters)]
        if continues { object["continues"] = true }
        if let error { object["error"] = .string(error) }
        return JSONValue.object(object).encoded()
    }

    public static func parse(_ bytes: Data) throws(VarlinkError) -> VarlinkReply {
        guard let value = try? JSONValue.decode(bytes), case .object(let object) = value else {
            throw VarlinkError.malformedMessage("the reply is not a JSON object")
        }
        return VarlinkReply(parameters: object["parameters"]?.objectValue ?? [:], continues: object["continues"]?.boolValue ?? false,
                            error: object["error"]?.stringValue)
    }
}
