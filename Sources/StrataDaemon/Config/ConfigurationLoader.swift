import Foundation
import Strata
import Yams

/// Reads a ``DaemonConfiguration`` from a YAML file, then applies environment and
/// command-line overrides. Every refusal is a ``ConfigurationError`` with file, key and reason.
public struct ConfigurationLoader: Sendable {
    /// Overrides that win over the file (command line first, then environment).
    public struct Overrides: Sendable, Hashable {
        /// The admin socket.
        public var adminSocket: String?
        /// The data socket, if any.
        public var dataSocket: String?
        /// The log level.
        public var logLevel: String?
        /// Memberwise initializer.
        public init(adminSocket: String? = nil, dataSocket: String? = nil, logLevel: String? = nil) {
            self.adminSocket = adminSocket
            self.dataSocket = dataSocket
            self.logLevel = logLevel
        }

        /// `STRATAD_ADMIN_SOCKET`, `STRATAD_DATA_SOCKET`, `STRATAD_LOG_LEVEL`.
        public static func environment(_ env: [String: String] = ProcessInfo.processInfo.environment) -> Overrides {
            Overrides(adminSocket: env["STRATAD_ADMIN_SOCKET"], dataSocket: env["STRATAD_DATA_SOCKET"], logLevel: env["STRATAD_LOG_LEVEL"])
        }

        /// `self` with `other`'s values where set.
        public func overridden(by other: Overrides) -> Overrides {
            Overrides(adminSocket: other.adminSocket ?? adminSocket, dataSocket: other.dataSocket ?? dataSocket,
                      logLevel: other.logLevel ?? logLevel)
        }
    }

    /// Whether model files are checked too.
    public var checksModels: Bool

    /// - Parameter checksModels: load each store's model directory and check the target version.
    public init(checksModels: Bool = true) {
        self.checksModels = checksModels
    }

    /// The largest configuration file read: 1 MiB.
    public static let maxFileSize = 1 << 20

    /// Reads the configuration file at `path`: a regular file of at most ``maxFileSize``
    /// bytes (a FIFO or device is refused without blocking), in UTF-8.
    public func load(path: String, overrides: Overrides = Overrides()) throws(ConfigurationError) -> DaemonConfiguration {
        let data: Data
        do {
            data = try InputFile.read(path, limit: Self.maxFileSize, limitName: "the configuration size limit")
        } catch {
            throw ConfigurationError(.unreadable, file: path, key: "", "cannot read the configuration file: \(error.reason)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError(.unreadable, file: path, key: "", "the configuration file is not UTF-8 text")
        }
        return try parse(text, file: path, overrides: overrides)
    }

    /// Parses configuration `text` (from `file`, named in errors) and applies `overrides`.
    /// - Throws: ``ConfigurationError`` naming the file, line and key.
    public func parse(_ text: String, file: String, overrides: Overrides = Overrides()) throws(ConfigurationError) -> DaemonConfiguration {
        do {
            try YAMLPreflight.check(text)
        } catch {
            throw ConfigurationError(.syntax, file: file, key: "", error.message, line: error.line)
        }
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            throw ConfigurationError(.syntax, file: file, key: "", "not valid YAML: \(error)")
        }
        var reader = ConfigurationReader(file: file)
        var configuration = try reader.configuration(root)
        configuration.file = file
        if let admin = overrides.adminSocket { configuration.adminSocket.path = admin }
        if let data = overrides.dataSocket { configuration.dataSocket.path = data }
        if let level = overrides.logLevel {
            guard ConfigurationReader.logLevels.contains(level) else {
                throw ConfigurationError(.invalidValue, file: "<override>", key: "log_level",
                                         "'\(level)' is not a log level; use one of \(ConfigurationReader.logLevels.joined(separator: ", "))")
            }
            configuration.logLevel = level
        }
        try validate(configuration, file: file)
        return configuration
    }

    private func validate(_ configuration: DaemonConfiguration, file: String) throws(ConfigurationError) {
        var names: [String: Int] = [:]
        var paths: [String: Int] = [:]
        for (index, store) in configuration.stores.enumerated() {
            if let other = names[store.name] {
                throw ConfigurationError(.duplicate, file: file, key: "stores[\(index)].name", "store name '\(store.name)' is already used by stores[\(other)]; names must be unique")
            }
            names[store.name] = index
            let path = URL(fileURLWithPath: store.path).standardizedFileURL.path
            if let other = paths[path] {
                throw ConfigurationError(.duplicate, file: file, key: "stores[\(index)].path", "'\(store.path)' is already the path of stores[\(other)]; two stores cannot share a file")
            }
            paths[path] = index
            if checksModels { try checkModel(store, index: index, file: file) }
        }
        if configuration.adminSocket.path == configuration.dataSocket.path {
            throw ConfigurationError(.duplicate, file: file, key: "sockets.data.path", "the data socket cannot use the admin socket's path '\(configuration.adminSocket.path)'")
        }
        for (key, socket) in [("sockets.admin.path", configuration.adminSocket), ("sockets.data.path", configuration.dataSocket)] {
            try Self.checkSocketPath(socket.path, key: key, file: file)
        }
    }

    /// The longest path a Unix socket can be bound at, in bytes: `sun_path` holds 108 bytes,
    /// the last of them the terminating NUL.
    public static let maxSocketPathBytes = 107

    /// Refuses a socket path the daemon could not bind (an empty one, one longer than
    /// ``maxSocketPathBytes``, one with a NUL byte), naming the key and the limit, so that
    /// `--check-config` refuses what the start would.
    static func checkSocketPath(_ path: String, key: String, file: String) throws(ConfigurationError) {
        let length = path.utf8.count
        guard length > 0, !path.utf8.contains(0) else {
            throw ConfigurationError(.invalidValue, file: file, key: key, "a socket path must be a non-empty path without NUL bytes")
        }
        guard length <= maxSocketPathBytes else {
            throw ConfigurationError(.invalidValue, file: file, key: key,
                                     "'\(path)' is \(length) bytes long; a Unix socket path holds at most \(maxSocketPathBytes) bytes (sun_path): choose a shorter path, such as one under /run/strata")
        }
    }

    private func checkModel(_ store: StoreConfiguration, index: Int, file: String) throws(ConfigurationError) {
        let key = "stores[\(index)].model"
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: store.modelDirectory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ConfigurationError(.model, file: file, key: key, "model directory '\(store.modelDirectory)' does not exist or is not a directory")
        }
        let directory: ModelDirectory
        do {
            directory = try ModelDirectory(url: URL(fileURLWithPath: store.modelDirectory))
        } catch {
            throw ConfigurationError(.model, file: file, key: key, "model directory '\(store.modelDirectory)' cannot be loaded: \(error)")
        }
        if let version = store.targetVersion, directory.version(named: version) == nil {
            throw ConfigurationError(.model, file: file, key: "stores[\(index)].version",
                                     "version '\(version)' is not in \(store.modelDirectory); known: \(directory.versions.map(\.version).joined(separator: ", "))")
        }
        if let stages = store.stagesFile {
            // The same checks as the open: a regular file within the size limit, YAML without
            // bombs (YAMLPreflight), `stages:` naming versions of the store's model directory.
            do {
                _ = try MigrationStageFile.load(contentsOf: URL(fileURLWithPath: stages), directory: directory)
            } catch {
                throw ConfigurationError(.stages, file: file, key: "stores[\(index)].stages",
                                         "store '\(store.name)': \(error.reason); fix the stage file or the path in `stages:` (docs/StagedMigration.md)")
            }
        }
    }
}
