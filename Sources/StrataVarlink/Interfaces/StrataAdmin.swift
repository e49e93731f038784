import Foundation

/// `io.strata.Admin` (`varlink/io.strata.Admin.varlink`): the Swift types of its methods,
/// replies and errors, shared by `stratad` (which serves them) and `stratactl` (which calls
/// them).
///
/// ```swift
/// try await VarlinkClient.withConnection(to: "/run/strata/admin.sock") { admin in
///     let status = try await admin.call(StrataAdmin.Status.self)
///     print(status.status, status.scheduler.reason)
/// }
/// ```
public enum StrataAdmin: VarlinkInterfaceDefinition {
    public static let name = "io.strata.Admin"
    public static var definition: String { InterfaceDefinitions.admin }

    public static let methods: [any VarlinkMethod.Type] = [
        Status.self, ListStores.self, Pending.self, FinishDeferred.self, Pause.self, Resume.self, GetSettings.self,
        SetSetting.self, Checkpoint.self, Backup.self, Reload.self, Metrics.self,
    ]

    public static let errors: [any VarlinkErrorParameters.Type] = [
        NoSuchStore.self, StoreUnavailable.self, StoreFailure.self, UnknownSetting.self, InvalidSetting.self,
        AlreadyRunning.self, ReloadFailed.self,
    ]

    // MARK: - Methods

    /// The daemon: version, uptime, the `STATUS=` line, stores and scheduler.
    public enum Status: VarlinkMethod {
        public typealias Interface = StrataAdmin
        public static let name = "Status"
        public typealias Parameters = VarlinkEmpty

        public struct Reply: Codable, Sendable, Hashable {
            public var version: String
            public var pid: Int
            public var uptimeSeconds: Double
            public var status: String
            public var stores: [StoreInfo]
            public var scheduler: SchedulerInfo

            public init(version: String, pid: Int, uptimeSeconds: Double, status: String, stores: [StoreInfo], scheduler: SchedulerInfo) {
                self.version = version
                self.pid = pid
                self.uptimeSeconds = uptimeSeconds
                self.status = status
                self.stores = stores
                self.scheduler = scheduler
            }
        }
    }

    public enum ListStores: VarlinkMethod {
        public typealias Interface = StrataAdmin
        public static let name = "ListStores"
        public typealias Parameters = VarlinkEmpty

        public struct Reply: Codable, Sendable, Hashable {
            public var stores: [StoreInfo]
            public init(stores: [StoreInfo]) { self.stores = stores }
        }
    }

    /// Pending deferred work of one store, or of all stores.
    public enum Pending: VarlinkMethod {
        public typealias Interface = StrataAdmin
        public static let name = "Pending"

        public struct Parameters: Codable, Sendable, Hashable {
            public var store: String?
            public init(store: String? = nil) { self.store = store }
        }

        public struct Reply: Codable, Sendable, Hashable {
            public var stores: [StorePending]
            public init(stores: [StorePending]) { self.stores = stores }
        }
    }

    /// Finishes deferred work of one store (or all); see the IDL for `wait`, `now` and the
    /// states (`skipped`, `started`, `running`, `finished`, `stopped`, `failed`).
    public enum FinishDeferred: VarlinkMethod {
        public typealias Interface = StrataAdmin
        public static let name = "FinishDeferred"

        public struct Parameters: Codable, Sendable, Hashable {
            public var store: String?
            public var wait: Bool?
            public var now: Bool?
            public init(store: String? = nil, wait: Bool? = nil, now: Bool? = nil) {
                self.store = store
                self.wait = wait
                self.now = now
            }
        }

        public struct Reply: Codable, Sendable, Hashable {
            public var state: String
            public var reason: String?
            public var progress: FinishProgress?
            public var results: [FinishResult]

            public init(state: String, reason: String? = nil, progress: FinishProgress? = nil, results: [FinishResult] = []) {
                self.state = state
                self.reason = reason
                self.progress = progress
                self.results = results
            }
        }
    }

