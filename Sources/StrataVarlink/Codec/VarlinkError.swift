import Foundation
import StrataUnits

/// A Varlink error reply as it travels: a qualified name (`io.strata.Admin.NoSuchStore`) and
/// parameters that say what went wrong. Thrown by ``VarlinkClient`` for error replies; typed
/// interfaces throw their own errors (``VarlinkErrorConvertible``), which become one of these
/// at the wire.
public struct VarlinkError: Error, Sendable, Hashable, CustomStringConvertible, VarlinkErrorConvertible {
    /// The error's qualified name: `io.strata.Admin.NoSuchStore`.
    public var name: String
    /// The parameters, as JSON.
    public var parameters: [String: JSONValue]

    /// Memberwise initializer.
    public init(_ name: String, _ parameters: [String: JSONValue] = [:]) {
        self.name = name
        self.parameters = parameters
    }

    /// A description in words.
    public var description: String {
        parameters.isEmpty ? name : "\(name) \(JSONValue.object(parameters))"
    }

    /// The error as it goes on the wire.
    public var varlinkError: VarlinkError { self }

    /// The unqualified part of ``name`` (`NoSuchStore`).
    public var shortName: String { name.split(separator: ".").last.map(String.init) ?? name }

    /// The human part of the error: its `reason` parameter, or a summary of its parameters.
    public var reason: String {
        if let reason = parameters["reason"]?.stringValue { return reason }
        return parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }

    // MARK: - org.varlink.service errors

    /// `org.varlink.service.InterfaceNotFound`: no interface of that name.
    public static func interfaceNotFound(_ interface: String) -> VarlinkError {
        VarlinkError("org.varlink.service.InterfaceNotFound", ["interface": .string(interface)])
    }

    /// `org.varlink.service.MethodNotFound`: the interface has no such method.
    public static func methodNotFound(_ method: String) -> VarlinkError {
        VarlinkError("org.varlink.service.MethodNotFound", ["method": .string(method)])
    }

    /// `org.varlink.service.MethodNotImplemented`: declared but not served.
    public static func methodNotImplemented(_ method: String) -> VarlinkError {
        VarlinkError("org.varlink.service.MethodNotImplemented", ["method": .string(method)])
    }

    /// A missing parameter, one of the wrong type, or one the method does not take.
    public static func invalidParameter(_ parameter: String) -> VarlinkError {
        VarlinkError("org.varlink.service.InvalidParameter", ["parameter": .string(parameter)])
    }

    /// `org.varlink.service.PermissionDenied`: the peer may not call it.
    public static func permissionDenied() -> VarlinkError {
        VarlinkError("org.varlink.service.PermissionDenied")
    }

    /// `org.varlink.service.ExpectedMore`: the method only streams; call it with `more`.
    public static func expectedMore() -> VarlinkError {
        VarlinkError("org.varlink.service.ExpectedMore")
    }

    // MARK: - Protocol errors (io.strata.Varlink)

    /// The message is not a Varlink call (bad JSON, no method…); the connection stays open.
    public static func malformedMessage(_ reason: String) -> VarlinkError {
        VarlinkError("io.strata.Varlink.MalformedMessage", ["reason": .string(reason)])
    }

    /// The message is larger than the limit; the connection is closed after this reply.
    public static func messageTooLarge(limit: Int) -> VarlinkError {
        VarlinkError("io.strata.Varlink.MessageTooLarge", ["limit": .int(Int64(limit)), "reason": .string("messages are limited to \(limit) bytes")])
    }

    /// The peer's credentials are not among the socket's authorized users and groups.
    public static func notAuthorized(uid: UInt32, socket: String) -> VarlinkError {
        VarlinkError("io.strata.Varlink.NotAuthorized", [
            "uid": .int(Int64(uid)), "socket": .string(socket),
            "reason": .string("uid \(uid) is not authorized on the \(socket) socket; add the user or one of its groups to sockets.\(socket) in the configuration"),
        ])
    }

    /// The socket already serves `limits.max_connections` clients; the connection is closed
    /// after this reply. Retry later, or close idle connections.
    public static func tooManyConnections(limit: Int, socket: String) -> VarlinkError {
        VarlinkError("io.strata.Varlink.TooManyConnections", [
            "limit": .int(Int64(limit)), "socket": .string(socket),
            "reason": .string("the \(socket) socket already serves \(limit) connections (limits.max_connections); retry later"),
        ])
    }

    /// A message was started but not completed within `limits.message_timeout`; the
    /// connection is closed after this reply.
    public static func messageTimeout(_ timeout: Duration) -> VarlinkError {
        VarlinkError("io.strata.Varlink.MessageTimeout", [
            "seconds": .double(timeout.seconds),
            "reason": .string("a message must be complete (NUL-terminated) within \(Self.text(timeout)) of its first byte (limits.message_timeout)"),
        ])
    }

    /// An input bound was exceeded: `limit` names it (the configuration key where there is
    /// one), `maximum` is the bound, `parameter` the offending call parameter if any.
    public static func limitExceeded(_ limit: String, maximum: Int, parameter: String? = nil, reason: String) -> VarlinkError {
        var parameters: [String: JSONValue] = ["limit": .string(limit), "maximum": .int(Int64(maximum)), "reason": .string(reason)]
        if let parameter { parameters["parameter"] = .string(parameter) }
        return VarlinkError("io.strata.Varlink.LimitExceeded", parameters)
    }

    /// A call ran longer than its time limit (`limit`: `limits.call_timeout` or a store's
    /// `call_timeout`) and was stopped, nothing written; the connection stays open.
    public static func callTimeout(limit: String, timeout: Duration, store: String) -> VarlinkError {
        VarlinkError("io.strata.Varlink.CallTimeout", [
            "limit": .string(limit), "seconds": .double(timeout.seconds), "store": .string(store),
            "reason": .string("the call on store '\(store)' ran longer than \(limit) (\(Self.text(timeout))) and was stopped, nothing written; "
                + "narrow the predicate (an indexed attribute, a MATCHES pattern without nested repetition), page with limit, or raise \(limit)"),
        ])
    }

    /// The daemon is shutting down and takes no new calls.
    public static func shuttingDown(reason: String = "stratad is stopping; retry when it is back") -> VarlinkError {
        VarlinkError("io.strata.Varlink.ShuttingDown", ["reason": .string(reason)])
    }

    /// `500ms`, `10s`: a timeout as the configuration writes it.
    private static func text(_ duration: Duration) -> String {
        let milliseconds = duration.wholeMilliseconds
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000)s" : "\(milliseconds)ms"
    }
}

/// An error a Varlink interface can reply with: typed interface errors (``StrataAdmin/Failure``,
/// ``StrataStore/Failure``) and ``VarlinkError`` itself.
public protocol VarlinkErrorConvertible: Error, Sendable {
    /// The error as it goes on the wire.
    var varlinkError: VarlinkError { get }
}
