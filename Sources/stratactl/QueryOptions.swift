import ArgumentParser
import Foundation
import Strata

/// The store, entity and filter shared by `fetch` and `count`.
struct QueryOptions: ParsableArguments {
    @Argument(help: "The store file.", completion: .file())
    var store: String

    @Argument(help: "The entity to query (its sub-entities are included).")
    var entity: String

    @Option(name: .customLong("where"), help: ArgumentHelp(
        "A predicate in NSPredicate format, e.g. \"colorScheme.primary == %@\".", valueName: "predicate"))
    var predicate: String?

    @Option(name: .customLong("arg"), parsing: .singleValue, help: ArgumentHelp(
        "A value for the next %@, %d, %f or %K of the predicate (repeat for each). Parsed as an integer, a double, true, false or null when it is one, else a string; \"quote\" it to force a string.",
        valueName: "value"))
    var arguments: [String] = []

    @Option(name: .long, help: ArgumentHelp(
        "Query as a client of this model version does: its entity and property names (an older version the store is past; needs --model). See docs/Rollout.md.",
        valueName: "name"))
    var version: String?

    @Option(name: .long, help: ArgumentHelp("The store's model directory (for --version: the store records only its own version).", valueName: "dir"),
            completion: .directory)
    var model: String?

    /// A context on `offline` in the shape the query asks for: the store's own version, or
    /// `--version` served through a ``VersionBridge``; and that shape's layout.
    func context(on offline: OfflineStore) throws -> (ObjectContext, StorageLayout, ObjectModel) {
        guard let version, version != offline.model.version else {
            if model != nil && version == nil { throw UsageError("--model is for --version; without it the store's own model is used") }
            return (ObjectContext(store: offline.store), offline.layout, offline.model)
        }
        guard let model else {
            throw UsageError("--version \(version) needs --model DIR: the store records only its own version ('\(offline.model.version)'), not the older ones")
        }
        let directory = try ModelDirectory(url: URL(fileURLWithPath: model))
        if let same = directory.version(named: version), same.checksum == offline.model.checksum {
            return (ObjectContext(store: offline.store), offline.layout, offline.model)
        }
        let bridge = try VersionBridge.resolve(store: offline.store, directory: directory, version: version)
        return (ObjectContext(store: offline.store, serving: bridge), bridge.layout, bridge.servedModel)
    }

    /// The predicate with its arguments, or nil for every object.
    func fetchPredicate() throws -> FetchPredicate? {
        guard let predicate else {
            if !arguments.isEmpty { throw UsageError("--arg given without --where; add a predicate with %@ placeholders") }
            return nil
        }
        return try FetchPredicate(format: predicate, arguments: arguments.map(CommandLineValue.parse))
    }

    /// Throws the library's unknown-entity error (with suggestions) when the model lacks the entity.
    func checkEntity(in layout: StorageLayout) throws {
        _ = try FetchQuery.count(FetchRequest(entityName: entity), layout: layout)
    }
}

/// How a `--arg` string becomes a predicate argument.
///
/// | text | argument |
/// |---|---|
/// | `42`, `-7` | integer |
/// | `3.5`, `1e6` | double |
/// | `true`, `false` | boolean |
/// | `null`, `nil` | null |
/// | `"42"` or `'42'` (quotes included) | the string without its quotes |
/// | anything else | the string as given |
enum CommandLineValue {
    static func parse(_ text: String) -> any PredicateArgument {
        if text.count >= 2, let first = text.first, first == "\"" || first == "'", text.last == first {
            return String(text.dropFirst().dropLast())
        }
        switch text {
        case "true": return true
        case "false": return false
        case "null", "nil": return Value.null
        default: break
        }
        if let integer = Int64(text) { return integer }
        if let first = text.unicodeScalars.first, "0123456789+-.".unicodeScalars.contains(first), let double = Double(text), double.isFinite {
            return double
        }
        return text
    }
}
