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
