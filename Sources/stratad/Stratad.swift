import ArgumentParser
import Foundation
import Logging
import Metrics
import ServiceLifecycle
import StrataDaemon

/// `stratad`: the Strata daemon. See docs/Daemon.md.
@main
struct Stratad: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stratad",
        abstract: "Host Strata stores and serve them over Varlink (admin and data sockets).",
        discussion: """
            Reads its configuration from --config, $STRATAD_CONFIG, or /etc/strata/stratad.yaml. \
            Under systemd it reports readiness and status with sd_notify, pings the watchdog, takes \
            its sockets from stratad.socket when socket-activated, reloads on SIGHUP and stops \
            gracefully on SIGTERM.

            Exit status: 0 after a clean stop, 1 on a runtime failure (e.g. a socket cannot be \
            bound), 64 on a usage error, 78 when the configuration is refused.
            """,
        version: StrataDaemonVersion.string
    )

    @Option(name: .long, help: "The configuration file (default: $STRATAD_CONFIG or /etc/strata/stratad.yaml).")
    var config: String?

    @Option(name: .long, help: "Override sockets.admin.path.")
    var adminSocket: String?

    @Option(name: .long, help: "Override sockets.data.path.")
    var dataSocket: String?

    @Option(name: .long, help: "Override log_level (trace, debug, info, notice, warning, error, critical).")
    var logLevel: String?

    @Flag(name: .long, help: "Check the configuration (and model directories), print the result and exit.")
    var checkConfig = false

    func run() async throws {
        MallocArenas.limit()
        let environment = ProcessInfo.processInfo.environment
        let path = config ?? environment["STRATAD_CONFIG"] ?? DaemonConfiguration.defaultPath
        let overrides = ConfigurationLoader.Overrides.environment(environment)
            .overridden(by: .init(adminSocket: adminSocket, dataSocket: dataSocket, logLevel: logLevel))
        let configuration: DaemonConfiguration
        do {
            configuration = try ConfigurationLoader().load(path: path, overrides: overrides)
        } catch {
            FileHandle.standardError.write(Data("stratad: configuration refused: \(error)\n".utf8))
            SystemdNotifier().status("configuration refused: \(error)")
            throw ExitCode(78)
        }
        if checkConfig {
            print("\(path): OK (\(configuration.stores.count) store\(configuration.stores.count == 1 ? "" : "s"))")
            return
        }
        JournalLogHandler.bootstrap(level: Logger.Level(rawValue: configuration.logLevel) ?? .info)
        let logger = Logger(label: "stratad")
        // Every swift-metrics metric goes to the daemon's Prometheus registry (Metrics(),
        // `stratactl metrics`, metrics.textfile).
        let metrics = DaemonMetrics()
        MetricsSystem.bootstrap(metrics.factory)
        let daemon = StrataDaemon(configuration: configuration, source: .init(path: path, overrides: overrides), logger: logger, metrics: metrics)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: daemon, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch {
            logger.critical("stratad failed", metadata: ["strata.error": "\(error)"])
            throw ExitCode(1)
        }
    }
}
