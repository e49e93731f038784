import ArgumentParser
import Foundation
import Strata

/// `stratactl`: the admin CLI. Offline commands work on store and model files; daemon
/// commands talk to `stratad` over its admin socket.
@main
struct Stratactl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stratactl",
        abstract: "Inspect, query and migrate Strata stores; control the stratad daemon.",
        discussion: """
            Offline commands open store and model files directly and never write to a store \
            unless the command says so (migrate). Exit status: 0 success, 1 failure, \
            2 usage error, 3 the store or model is incompatible or needs migration.
            """,
        subcommands: [
            ModelCommand.self,
            PlanCommand.self,
            DeferredCommand.self,
            MigrateCommand.self,
        ]
    )
}

/// Options every command shares.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print machine-readable JSON instead of text.")
    var json = false
}
