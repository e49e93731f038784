import Foundation
import GRDB
import Strata
import StrataVarlink
import Synchronization

extension StoreInterface {
    /// How long a connection whose observer overflowed may take to read what was already sent
    /// and the `ObserverOverflow` error before the daemon closes it.
    static let overflowCloseGrace: Duration = .seconds(1)
    /// Transactions an observer reads from the store per page.
    static let observePageSize = 100

    /// What an observation filters: entities, and a predicate on the objects as they are now.
    struct ObserveFilter: Sendable {
        var entities: Set<String>?
        var predicate: FetchPredicate?

        /// - Throws: `InvalidParameter` (`predicate` without exactly one entity), the library's
        ///   `FetchPredicateError` for a predicate that does not parse or names no property.
        init(_ parameters: StrataStore.Observe.Parameters, model: ObjectModel) throws {
            entities = parameters.entities.map(Set.init)
            if let text = parameters.predicate {
                guard let entities, entities.count == 1, let entity = entities.first else {
                    throw VarlinkError.invalidParameter("predicate")
                }
                let predicate = try FetchPredicate(format: text, arguments: [])
                if let known = model.entity(named: entity) {
                    // Compiled once now, so that a predicate naming no property fails at the call.
                    var request = FetchRequest(entityName: known.name)
                    request.predicate = predicate
                    _ = try FetchQuery.selectPrimaryKeys(request, layout: StorageLayout(model: model))
                }
                self.predicate = predicate
            }
        }

        /// `transaction` with only the changes that pass: inserts and updates of objects that
        /// match the predicate now, and every delete; nil when none passes (gaps always do).
        func apply(_ transaction: HistoryTransaction, store: PersistentStore) throws -> HistoryTransaction? {
            guard let predicate, transaction.kind == .objects, let entity = entities?.first else { return transaction }
            let candidates = transaction.changes.filter { $0.kind != .delete }.map(\.primaryKey)
            var matching: Set<Int64> = []
            if !candidates.isEmpty, store.model.entity(named: entity) != nil {
                var request = FetchRequest(entityName: entity)
                request.predicate = predicate
                let inner = try FetchQuery.selectPrimaryKeys(request, layout: store.layout)
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

    /// How far an observer is behind: the last token it consumed, against the store's head.
    final class ObserverLag: Sendable {
        private let state: Mutex<(consumed: Int64, overflowed: Bool)>
        let limit: Int

        init(start: Int64, limit: Int) {
            state = Mutex((start, false))
            self.limit = limit
        }

        var consumed: Int64 { state.withLock { $0.consumed } }
        var overflowed: Bool { state.withLock { $0.overflowed } }

        func consume(_ token: Int64) { state.withLock { $0.consumed = max($0.consumed, token) } }

        /// Whether the head `token` puts the observer past its limit (true once).
        func headMoved(to token: Int64) -> Bool {
            state.withLock { state in
                guard !state.overflowed, token - state.consumed > Int64(limit) else { return false }
                state.overflowed = true
                return true
            }
        }
    }

    /// `Observe`: replies once where the observation starts, then streams each transaction
    /// (filtered) as it commits, read page by page from the store; memory per observer is one
    /// page. An observer that falls more than `limits.maxObserverQueue` transactions behind the commits made
    /// since it started gets `ObserverOverflow`, and its connection is closed.
    static func observe(_ parameters: StrataStore.Observe.Parameters, on hosted: HostedStore, context: VarlinkCallContext,
                        replies: VarlinkReplies<StrataStore.Observe.Reply>, limits: Limits) async throws -> StrataStore.Observe.Reply {
        guard replies.more else { throw VarlinkError.expectedMore() }
        let queueLimit = limits.maxObserverQueue
        let (filter, start, latest) = try await run(hosted, limits: limits) { context -> (ObserveFilter, Int64, Int64) in
            let store = context.store
            let filter = try ObserveFilter(parameters, model: store.model)
            // Validates since (expired, negative, future) and the entities, as History does.
            let page = try store.history(since: parameters.since ?? store.latestHistoryToken(), entities: filter.entities, limit: 1)
            return (filter, parameters.since ?? page.latest, page.latest)
        }
        guard let store = hosted.store else { throw HostingError.unavailable(store: hosted.name, reason: "not open") }
        let commits = store.historyCommits()
        let lag = ObserverLag(start: max(start, latest), limit: queueLimit)
        // Watches the head while the observer may be blocked writing to a client that does not
        // read: past the limit, the connection closes after a grace period.
        let watch = Task {
            for await token in store.historyCommits() where lag.headMoved(to: token) {
                context.logger.notice("observer fell behind, closing its connection", metadata: [
                    "strata.store": "\(hosted.name)", "strata.peer": "\(context.peer.map(\.description) ?? "?")",
                    "strata.limit": "\(queueLimit)", "strata.token": "\(lag.consumed)",
                ])
                try? await Task.sleep(for: overflowCloseGrace)
                context.closeConnection()
                return
            }
        }
        defer { watch.cancel() }
        var cursor = start
        try await replies.progress(.init(transaction: nil, token: cursor))
        var wakeups = commits.makeAsyncIterator()
        while !Task.isCancelled {
            let from = cursor
            let (transactions, next, head) = try await run(hosted, limits: limits) { context -> ([HistoryTransaction], Int64, Int64) in
                let page = try context.store.history(since: from, entities: filter.entities, limit: observePageSize)
                return (try page.transactions.compactMap { try filter.apply($0, store: context.store) }, page.next, page.latest)
            }
            var delivered = from
            for transaction in transactions {
                if lag.overflowed { break }
                do {
                    try await replies.progress(.init(transaction: Self.transaction(transaction), token: transaction.token))
                } catch {
                    // The client went away (or was closed for overflow): nobody to tell.
                    context.logger.debug("observer gone", metadata: ["strata.store": "\(hosted.name)", "strata.error": "\(error)"])
                    return .init(transaction: nil, token: delivered)
                }
                delivered = transaction.token
            }
            if lag.overflowed {
                cursor = delivered
                throw StrataStore.Failure.observerOverflow(.init(
                    store: hosted.name, limit: queueLimit, token: cursor, reason:
                    "the observer fell more than \(queueLimit) transactions behind (limits.max_observer_queue); the connection is closed — read faster, filter with entities, or resume with Observe or History since token \(cursor)"))
            }
            cursor = next
            lag.consume(next)
            if next >= head, await wakeups.next() == nil { break }
        }
        throw HostingError.unavailable(store: hosted.name, reason: "the store closed; observe again once it is back")
    }
}
