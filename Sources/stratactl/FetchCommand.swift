import ArgumentParser
import Foundation
import Strata

/// `stratactl fetch STORE ENTITY [--where PREDICATE] [--arg VALUE …] [--sort KEY[:desc] …] [--limit N] [--offset N]`
struct FetchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Fetch the objects of an entity, filtered, sorted and paged (read-only).",
        discussion: """
            Text output is a table: one row per object, one column per attribute, composite \
            leaf (colorScheme.primary) and to-one relationship (the related object's _pk), \
            after _pk. NULL is a missing value; data shows as <N bytes>; cells longer than 60 \
            characters are cut with "…". With --json: an array of objects, composites nested \
            ({"colorScheme": {"primary": …}}), plus _entity and _pk; dates in ISO 8601, data in \
            base64.

            The predicate uses NSPredicate format (docs/Predicates.md); pass values with --arg \
            rather than quoting them into the format. Sort keys may be attributes, composite \
            leaves or to-one keypaths, with :desc and :ci (case-insensitive); the primary key \
            always breaks ties.

            Examples:
              stratactl fetch var/aircraft.sqlite Aircraft --where "colorScheme.primary == %@" --arg red
              stratactl fetch var/aircraft.sqlite Aircraft --sort tailNumber:desc --limit 10 --json

            --version reads as a client of an older model version does (its entity and \
            property names, removed attributes while their columns remain; --model names the \
            store's model directory). A version that cannot be served is refused with the hop \
            and what is missing (docs/Rollout.md).
            """
    )

    @OptionGroup var query: QueryOptions

    @Option(name: .long, parsing: .singleValue, help: ArgumentHelp(
        "A keypath to sort by, with optional :desc and :ci (repeat, most significant first).", valueName: "key[:desc]"))
    var sort: [String] = []

    @Option(name: .long, help: "Return at most this many objects.")
    var limit: Int?

    @Option(name: .long, help: "Skip this many objects first.")
    var offset: Int = 0

    @OptionGroup var output: OutputOptions

    func run() throws {
        let text = try ExitStatus.reporting { () throws -> String in
            if let limit, limit < 0 { throw UsageError("--limit must not be negative (got \(limit))") }
            if offset < 0 { throw UsageError("--offset must not be negative (got \(offset))") }
            let predicate = try query.fetchPredicate()
            var sortDescriptors: [FetchSortDescriptor] = []
            for key in sort { sortDescriptors += try FetchSortDescriptor.list(parsing: key) }
            let offline = try OfflineStore(path: query.store)
            defer { offline.close() }
            let (context, layout, model) = try query.context(on: offline)
            try query.checkEntity(in: layout)
            let objects = try context.fetch(FetchRequest(
                entityName: query.entity, predicate: predicate, sortDescriptors: sortDescriptors,
                fetchLimit: limit, fetchOffset: offset))
            if output.json {
                return try JSONOutput.string(jsonObject: objects.map { $0.jsonObject(style: .display) })
            }
            return ObjectTable(entity: query.entity, model: model, layout: layout).render(objects)
        }
        print(text)
    }
}
