import Foundation
import StrataVarlink
import Yams

/// Walks the YAML tree of a configuration file, keeping the key path and line of every value
/// so that a refusal can say exactly where it is.
struct ConfigurationReader {
    let file: String

    static let logLevels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    // MARK: - Ranges (docs/Daemon.md, "Configuration")

    /// `stores[].busy_timeout`: how long SQLite waits for another process's lock.
    static let busyTimeoutRange: ClosedRange<Duration> = .zero ... .seconds(3600)
    /// `limits.idle_timeout`.
    static let idleTimeoutRange: ClosedRange<Duration> = .seconds(1) ... .seconds(86_400)
    /// `limits.shutdown_timeout`.
    static let shutdownTimeoutRange: ClosedRange<Duration> = .zero ... .seconds(3600)
    /// `limits.message_timeout` (and more than 0s).
    static let messageTimeoutRange: ClosedRange<Duration> = .zero ... .seconds(3600)
    /// `limits.call_timeout` and `stores[].call_timeout`: how long one call may run in SQLite.
    static let callTimeoutRange: ClosedRange<Duration> = .milliseconds(10) ... .seconds(3600)
    /// `limits.max_connections` (per socket).
    static let maxConnectionsRange: ClosedRange<Int> = 1 ... 65_536
    /// `limits.max_message_size`, in bytes.
    static let maxMessageSizeRange: ClosedRange<Int> = 1024 ... 64 << 20

    init(file: String) {
        self.file = file
    }

    // MARK: - Sections

    mutating func configuration(_ root: Node?) throws(ConfigurationError) -> DaemonConfiguration {
        var configuration = DaemonConfiguration()
        guard let root, !(root.null != nil) else {
            throw ConfigurationError(.missingKey, file: file, key: "stores", "the file is empty; it needs at least a `stores:` list")
        }
        let top = try mapping(root, key: "", allowed: ["stores", "sockets", "scheduler", "limits", "metrics", "log_level", "rollout"])
        guard let stores = top["stores"] else {
            throw ConfigurationError(.missingKey, file: file, key: "stores", "missing; list the stores to host (may be empty: `stores: []`)")
        }
        configuration.stores = try sequence(stores, key: "stores").enumerated().map { (index, node) throws(ConfigurationError) in
            try store(node, key: "stores[\(index)]")
        }
        if let sockets = top["sockets"] {
            let map = try mapping(sockets, key: "sockets", allowed: ["admin", "data"])
            if let admin = map["admin"] { configuration.adminSocket = try socket(admin, key: "sockets.admin", base: .defaultAdmin) }
            if let data = map["data"] { configuration.dataSocket = try socket(data, key: "sockets.data", base: .defaultData) }
        }
        if let scheduler = top["scheduler"] {
            let map = try mapping(scheduler, key: "scheduler", allowed: Set(SchedulerSettings.keys))
            for (name, node) in map.sorted(by: { $0.key < $1.key }) {
                let text = try scalar(node, key: "scheduler.\(name)")
                do {
                    try configuration.scheduler.set(name, to: text)
                } catch {
                    throw ConfigurationError(.invalidValue, file: file, key: "scheduler.\(name)", error.reason, line: line(node))
                }
            }
        }
        if let limits = top["limits"] {
            configuration.limits = try self.limits(limits)
        }
        if let rollout = top["rollout"] {
            let map = try mapping(rollout, key: "rollout", allowed: RolloutSettings.configurationKeys)
            if let grace = map["grace"] {
                configuration.rolloutGrace = try duration(grace, key: "rollout.grace", in: RolloutSettings.graceRange, examples: "30s, 10m, 2h")
            }
        }
        if let metrics = top["metrics"] {
            configuration.metrics = try self.metrics(metrics)
        }
        if let level = top["log_level"] {
            let text = try scalar(level, key: "log_level")
            guard Self.logLevels.contains(text) else {
                throw ConfigurationError(.invalidValue, file: file, key: "log_level", "'\(text)' is not a log level; use one of \(Self.logLevels.joined(separator: ", "))", line: line(level))
            }
            configuration.logLevel = text
        }
        return configuration
    }

