/// The configuration in force (replaced by reloads).
actor DaemonState {
    private(set) var configuration: DaemonConfiguration
    nonisolated let source: StrataDaemon.ConfigurationSource

    init(configuration: DaemonConfiguration, source: StrataDaemon.ConfigurationSource) {
        self.configuration = configuration
        self.source = source
    }

    func replace(with configuration: DaemonConfiguration) -> DaemonConfiguration {
        defer { self.configuration = configuration }
        return self.configuration
    }
}
