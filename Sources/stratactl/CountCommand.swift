import ArgumentParser
import Foundation
import Strata

/// `stratactl count STORE ENTITY [--where PREDICATE]`
struct CountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "count",
        abstract: "Count the objects of an entity that match a predicate (read-only).",
        discussion: """
            Prints the number of objects of ENTITY (sub-entities included) matching --where, \
            or all of them. With --json: {"entity": NAME, "count": N}.

            Examples:
              stratactl count var/aircraft.sqlite Aircraft
              stratactl count var/aircraft.sqlite Aircraft --where "colorScheme.primary == %@" --arg red
              stratactl count var/fleet.sqlite Aircraft --version "Fleet 1" --model config/models/Fleet --where "registration BEGINSWITH 'F-'"
            """
    )

    @OptionGroup var query: QueryOptions
    @OptionGroup var output: OutputOptions

    struct Result: Encodable {
        var entity: String
        var count: Int
    }

    func run() throws {
        let count = try ExitStatus.reporting {
            let predicate = try query.fetchPredicate()
            let offline = try OfflineStore(path: query.store)
            defer { offline.close() }
            let (context, layout, _) = try query.context(on: offline)
            try query.checkEntity(in: layout)
            return try context.count(FetchRequest(entityName: query.entity, predicate: predicate))
        }
        if output.json {
            try JSONOutput.print(Result(entity: query.entity, count: count))
        } else {
            print(count)
        }
    }
}
