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
    // Generated from the .varlink file at build time (VarlinkCodegenPlugin): the name and definition
    // (`name`, `definition`), the methods (`methods`, each with its Parameters and Reply)
    // in StrataAdmin+Methods.swift, the named types in StrataAdmin+Types.swift, the errors
    // (`errors`, each error's parameters, `Failure`) in StrataAdmin+Errors.swift.

    /// The reply of `Pause` and `Resume`.
    public struct SchedulerReply: Codable, Sendable, Hashable {
        /// The idle scheduler's state and statistics.
        public var scheduler: SchedulerInfo
        /// Memberwise initializer.
        public init(scheduler: SchedulerInfo) { self.scheduler = scheduler }
    }
}
