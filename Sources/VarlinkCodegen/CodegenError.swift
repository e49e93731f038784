/// Why the interface could not be generated: the file or declaration it concerns and what to do.
public struct CodegenError: Error, CustomStringConvertible, Equatable {
    /// The message, naming the `.varlink` file or the declaration (`io.strata.Admin.StoreInfo.requests`).
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
