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
            unless the command says so (deferred finish, import). Daemon commands talk to stratad \
            over its admin socket (--socket, or $STRATA_ADMIN_SOCKET). Exit status: 0 success, \
            1 failure, 2 usage error, 3 the store or model is incompatible or needs migration, \
            4 the daemon is unreachable, 5 not authorized, 6 no such store or setting, \
            7 invalid value; import-coredata documents 10-14 for its bad inputs.
            """,
        subcommands: [
            ModelCommand.self,
            PlanCommand.self,
            DeferredCommand.self,
            InspectCommand.self,
            FetchCommand.self,
            CountCommand.self,
            ImportCommand.self,
            ImportCoreDataCommand.self,
            DaemonStatusCommand.self,
            DaemonStoresCommand.self,
            DaemonPendingCommand.self,
            DaemonClientsCommand.self,
            DaemonFinishDeferredCommand.self,
            DaemonPauseCommand.self,
            DaemonResumeCommand.self,
            DaemonGetCommand.self,
            DaemonSetCommand.self,
            DaemonCheckpointCommand.self,
            DaemonBackupCommand.self,
            DaemonReloadCommand.self,
            DaemonMetricsCommand.self,
            MigrateCommand.self,
            HistoryCommand.self,
            WatchCommand.self,
        ]
    )
}

extension Stratactl {
    /// Runs the command, mapping ArgumentParser's usage errors (its exit code 64) to stratactl's
    /// documented usage status 2; everything else exits as ArgumentParser decides.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(ExitStatus.usage.rawValue)
            }
            exit(withError: error)
        }
    }
}

/// Options every command shares.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print machine-readable JSON instead of text.")
    var json = false
}
