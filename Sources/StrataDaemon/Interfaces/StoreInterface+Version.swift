import Foundation
import Strata
import StrataVarlink

extension StoreInterface {
    // MARK: - The store a call reaches

    /// Runs `body` with the hosted store `name`, after recording the call at its model version
    /// (``ClientVersions``: the version it names, or the store's). While a reload closes the
    /// store and opens it again, the call waits for it (``StoreRegistry/store(named:)``); a call
    /// refused because the store it reached closed under it for that (before it touched the
    /// store) goes to the reopened store once.
    ///
    /// `retry`: false for a call that may have replied already (an `Observe` stream): it ends
    /// with the refusal instead.
    static func serving<T: Sendable>(_ name: String, version: String?, registry: StoreRegistry, call: VarlinkCallContext, retry: Bool = true,
                                     _ body: (HostedStore) async throws -> T) async throws -> T {
        var hosted = try await registry.store(named: name)
        for attempt in 0..<2 {
            registry.clients.record(store: hosted.name, version: version ?? hosted.modelVersion ?? "?", named: version != nil, context: call)
            do {
                return try await body(hosted)
            } catch let error as HostingError where error.isClosedUnderTheCall {
                guard retry, attempt == 0, let next = try? await registry.store(named: name), next !== hosted else {
                    throw failure(error, store: name) ?? error
                }
                hosted = next
            }
        }
        preconditionFailure("unreachable: the second attempt returns or throws")
    }

    /// A context on `store` for a call at `version`: the store's own, or one that serves an
    /// older version (``ObjectContext/init(store:serving:)``).
    ///
    /// - Throws: ``VersionBridgeError`` when `version` cannot be served.
    static func context(on store: PersistentStore, hosted: HostedStore, version: String?) throws -> ObjectContext {
        guard let bridge = try bridge(on: store, hosted: hosted, version: version) else { return ObjectContext(store: store) }
        return ObjectContext(store: store, serving: bridge)
    }

    /// The bridge a call at `version` is served through; nil for the store's own version.
    static func bridge(on store: PersistentStore, hosted: HostedStore, version: String?) throws(VersionBridgeError) -> VersionBridge? {
        guard let version, version != store.model.version else { return nil }
        guard let versions = hosted.versions else {
            throw VersionBridgeError(.unknownVersion, version: version, current: store.model.version, reason: "only '\(store.model.version)' is served")
        }
        return try versions.bridge(for: version, store: store)
    }

    /// Refuses an insert the served version cannot make (the newer version requires a value
    /// it does not have: ``VersionBridge/insertRefusals``).
    static func checkInsert(_ operation: ObjectOperation, in context: ObjectContext, store: String) throws {
        guard operation.kind == .insert, let bridge = context.servedBridge, let reason = bridge.insertRefusals[operation.entity] else { return }
        throw VersionBridgeError(.notServable, version: bridge.version, current: bridge.currentVersion, reason: reason)
    }

    // MARK: - Errors

    /// `VersionNotServed` for `error`, with what to do: move the store (a newer version), or
    /// upgrade the client.
    static func versionNotServed(_ error: VersionBridgeError, hosted: HostedStore) -> StrataStore.Failure {
        var reason = error.reason
        switch error.code {
        case .newerVersion:
            reason += "; to move the store, set `version: \(error.version)` for store '\(hosted.name)' in stratad's configuration (its model directory \(hosted.configuration.modelDirectory) must have it) and run `stratactl reload`"
        case .unknownVersion:
            break
        case .notServable:
            reason += "; upgrade the client to '\(error.current)'"
        }
        return .versionNotServed(.init(store: hosted.name, version: error.version, current: error.current, reason: reason))
    }
}

extension HostingError {
    /// The store was closed under a call before the call touched it (a reload closing it to
    /// open it again): the call can go to the reopened store.
    var isClosedUnderTheCall: Bool {
        guard case .unavailable(_, let reason) = self else { return false }
        return reason == HostingError.closedReason
    }
}
