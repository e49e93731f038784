import Foundation
import GRDB
import Strata
import StrataVarlink
import Synchronization

extension StoreInterface {
    /// Transactions an observer reads from the store per page.
    static let observePageSize = 100

    /// What an observation filters: entities, and a predicate on the objects as they are now.
    struct ObserveFilter: Sendable {
        /// The entities observed, by the store's names.
        var entities: Set<String>?
        var predicate: FetchPredicate?
        /// The served older version (``VersionBridge``): the predicate is in its names, and
        /// transactions are sent in them.
        var bridge: VersionBridge?
        /// The entity the predicate is about, in the caller's names.
        var predicateEntity: String?

        /// - Throws: `InvalidParameter` (`predicate` without exactly one entity), the library's
        ///   `FetchPredicateError` for a predicate that does not parse or names no property.
        init(_ parameters: StrataStore.Observe.Parameters, model: ObjectModel, bridge: VersionBridge? = nil) throws {
            self.bridge = bridge
            let named = parameters.entities.map(Set.init)
            entities = named.map { bridge?.currentNames(ofEntities: $0) ?? $0 }
            if let text = parameters.predicate {
                guard let named, named.count == 1, let entity = named.first else {
                    throw VarlinkError.invalidParameter("predicate")
                }
                let predicate = try FetchPredicate(format: text, arguments: [])
                let served = bridge?.servedModel ?? model
                if let known = served.entity(named: entity) {
                    // Compiled once now, so that a predicate naming no property fails at the call.
                    var request = FetchRequest(entityName: known.name)
                    request.predicate = predicate
                    _ = try FetchQuery.selectPrimaryKeys(request, layout: bridge?.layout ?? StorageLayout(model: model))
                }
                self.predicate = predicate
                predicateEntity = entity
            }
        }

        /// `transaction` in the caller's names (an older version's: ``VersionBridge/served(_:)``).
        func named(_ transaction: HistoryTransaction) -> HistoryTransaction? {
            bridge.map { $0.served(transaction) } ?? transaction
        }

        /// `transaction` with only the changes of ``entities`` (all without a filter); nil when
        /// none is left (gaps always pass).
        func entitiesOnly(_ transaction: HistoryTransaction) -> HistoryTransaction? {
            guard let entities, transaction.kind == .objects else { return transaction }
            var result = transaction
            result.changes = transaction.changes.filter { entities.contains($0.entity) }
            return result.changes.isEmpty ? nil : result
        }

        /// `transaction` with only the changes that pass: inserts and updates of objects that
        /// match the predicate now, and every delete; nil when none passes (gaps always do).
        func apply(_ transaction: HistoryTransaction, store: PersistentStore) throws -> HistoryTransaction? {
            guard let predicate, transaction.kind == .objects, let entity = predicateEntity else { return transaction }
            let candidates = transaction.changes.filter { $0.kind != .delete }.map(\.primaryKey)
            var matching: Set<Int64> = []
            if !candidates.isEmpty, (bridge?.servedModel ?? store.model).entity(named: entity) != nil {
                var request = FetchRequest(entityName: entity)
                request.predicate = predicate
                let inner = try FetchQuery.selectPrimaryKeys(request, layout: bridge?.layout ?? store.layout)
                for chunk in stride(from: 0, to: candidates.count, by: 500).map({ Array(candidates[$0..<min($0 + 500, candidates.count)]) }) {
                    let marks = chunk.map { _ in "?" }.joined(separator: ",")
                    let sql = "SELECT \"_pk\" FROM (\(inner.sql)) WHERE \"_pk\" IN (\(marks))"
                    var arguments = inner.statementArguments
                    arguments += StatementArguments(chunk)
                    matching.formUnion(try store.database.read { db in try Int64.fetchSet(db, sql: sql, arguments: arguments) })
                }
            }
            var result = transaction
            result.changes = transaction.changes.filter { $0.kind == .delete || matching.contains($0.primaryKey) }
            return result.changes.isEmpty ? nil : result
        }
    }

    /// `transaction` as one `Observe` reply message (no NUL terminator).
    static func observeMessage(_ transaction: HistoryTransaction) throws -> Data {
        try VarlinkReplies<StrataStore.Observe.Reply>.message(.init(transaction: Self.transaction(transaction), token: transaction.token))
    }