    private func store(_ node: Node, key: String) throws(ConfigurationError) -> StoreConfiguration {
        let map = try mapping(node, key: key, allowed: ["name", "path", "model", "version", "defer_cleanup", "backup", "busy_timeout",
                                                        "allow_dropping_all_entities", "allow_discards", "stages", "history", "replication", "call_timeout"])
        func required(_ name: String) throws(ConfigurationError) -> String {
            guard let value = map[name] else {
                throw ConfigurationError(.missingKey, file: file, key: "\(key).\(name)", "missing; every store needs name, path and model", line: line(node))
            }
            return try scalar(value, key: "\(key).\(name)")
        }
        let name = try required("name")
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_.-".contains($0)) }) else {
            throw ConfigurationError(.invalidValue, file: file, key: "\(key).name", "'\(name)' is not a valid store name; use letters, digits, '_', '.' and '-'", line: line(map["name"]!))
        }
        var store = StoreConfiguration(name: name, path: try required("path"), modelDirectory: try required("model"))
        if let version = map["version"] { store.targetVersion = try scalar(version, key: "\(key).version") }
        if let value = map["defer_cleanup"] { store.deferCleanup = try bool(value, key: "\(key).defer_cleanup") }
        if let value = map["backup"] { store.backupBeforeMigration = try bool(value, key: "\(key).backup") }
        if let value = map["busy_timeout"] { store.busyTimeout = try duration(value, key: "\(key).busy_timeout", in: Self.busyTimeoutRange) }
        if let value = map["call_timeout"] { store.callTimeout = try duration(value, key: "\(key).call_timeout", in: Self.callTimeoutRange) }
        if let value = map["allow_dropping_all_entities"] {
            store.allowsDroppingAllEntities = try bool(value, key: "\(key).allow_dropping_all_entities")
        }
        if let value = map["allow_discards"] { store.allowsDiscards = try bool(value, key: "\(key).allow_discards") }
        if let value = map["stages"] {
            let text = try scalar(value, key: "\(key).stages")
            guard !text.isEmpty else {
                throw ConfigurationError(.invalidValue, file: file, key: "\(key).stages", "an empty path; name a stage file (see docs/StagedMigration.md) or remove `stages:`", line: line(value))
            }
            store.stagesFile = text
        }
        if let value = map["history"] { store.history = try history(value, key: "\(key).history") }
        if let value = map["replication"] { store.replication = try replication(value, key: "\(key).replication") }
        return store
    }

    private func history(_ node: Node, key: String) throws(ConfigurationError) -> HistoryRetention {
        let map = try mapping(node, key: key, allowed: ["record", "keep", "max_transactions"])
        var history = HistoryRetention()
        if let value = map["record"] { history.record = try bool(value, key: "\(key).record") }
        if let value = map["keep"] { history.keep = try duration(value, key: "\(key).keep", in: HistoryRetention.keepRange) }
        if let value = map["max_transactions"] {
            history.maxTransactions = try count(value, key: "\(key).max_transactions", range: HistoryRetention.maxTransactionsRange)
        }
        return history
    }

    /// `stores[].replication`: a mapping (`replica`, `max_lag`, `sync_interval`), possibly empty, or `true`.
    private func replication(_ node: Node, key: String) throws(ConfigurationError) -> ReplicationConfiguration? {
        if case .scalar = node {
            return try bool(node, key: key) ? ReplicationConfiguration() : nil
        }
        if case .mapping(let mapping) = node, mapping.isEmpty { return ReplicationConfiguration() }
        let map = try mapping(node, key: key, allowed: ["replica", "max_lag", "sync_interval"])
        var replication = ReplicationConfiguration()
        if let value = map["replica"] {
            var text = try scalar(value, key: "\(key).replica")
            if text.hasPrefix("file://") { text.removeFirst("file://".count) }
            guard text.hasPrefix("/") else {
                throw ConfigurationError(.invalidValue, file: file, key: "\(key).replica", "'\(text)' is not an absolute directory or file:// URL; give the path of the store's file replica (the `url:` of its Litestream replica), or leave the key out to read Litestream's local copy", line: line(value))
            }
            replication.replica = text
        }
        if let value = map["max_lag"] {
            let text = try scalar(value, key: "\(key).max_lag")
            let range = ReplicationConfiguration.maxLagRange
            guard let bytes = ByteSize.parse(text), range.contains(bytes) else {
                throw ConfigurationError(.invalidValue, file: file, key: "\(key).max_lag", "'\(text)' is not a size between 64KiB and 16384MiB (e.g. 64MiB): the most WAL the replica may be behind before deferred work holds", line: line(value))
            }
            replication.maxLag = bytes
        }
        if let value = map["sync_interval"] {
            replication.syncInterval = try duration(value, key: "\(key).sync_interval", in: ReplicationConfiguration.syncIntervalRange,
                                                    examples: "1s (Litestream's default), 2s, 10s")
        }
        return replication
    }

    private func socket(_ node: Node, key: String, base: SocketConfiguration) throws(ConfigurationError) -> SocketConfiguration {
        let map = try mapping(node, key: key, allowed: ["path", "mode", "users", "groups", "allow_any_peer"])
        var socket = base
        if let path = map["path"] { socket.path = try scalar(path, key: "\(key).path") }
        if let mode = map["mode"] {
            let text = try scalar(mode, key: "\(key).mode")
            guard let value = UInt16(text, radix: 8), value <= 0o777 else {
                throw ConfigurationError(.invalidValue, file: file, key: "\(key).mode", "'\(text)' is not an octal file mode such as \"0660\"", line: line(mode))
            }
            socket.mode = value
        }
        if let users = map["users"] { socket.users = try ids(users, key: "\(key).users", of: "user", lookup: PeerIdentity.userID(named:)) }
        if let groups = map["groups"] { socket.groups = try ids(groups, key: "\(key).groups", of: "group", lookup: PeerIdentity.groupID(named:)) }
        if let any = map["allow_any_peer"] { socket.allowAnyPeer = try bool(any, key: "\(key).allow_any_peer") }
        return socket
    }

    private func limits(_ node: Node) throws(ConfigurationError) -> Limits {
        let map = try mapping(node, key: "limits", allowed: ["max_message_size", "idle_timeout", "message_timeout", "shutdown_timeout", "max_connections",
                                                             "max_fetch_objects", "max_batch_operations", "max_observer_queue", "observer_grace", "call_timeout"])
        var limits = Limits()
        if let size = map["max_message_size"] {
            let text = try scalar(size, key: "limits.max_message_size")
            guard let bytes = ByteSize.parse(text), Self.maxMessageSizeRange.contains(bytes) else {
                throw ConfigurationError(.invalidValue, file: file, key: "limits.max_message_size", "'\(text)' is not a size between 1KiB and 64MiB (e.g. 1048576, 512KiB, 1MiB)", line: line(size))
            }
            limits.maxMessageSize = bytes
        }
        if let value = map["idle_timeout"] { limits.idleTimeout = try duration(value, key: "limits.idle_timeout", in: Self.idleTimeoutRange) }
        if let value = map["shutdown_timeout"] { limits.shutdownTimeout = try duration(value, key: "limits.shutdown_timeout", in: Self.shutdownTimeoutRange) }
        if let value = map["message_timeout"] {
            limits.messageTimeout = try duration(value, key: "limits.message_timeout", in: Self.messageTimeoutRange)
            guard limits.messageTimeout > .zero else {
                throw ConfigurationError(.invalidValue, file: file, key: "limits.message_timeout", "must be longer than 0s (e.g. 10s)", line: line(value))
            }
        }
        if let value = map["call_timeout"] { limits.callTimeout = try duration(value, key: "limits.call_timeout", in: Self.callTimeoutRange) }
        if let value = map["max_connections"] { limits.maxConnections = try count(value, key: "limits.max_connections", range: Self.maxConnectionsRange) }
        if let value = map["max_fetch_objects"] { limits.maxFetchObjects = try count(value, key: "limits.max_fetch_objects", range: 1...10_000_000) }
        if let value = map["max_batch_operations"] { limits.maxBatchOperations = try count(value, key: "limits.max_batch_operations", range: 1...1_000_000) }
        if let value = map["max_observer_queue"] { limits.maxObserverQueue = try count(value, key: "limits.max_observer_queue", range: 1...1_000_000) }
        if let value = map["observer_grace"] {
            limits.observerGrace = try duration(value, key: "limits.observer_grace", in: Self.observerGraceRange)
        }
        return limits
    }

    /// `limits.observer_grace`: 10ms to 1m.
    static let observerGraceRange: ClosedRange<Duration> = .milliseconds(10) ... .seconds(60)

    private func metrics(_ node: Node) throws(ConfigurationError) -> MetricsConfiguration {
        let map = try mapping(node, key: "metrics", allowed: ["textfile", "interval"])
        var metrics = MetricsConfiguration()
        if let textfile = map["textfile"] {
            let path = try scalar(textfile, key: "metrics.textfile")
            guard !path.isEmpty else {
                throw ConfigurationError(.invalidValue, file: file, key: "metrics.textfile", "empty; give a file such as /var/lib/strata/metrics/stratad.prom, or leave the key out", line: line(textfile))
            }
            guard path.hasSuffix(".prom") else {
                throw ConfigurationError(.invalidValue, file: file, key: "metrics.textfile", "'\(path)' does not end in .prom, and node_exporter's textfile collector reads only *.prom files", line: line(textfile))
            }
            metrics.textfile = path
        }
        if let value = map["interval"] {
            metrics.interval = try duration(value, key: "metrics.interval", in: MetricsConfiguration.intervalRange, examples: "15s, 1m")
        }
        return metrics
    }

    private func count(_ node: Node, key: String, range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        let text = try scalar(node, key: key)
        guard let count = Int(text), range.contains(count) else {
            throw ConfigurationError(.invalidValue, file: file, key: key, "'\(text)' is not an integer between \(range.lowerBound) and \(range.upperBound)", line: line(node))
        }
        return count
    }

    // MARK: - Typed values

    private func line(_ node: Node) -> Int? { node.mark.map { $0.line } }

    /// A list of user or group names (`kind`) as the ids `lookup` finds for them.
    private func ids(_ node: Node, key: String, of kind: String, lookup: (String) -> UInt32?) throws(ConfigurationError) -> [UInt32] {
        try sequence(node, key: key).enumerated().map { (i, node) throws(ConfigurationError) in
            let name = try scalar(node, key: "\(key)[\(i)]")
            guard let id = lookup(name) else {
                throw ConfigurationError(.invalidValue, file: file, key: "\(key)[\(i)]", "no \(kind) '\(name)' on this system", line: line(node))
            }
            return id
        }
    }

    private func mapping(_ node: Node, key: String, allowed: Set<String>) throws(ConfigurationError) -> [String: Node] {
        guard case .mapping(let mapping) = node else {
            throw ConfigurationError(.wrongType, file: file, key: key.isEmpty ? "(top level)" : key, "expected a mapping of keys to values, found \(describe(node))", line: line(node))
        }
        var result: [String: Node] = [:]
        for (keyNode, value) in mapping {
            let name = keyNode.string ?? ""
            let path = key.isEmpty ? name : "\(key).\(name)"
            guard allowed.contains(name) else {
                let hint = ConfigurationReader.closest(name, in: allowed).map { "; did you mean '\($0)'?" } ?? "; known keys: \(allowed.sorted().joined(separator: ", "))"
                throw ConfigurationError(.unknownKey, file: file, key: path, "unknown key\(hint)", line: line(keyNode))
            }
            result[name] = value
        }
        return result
    }

    private func sequence(_ node: Node, key: String) throws(ConfigurationError) -> [Node] {
        guard case .sequence(let sequence) = node else {
            throw ConfigurationError(.wrongType, file: file, key: key, "expected a list, found \(describe(node))", line: line(node))
        }
        return Array(sequence)
    }

    private func scalar(_ node: Node, key: String) throws(ConfigurationError) -> String {
        guard case .scalar(let scalar) = node else {
            throw ConfigurationError(.wrongType, file: file, key: key, "expected a single value, found \(describe(node))", line: line(node))
        }
        return scalar.string
    }

    private func bool(_ node: Node, key: String) throws(ConfigurationError) -> Bool {
        let text = try scalar(node, key: key)
        guard let value = node.bool else {
            throw ConfigurationError(.wrongType, file: file, key: key, "expected true or false, found '\(text)'", line: line(node))
        }
        return value
    }

    private func duration(_ node: Node, key: String, in range: ClosedRange<Duration> = .zero ... DurationText.longest,
                          examples: String = "500ms, 30s, 5m, 1h") throws(ConfigurationError) -> Duration {
        let text = try scalar(node, key: key)
        guard let value = DurationText.parse(text), range.contains(value) else {
            throw ConfigurationError(.invalidValue, file: file, key: key, "'\(text)' is not a duration between \(DurationText.format(range.lowerBound)) and \(DurationText.format(range.upperBound)) (e.g. \(examples))", line: line(node))
        }
        return value
    }

    private func describe(_ node: Node) -> String {
        switch node {
        case .scalar(let s): return "'\(s.string)'"
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .alias: return "an alias"
        }
    }

    /// The allowed key closest to a misspelt one (edit distance at most 2).
    static func closest(_ name: String, in candidates: Set<String>) -> String? {
        func distance(_ a: [Character], _ b: [Character]) -> Int {
            var previous = Array(0...b.count)
            for (i, ca) in a.enumerated() {
                var current = [i + 1]
                for (j, cb) in b.enumerated() {
                    current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (ca == cb ? 0 : 1)))
                }
                previous = current
            }
            return previous[b.count]
        }
        let scored = candidates.map { ($0, distance(Array(name), Array($0))) }.filter { $0.1 <= 2 }
        return scored.min { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0 < $1.0) }?.0
    }
}