    public enum Pause: VarlinkMethod {
        public typealias Interface = StrataAdmin
        public static let name = "Pause"

        public struct Parameters: Codable, Sendable, Hashable {
            public var reason: String?
            public init(reason: String? = nil) { self.reason = reason }
        }

        public typealias Reply = SchedulerReply
    }

    public enum Resume: VarlinkMethod {
        public typealias Interface = StrataAdmin
        public static let name = "Resume"
        public typealias Parameters = VarlinkEmpty
        public typealias Reply = SchedulerReply
    }

    /// The reply of `Pause` and `Resume`.
    public struct SchedulerReply: Codable, Sendable, Hashable {
        public var scheduler: SchedulerInfo
        public init(scheduler: SchedulerInfo) { self.scheduler = scheduler }
    }

    /// Settings (all, or the one named by key: gh-ost's `key=?`).
    public enum GetSettings: VarlinkMethod {
        public typealias Interface = StrataAdmin
        public static let name = "GetSettings"

        public struct Parameters: Codable, Sendable, Hashable {
            public var key: String?
            public init(key: String? = nil) { self.key = key }
        }

        public struct Reply: Codable, Sendable, Hashable {
            public var settings: [Setting]
            public init(settings: [Setting]) { self.settings = settings }
        }
    }

    /// Changes a setting at run time (gh-ost's `key=value`).
    public enum SetSetting: VarlinkMethod {
        public typealias Interface = StrataAdmin
        public static let name = "SetSetting"

        public struct Parameters: Codable, Sendable, Hashable {
            public var key: String
            public var value: String
            public init(key: String, value: String) {
                self.key = key
                self.value = value
            }
        }

        public struct Reply: Codable, Sendable, Hashable {
            public var setting: Setting
            public var previous: String
            public init(setting: Setting, previous: String) {
                self.setting = setting
                self.previous = previous
            }
        }
    }

    /// Checkpoints a store's WAL into its main file.
    public enum Checkpoint: VarlinkMethod {
        public typealias Interface = StrataAdmin
        public static let name = "Checkpoint"

        public struct Parameters: Codable, Sendable, Hashable {
            public var store: String
            public init(store: String) { self.store = store }
        }

        public struct Reply: Codable, Sendable, Hashable {
            public var store: String
            public var seconds: Double
            public init(store: String, seconds: Double) {
                self.store = store
                self.seconds = seconds
            }
        }
    }

    /// Writes a consistent copy of a store to `path` (absolute; must not exist).
    public enum Backup: VarlinkMethod {
        public typealias Interface = StrataAdmin
        public static let name = "Backup"

        public struct Parameters: Codable, Sendable, Hashable {
            public var store: String
            public var path: String
            public init(store: String, path: String) {
                self.store = store
                self.path = path
            }
        }

        public struct Reply: Codable, Sendable, Hashable {
            public var store: String
            public var path: String
            public var bytes: Int64
            public init(store: String, path: String, bytes: Int64) {
                self.store = store
                self.path = path
                self.bytes = bytes
            }
        }
    }

    /// Re-reads the configuration: opens added stores, closes removed ones.
    public enum Reload: VarlinkMethod {
        public typealias Interface = StrataAdmin
        public static let name = "Reload"
        public typealias Parameters = VarlinkEmpty

        public struct Reply: Codable, Sendable, Hashable {
            public var status: String
            public var opened: [String]
            public var closed: [String]
            public init(status: String, opened: [String], closed: [String]) {
                self.status = status
                self.opened = opened
                self.closed = closed
            }
        }
    }

    /// The daemon's metrics in the Prometheus text exposition format.
    public enum Metrics: VarlinkMethod {
        public typealias Interface = StrataAdmin
        public static let name = "Metrics"
        public typealias Parameters = VarlinkEmpty

        public struct Reply: Codable, Sendable, Hashable {
            public var text: String
            public init(text: String) { self.text = text }
        }
    }
}