    /// `Observe`: replies once where the observation starts, reads by itself what committed
    /// between `since` and the moment it joined its store's ``ObserverFeed``, then sends what
    /// the feed hands it (one shared read per commit, filtered here), several transactions in
    /// one write when it is behind. An observer with more than `limits.maxObserverQueue`
    /// transactions waiting gets `ObserverOverflow` (naming the limit and its resume token),
    /// and its connection is closed once it takes nothing for `limits.observerGrace`; the others never wait for it.
    /// When the daemon shuts down the observer ends at once with `ShuttingDown` (naming the
    /// token to resume from); when its peer closes the connection it ends at once, without a
    /// commit to find the socket gone (``VarlinkCallEnding``).
    static func observe(_ parameters: StrataStore.Observe.Parameters, on hosted: HostedStore, context: VarlinkCallContext,
                        replies: VarlinkReplies<StrataStore.Observe.Reply>, limits: Limits) async throws -> StrataStore.Observe.Reply {
        guard replies.more else { throw VarlinkError.expectedMore() }
        let queueLimit = limits.maxObserverQueue
        let grace = limits.observerGrace
        let (filter, start) = try await run(hosted, limits: limits, version: parameters.version) { context -> (ObserveFilter, Int64) in
            let store = context.store
            let filter = try ObserveFilter(parameters, model: store.model, bridge: context.servedBridge)
            // Validates since (expired, negative, future) and the entities, as History does.
            let page = try store.history(since: parameters.since ?? store.latestHistoryToken(), entities: filter.entities, limit: 1)
            return (filter, parameters.since ?? page.latest)
        }
        let inbox = ObserverInbox(limit: queueLimit) { inbox in
            context.logger.notice("observer fell behind, closing its connection", metadata: [
                "strata.store": "\(hosted.name)", "strata.peer": "\(context.peer.map(\.description) ?? "?")",
                "strata.limit": "\(queueLimit)",
            ])
            // While the client still reads, it is given time to read what was sent and the
            // error; one that takes nothing for a whole grace period is closed.
            Task {
                var seen = inbox.progress.writes
                while true {
                    try? await Task.sleep(for: grace)
                    let (writes, finished) = inbox.progress
                    if writes == seen || finished { break }
                    seen = writes
                }
                if inbox.progress.finished { try? await Task.sleep(for: grace) }
                context.closeConnection()
            }
        }
        defer { inbox.end(.cancelled) }
        context.ending.onEnd { reason in inbox.end(.interrupted(reason)) }
        let joined = try await hosted.observerFeed.subscribe(inbox, on: hosted)
        var cursor = start
        try await replies.progress(.init(transaction: nil, token: cursor))
        func overflow() -> StrataStore.Failure {
            let cursor = max(cursor, inbox.delivered)
            return .observerOverflow(.init(store: hosted.name, limit: queueLimit, token: cursor, reason:
                "the observer fell more than \(queueLimit) transactions behind (limits.max_observer_queue); the connection is closed — read faster, filter with entities, or resume with Observe or History since token \(cursor)"))
        }
        /// Sends `transactions` in one write; false when the client went away.
        func send(_ transactions: [(token: Int64, message: Data)]) async -> Bool {
            guard let last = transactions.last else { return true }
            do {
                try await replies.progress(encoded: VarlinkReply.joined(transactions.lazy.map(\.message)))
            } catch {
                // The client went away (or was closed for overflow): nobody to tell.
                context.logger.debug("observer gone", metadata: ["strata.store": "\(hosted.name)", "strata.error": "\(error)"])
                return false
            }
            cursor = last.token
            inbox.wrote()
            return true
        }
        /// The call's end when the daemon shuts down or the peer went: `ShuttingDown` naming the
        /// token to resume from, or the last reply nobody will read.
        func interrupted(_ reason: VarlinkCallEnding.Reason) throws -> StrataStore.Observe.Reply {
            let cursor = max(cursor, inbox.delivered)
            guard reason == .shutdown else { return .init(transaction: nil, token: cursor) }
            throw VarlinkError.shuttingDown(reason: "stratad is stopping: observe again with since \(cursor) once it is back")
        }
        // What committed before the feed took this observer on: read here, page by page.
        while cursor < joined {
            if let reason = context.ending.reason { return try interrupted(reason) }
            let from = cursor
            let (transactions, next) = try await run(hosted, limits: limits) { context -> ([HistoryTransaction], Int64) in
                let page = try context.store.history(since: from, entities: filter.entities, limit: observePageSize)
                let before = page.transactions.filter { $0.token <= joined }
                return (try before.compactMap { try filter.apply($0, store: context.store).flatMap(filter.named) }, page.next)
            }
            let messages = try transactions.map { ($0.token, try observeMessage($0)) }
            guard await send(messages) else { return .init(transaction: nil, token: cursor) }
            if inbox.overflowed { throw overflow() }
            cursor = next > from ? min(next, joined) : joined
        }
        // Then what the feed hands over: written by the feed itself while this observer takes
        // every transaction and keeps up; queued here for it to send otherwise.
        // An older version's observer gets its transactions renamed: never the shared messages.
        let shared = filter.entities == nil && filter.bridge == nil
        if shared { inbox.writeDirectly { messages in replies.tryProgress(encoded: messages) } }
        for await _ in inbox.wakeups {
            let (items, ending) = inbox.take()
            if case .overflow? = ending { throw overflow() }
            if case .interrupted(let reason)? = ending, reason == .peerClosed { return try interrupted(reason) }
            cursor = max(cursor, inbox.delivered)
            let fresh = items.filter { $0.token > cursor }
            var messages: [(token: Int64, message: Data)] = []
            if shared {
                messages = fresh.map { ($0.token, $0.message) }
            } else {
                let transactions = fresh.compactMap { filter.entitiesOnly($0.transaction) }
                let passing = filter.predicate == nil ? transactions : try await run(hosted, limits: limits) { context in
                    try transactions.compactMap { try filter.apply($0, store: context.store) }
                }
                messages = try passing.compactMap(filter.named).map { ($0.token, try observeMessage($0)) }
            }
            guard await send(messages) else { return .init(transaction: nil, token: cursor) }
            inbox.sent()
            if case .failed(let error)? = ending {
                if let error = error as? any VarlinkErrorConvertible { throw error }
                throw failure(error, store: hosted.name) ?? error
            }
            if case .interrupted(let reason)? = ending { return try interrupted(reason) }
            if ending != nil { break }
        }
        throw HostingError.unavailable(store: hosted.name, reason: "the store closed; observe again once it is back")
    }
}
