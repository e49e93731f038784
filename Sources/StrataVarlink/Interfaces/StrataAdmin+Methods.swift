import Foundation

// Generated from varlink/io.strata.Admin.varlink and varlink/io.strata.Admin.swift.json:
// the methods (`method …` in the IDL), each with its Parameters and Reply. Do not edit: change those files and run
// scripts/generate-varlink-definitions.sh (InterfaceDefinitionTests checks it was run).

extension StrataAdmin {
    /// The interface's methods.
    public static let methods: [any VarlinkMethod.Type] = [
        Status.self, ListStores.self, Pending.self, FinishDeferred.self, Pause.self, Resume.self, GetSettings.self, SetSetting.self,
        Checkpoint.self, Backup.self, Reload.self, Metrics.self,
    ]

    /// The daemon: version, uptime, the `STATUS=` line, stores and scheduler.
    public enum Status: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = StrataAdmin
        /// The name on the wire.
        public static let name = "Status"
        /// The method takes no parameters.
        public typealias Parameters = VarlinkEmpty

        /// What the method replies.
        public struct Reply: Codable, Sendable, Hashable {
            /// The daemon's version.
            public var version: String
            /// The daemon's process id.
            public var pid: Int
            /// Seconds since the daemon started.
            public var uptimeSeconds: Double
            /// The status line (`STATUS=`).
            public var status: String
            /// The stores, in configuration order.
            public var stores: [StoreInfo]
            /// The idle scheduler's state and statistics.
            public var scheduler: SchedulerInfo

            /// Memberwise initializer.
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

    /// The hosted stores and their state.
    public enum ListStores: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = StrataAdmin
        /// The name on the wire.
        public static let name = "ListStores"
        /// The method takes no parameters.
        public typealias Parameters = VarlinkEmpty

        /// What the method replies.
        public struct Reply: Codable, Sendable, Hashable {
            /// The stores, in configuration order.
            public var stores: [StoreInfo]

            /// Memberwise initializer.
            public init(stores: [StoreInfo]) {
                self.stores = stores
            }
        }
    }

    /// Pending deferred work of one store, or of all stores.
    public enum Pending: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = StrataAdmin
        /// The name on the wire.
        public static let name = "Pending"

        /// What the method takes.
        public struct Parameters: Codable, Sendable, Hashable {
            /// The store's name (as configured).
            public var store: String?

            /// Memberwise initializer.
            public init(store: String? = nil) {
                self.store = store
            }
        }

        /// What the method replies.
        public struct Reply: Codable, Sendable, Hashable {
            /// The stores, in configuration order.
            public var stores: [StorePending]

