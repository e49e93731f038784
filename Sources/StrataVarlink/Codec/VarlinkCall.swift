import Foundation

/// A Varlink method call: `{"method": "io.strata.Admin.Status", "parameters": {…}, "more": true}`.
public struct VarlinkCall: Sendable, Hashable {
    /// The fully qualified method name, `INTERFACE.Method`.
    public var method: String
    /// The parameters, as JSON.
    public var parameters: [String: JSONValue]
    /// The client accepts several replies (`continues: true` on all but the last).
    public var more: Bool
    /// The client wants no reply.
    public var oneway: Bool

    /// Memberwise initializer.
    public init(method: String, parameters: [String: JSONValue] = [:], more: Bool = false, oneway: Bool = false) {
        self.method = method
        self.parameters = parameters
        self.more = more
        self.oneway = oneway
    }

    /// The deepest nesting of arrays and objects a call may have by default (Foundation refuses
    /// past 512 with a generic error; this bound names itself).
    public static let defaultMaxDepth = 64

    /// The interface part of ``method``.
    public var interface: String {
        guard let dot = method.lastIndex(of: ".") else { return "" }
        return String(method[..<dot])
    }

    /// The member part of ``method``.
    public var member: String {
        guard let dot = method.lastIndex(of: ".") else { return method }
        return String(method[method.index(after: dot)...])
    }

    /// Parses one message (without its NUL terminator).
    ///
    /// - Throws: ``VarlinkError`` `io.strata.Varlink.MalformedMessage` for anything that is
    ///   not a JSON object with a string `method`; `io.strata.Varlink.LimitExceeded` for
    ///   arrays and objects nested deeper than `maxDepth` (checked before decoding).
    public static func parse(_ bytes: Data, maxDepth: Int = VarlinkCall.defaultMaxDepth) throws(VarlinkError) -> VarlinkCall {
        if let offset = JSONValue.offsetPastDepth(maxDepth, in: bytes) {
            throw VarlinkError.limitExceeded("json_depth", maximum: maxDepth, reason:
                "the message nests arrays and objects deeper than \(maxDepth) levels (at byte \(offset)); flatten the parameters")
        }
        let value: JSONValue
        do {
            value = try JSONValue.decode(bytes)
        } catch {
            throw VarlinkError.malformedMessage("the message is not valid JSON")
        }
        guard case .object(let object) = value else {
            throw VarlinkError.malformedMessage("the message is a JSON \(value.typeName), not an object")
        }
        guard case .string(let method)? = object["method"] else {
            throw VarlinkError.malformedMessage("the message has no string \"method\"")
        }
        var call = VarlinkCall(method: method)
        switch object["parameters"] {
        case nil, .null?: break
        case .object(let parameters)?: call.parameters = parameters
        case let other?: throw VarlinkError.malformedMessage("\"parameters\" is a \(other.typeName), not an object")
        }
        for flag in ["more", "oneway", "upgrade"] {
            switch object[flag] {
            case nil, .null?: break
            case .bool(let value)?:
                if flag == "more" { call.more = value }
                if flag == "oneway" { call.oneway = value }
                if flag == "upgrade", value { throw VarlinkError.malformedMessage("protocol upgrades are not supported") }
            case let other?: throw VarlinkError.malformedMessage("\"\(flag)\" is a \(other.typeName), not a bool")
            }
        }
        return call
    }

    /// The wire form, without the NUL terminator.
    public func encoded() -> Data {
        var object: [String: JSONValue] = ["method": .string(method)]
        if !parameters.isEmpty { object["parameters"] = .object(parameters) }
        if more { object["more"] = true }
        if oneway { object["oneway"] = true }
        return JSONValue.object(object).encoded()
    }
}
