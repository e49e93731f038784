/// An interface served by a ``VarlinkMethodTable``: its name, definition, methods and calls are
/// the table's. `AdminInterface` and `StoreInterface` build their table in their initializer
/// and get the rest of ``VarlinkInterface`` from here.
public protocol VarlinkTableInterface: VarlinkInterface {
    /// The interface's generated types (`StrataAdmin`).
    associatedtype Definition: VarlinkInterfaceDefinition
    /// The handlers of the interface's methods and its error translation.
    var table: VarlinkMethodTable<Definition> { get }
}

extension VarlinkTableInterface {
    /// The interface's name: `io.strata.Admin`.
    public var name: String { table.name }
    /// The interface definition text (Varlink IDL).
    public var definition: String { table.definition }
    /// The methods, by name.
    public var methods: Set<String> { table.methods }

    /// Serves one call through the table, translating the errors of the code behind it.
    public func handle(_ call: VarlinkCall, context: VarlinkCallContext, replies: VarlinkReplySender) async throws -> [String: JSONValue] {
        try await table.handle(call, context: context, replies: replies)
    }
}
