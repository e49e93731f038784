import Foundation
import Logging

/// One Varlink interface a server serves: its IDL description and its methods. Typed
/// interfaces implement it with a ``VarlinkMethodTable``.
public protocol VarlinkInterface: Sendable {
    /// The qualified interface name, e.g. `io.strata.Admin`.
    var name: String { get }
    /// The interface definition (IDL), as in `varlink/NAME.varlink`.
    var definition: String { get }
    /// The method names (unqualified) the interface declares.
    var methods: Set<String> { get }
    /// Handles one call; the returned parameters are the final reply.
    ///
    /// - Throws: ``VarlinkErrorConvertible`` errors for error replies; anything else becomes
    ///   `io.strata.Varlink.InternalError`.
    func handle(_ call: VarlinkCall, context: VarlinkCallContext, replies: VarlinkReplySender) async throws -> [String: JSONValue]
}
