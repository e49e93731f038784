import Foundation
import Strata

/// The predicate parser and compiler, end to end: the input's first line is a predicate
/// format, its second line sort keys; the fetch is compiled and run (count and a page of
/// objects) against a real store. `%@`-style specifiers get arguments of every kind.
final class PredicateFuzzTarget: FuzzTarget {
    static let name = "predicate"
    let context: ObjectContext

    /// Arguments for the format's specifiers, in turn.
    static let arguments: [any PredicateArgument] = [
        "red", Int64(42), 2.5, true, Value.null, PredicateList(["a", Int64(1)]), "owner.name", Int64.min, -0.0,
        PredicateList([]), "F-%", Double.infinity,
    ]

    init() throws {
        context = ObjectContext(store: try FuzzTargets.seededStore(in: FuzzTargets.scratchDirectory(Self.name)))
    }

    func run(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        let format = String(lines[0])
        let specifiers = format.utf8.filter { $0 == UInt8(ascii: "%") }.count
        let arguments = (0..<min(specifiers, 64)).map { Self.arguments[$0 % Self.arguments.count] }
        let sort = (lines.count > 1 ? (try? FetchSortDescriptor.list(parsing: String(lines[1]))) : nil) ?? []
        defer { context.reset() }
        guard let predicate = try? FetchPredicate(format: format, arguments: arguments) else { return }
        _ = try? FetchPredicate(format: predicate.description, arguments: [])
        for entity in ["Vehicle", "Person"] {
            let request = FetchRequest(entityName: entity, predicate: predicate, sortDescriptors: sort, fetchLimit: 5)
            _ = try? context.count(request)
            _ = try? context.fetch(request)
        }
    }
}