            /// Memberwise initializer.
            public init(stores: [StorePending]) {
                self.stores = stores
            }
        }
    }

    /// Finishes deferred work of one store (or all); see the IDL for `wait` and `now`.
    public enum FinishDeferred: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = StrataAdmin
        /// The name on the wire.
        public static let name = "FinishDeferred"

        /// What the method takes.
        public struct Parameters: Codable, Sendable, Hashable {
            /// The store's name (as configured).
            public var store: String?
            /// Reply when the work is done, streaming progress with `more`.
            public var wait: Bool?
            /// Run even when the scheduler is paused or the machine busy.
            public var now: Bool?

            /// Memberwise initializer.
            public init(store: String? = nil, wait: Bool? = nil, now: Bool? = nil) {
                self.store = store
                self.wait = wait
                self.now = now
            }
        }

        /// What the method replies.
        public struct Reply: Codable, Sendable, Hashable {
            /// Where the run is.
            public enum State: String, VarlinkStringEnum {
                case skipped, started, running, finished, stopped, failed
            }

            /// Skipped, started, running (a progress reply), finished, stopped or failed.
            public var state: State
            /// Why, in words, and what to do.
            public var reason: String?
            /// Progress of the run, after a batch.
            public var progress: FinishProgress?
            /// One result per store worked on.
            public var results: [FinishResult]

            /// Memberwise initializer.
            public init(state: State, reason: String? = nil, progress: FinishProgress? = nil, results: [FinishResult] = []) {
                self.state = state
                self.reason = reason
                self.progress = progress
                self.results = results
            }
        }
    }

    /// Pauses the idle scheduler (running work steps aside at the next batch).
    public enum Pause: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = StrataAdmin
        /// The name on the wire.
        public static let name = "Pause"

        /// What the method takes.
        public struct Parameters: Codable, Sendable, Hashable {
            /// Why, in words, and what to do.
            public var reason: String?

            /// Memberwise initializer.
            public init(reason: String? = nil) {
                self.reason = reason
            }
        }

        /// What the method replies.
        public typealias Reply = SchedulerReply
    }

    /// Resumes the idle scheduler.
    public enum Resume: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = StrataAdmin
        /// The name on the wire.
        public static let name = "Resume"
        /// The method takes no parameters.
        public typealias Parameters = VarlinkEmpty

        /// What the method replies.
        public typealias Reply = SchedulerReply
    }

    /// Settings (all, or the one named by key: gh-ost's `key=?`).
    public enum GetSettings: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = StrataAdmin
        /// The name on the wire.
        public static let name = "GetSettings"

        /// What the method takes.
        public struct Parameters: Codable, Sendable, Hashable {
            /// The setting's key.
            public var key: String?

            /// Memberwise initializer.
            public init(key: String? = nil) {
                self.key = key
            }
        }

        /// What the method replies.
        public struct Reply: Codable, Sendable, Hashable {
            /// The settings asked for, in display order.
            public var settings: [Setting]

            /// Memberwise initializer.
            public init(settings: [Setting]) {
                self.settings = settings
            }
        }
    }

    /// Changes a setting at run time (gh-ost's `key=value`).
    public enum SetSetting: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = StrataAdmin
        /// The name on the wire.
        public static let name = "SetSetting"

        /// What the method takes.
        public struct Parameters: Codable, Sendable, Hashable {
            /// The setting's key.
            public var key: String
            /// The new value, as text (parsed as the setting's type).
            public var value: String

            /// Memberwise initializer.
            public init(key: String, value: String) {
                self.key = key
                self.value = value
            }
        }

        /// What the method replies.
        public struct Reply: Codable, Sendable, Hashable {
            /// The setting after the change.
            public var setting: Setting
            /// The value before.
            public var previous: String

            /// Memberwise initializer.
            public init(setting: Setting, previous: String) {
                self.setting = setting
                self.previous = previous
            }
        }
    }

    /// Checkpoints a store's WAL into its main file.
    public enum Checkpoint: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = StrataAdmin
        /// The name on the wire.
        public static let name = "Checkpoint"

        /// What the method takes.
        public struct Parameters: Codable, Sendable, Hashable {
            /// The store's name (as configured).
            public var store: String

            /// Memberwise initializer.
            public init(store: String) {
                self.store = store
            }
        }

        /// What the method replies.
        public struct Reply: Codable, Sendable, Hashable {
            /// The store's name (as configured).
            public var store: String
            /// Wall-clock time of the run, in seconds.
            public var seconds: Double

            /// Memberwise initializer.
            public init(store: String, seconds: Double) {
                self.store = store
                self.seconds = seconds
            }
        }
    }

    /// Writes a consistent copy of a store to `path` (absolute; must not exist).
    public enum Backup: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = StrataAdmin
        /// The name on the wire.
        public static let name = "Backup"

        /// What the method takes.
        public struct Parameters: Codable, Sendable, Hashable {
            /// The store's name (as configured).
            public var store: String
            /// Where to write the copy (must not exist).
            public var path: String

            /// Memberwise initializer.
            public init(store: String, path: String) {
                self.store = store
                self.path = path
            }
        }

        /// What the method replies.
        public struct Reply: Codable, Sendable, Hashable {
            /// The store's name (as configured).
            public var store: String
            /// Where the copy was written.
            public var path: String
            /// Size in bytes.
            public var bytes: Int64

            /// Memberwise initializer.
            public init(store: String, path: String, bytes: Int64) {
                self.store = store
                self.path = path
                self.bytes = bytes
            }
        }
    }

    /// Re-reads the configuration: opens added stores, closes removed ones.
    public enum Reload: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = StrataAdmin
        /// The name on the wire.
        public static let name = "Reload"
        /// The method takes no parameters.
        public typealias Parameters = VarlinkEmpty

        /// What the method replies.
        public struct Reply: Codable, Sendable, Hashable {
            /// The status line (`STATUS=`).
            public var status: String
            /// Stores opened.
            public var opened: [String]
            /// Stores closed.
            public var closed: [String]

            /// Memberwise initializer.
            public init(status: String, opened: [String], closed: [String]) {
                self.status = status
                self.opened = opened
                self.closed = closed
            }
        }
    }

    /// The daemon's metrics in the Prometheus text exposition format.
    public enum Metrics: VarlinkMethod {
        /// The interface this belongs to.
        public typealias Interface = StrataAdmin
        /// The name on the wire.
        public static let name = "Metrics"
        /// The method takes no parameters.
        public typealias Parameters = VarlinkEmpty

        /// What the method replies.
        public struct Reply: Codable, Sendable, Hashable {
            /// The metrics in the Prometheus text format (0.0.4).
            public var text: String

            /// Memberwise initializer.
            public init(text: String) {
                self.text = text
            }
        }
    }
}
