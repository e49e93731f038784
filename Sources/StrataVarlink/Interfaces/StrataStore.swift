import Foundation

/// `io.strata.Store` (`varlink/io.strata.Store.varlink`): object access to hosted stores.
/// Objects are ``JSONValue`` objects: attributes by name, composite attributes as nested
/// objects, to-one relationships as the target's primary key, plus `_entity` and `_pk`.
///
/// ```swift
/// let reply = try await data.call(StrataStore.Fetch.self, .init(store: "aircraft", entity: "Aircraft",
///                                                                 predicate: "tailNumber BEGINSWITH %@", arguments: ["F-"]))
/// reply.objects.count
/// ```
public enum StrataStore: VarlinkInterfaceDefinition {
    // Generated from the .varlink file at build time (VarlinkCodegenPlugin): the name and definition
    // (`name`, `definition`), the methods (`methods`, each with its Parameters and Reply)
    // in StrataStore+Methods.swift, the named types in StrataStore+Types.swift, the errors
    // (`errors`, each error's parameters, `Failure`) in StrataStore+Errors.swift.

    /// The reply of `Insert` and `Update`: the object as saved.
    public struct ObjectReply: Codable, Sendable, Hashable {
        /// The object: its id, version and values.
        public var object: JSONValue
        /// Memberwise initializer.
        public init(object: JSONValue) { self.object = object }
    }
}
