import Foundation
import GRDB

extension PersistentStore {
    /// The page sizes ``history(since:entities:limit:)`` accepts.
    public static let historyPageLimits: ClosedRange<Int> = 1...10_000

    /// The latest history token of the store (0 when nothing was ever recorded): pass it as
    /// `since` to follow only what happens from now on.
    public func latestHistoryToken() throws(HistoryError) -> Int64 {
        try readHistory("reading the latest history token") { db in try HistorySchema.latestToken(in: db) }
    }

    /// The oldest `since` token history can still answer: everything up to it was purged.
    public func historyPurgedThrough() throws(HistoryError) -> Int64 {
        try readHistory("reading the history horizon") { db in
            try db.tableExists(MetadataSchema.metadataTable) ? try HistorySchema.purgedThrough(in: db) : 0
        }
    }

    /// The transactions committed after `token`, oldest first (Core Data's
    /// `NSPersistentHistoryChangeRequest.fetchHistory(after:)`).
    ///
    /// ```swift
    /// var token = try store.latestHistoryToken()
    /// // … later:
    /// let page = try store.history(since: token, entities: ["Aircraft"])
    /// for transaction in page.transactions { apply(transaction) }
    /// token = page.next
    /// ```
    ///
    /// With `entities`, only transactions that changed one of them are returned (gaps always
    /// are), each with only those changes; `next` still moves past the others. A page reads at
    /// most `limit` matching transactions and at most 10 × `limit` in all, so a filter that
    /// matches rarely returns short pages: continue from `next` until it equals `latest`.
    ///
    /// - Throws: ``HistoryError`` `invalidToken` (negative, or newer than ``latestHistoryToken()``),
    ///   `expired` (older than the retained history: refetch, then follow from `latest`),
    ///   `unknownEntity`, `limitOutOfRange` (outside ``historyPageLimits``), `store`.
    public func history(since token: Int64 = 0, entities: Set<String>? = nil, limit: Int = 1_000) throws(HistoryError) -> HistoryPage {
        guard Self.historyPageLimits.contains(limit) else {
            throw HistoryError(.limitOutOfRange, path: path, "a history page holds \(Self.historyPageLimits.lowerBound) to \(Self.historyPageLimits.upperBound) transactions, not \(limit); page with a smaller limit and the page's next token")
        }
        guard token >= 0 else {
            throw HistoryError(.invalidToken, path: path, "history token \(token) is negative; tokens start at 0 (everything) and grow with each transaction", token: token)
        }
        return try readHistory("reading history since token \(token)") { db in
            guard try HistorySchema.exists(in: db) else {
                if token > 0 { throw HistoryError(.invalidToken, path: path, "history token \(token) is newer than the store's latest token 0; use a token the store gave", token: token, latest: 0) }
                return HistoryPage(transactions: [], next: 0, latest: 0)
            }
            let latest = try HistorySchema.latestToken(in: db)
            guard token <= latest else {
                throw HistoryError(.invalidToken, path: path, "history token \(token) is newer than the store's latest token \(latest); use a token the store gave (a token from another store, or from before the store was replaced, does not apply)", token: token, latest: latest)
            }
            let purged = try HistorySchema.purgedThrough(in: db)
            guard token >= purged else {
                throw HistoryError(.expired, path: path, "history token \(token) has expired: transactions up to \(purged) were purged (history retention); refetch what you follow, then continue from token \(latest)", token: token, purgedThrough: purged, latest: latest)
            }
            var entityIDs: Set<Int64>?
            if let entities {
                let ids = try HistorySchema.entityIDs(entities, in: db)
                for name in entities.sorted() where model.entity(named: name) == nil {
                    guard try HistorySchema.entityIDs([name], in: db).isEmpty else { continue }
                    throw HistoryError(.unknownEntity, path: path, "entity '\(name)' is not in model '\(model.version)' and has no history; known entities: \(model.entities.map(\.name).sorted().joined(separator: ", "))", entity: name)
                }
                entityIDs = ids
            }
            return try HistoryReader.page(since: token, entityIDs: entityIDs, limit: limit, latest: latest, in: db)
        }
    }

    /// Writes a gap transaction when another process wrote the store without recording history
    /// since this store's last recorded commit (`PRAGMA data_version` moved, the latest token
    /// did not). A save checks this by itself; a process that follows history without saving
    /// (the daemon's observers) calls it now and then. Returns the gap's token, or nil.
    @discardableResult
    public func recordExternalWrites() throws(HistoryError) -> Int64? {
        guard !options.readOnly, options.recordsHistory else { return nil }
        do {
            let state = historyState
            // Cheap first look on the writer: nothing moved, nothing to write.
            let moved = try database.writeWithoutTransaction { db -> Bool in
                let version = try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0
                return state.tracking.withLock { $0.dataVersion.map { $0 != version } ?? false }
            }
            guard moved else { return nil }
            let result = try database.write { db -> (Int64?, Int64) in
                guard try HistorySchema.exists(in: db) else { return (nil, 0) }
                let dataVersion = try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0
                let gap = try HistoryRecorder.recordGapIfNeeded(tracking: state.tracking.withLock { $0 }, dataVersion: dataVersion, in: db)
                let latest = try HistorySchema.latestToken(in: db)
                let horizon = try HistorySchema.purgedThrough(in: db)
                db.afterNextTransaction(onCommit: { _ in
                    state.tracking.withLock { tracking in
                        tracking.dataVersion = dataVersion
                        tracking.latestToken = max(tracking.latestToken, latest)
                        tracking.purgedThrough = max(tracking.purgedThrough, horizon)
                    }
                })
                return (gap, latest)
            }
            if let gap = result.0 { state.publish(gap) }
            return result.0
        } catch {
            throw HistoryError(.store, path: path, "checking for writes by other processes failed: \(error)", storeError: StoreError.from(error, path: path, while: "checking for external writes"))
        }
    }

    /// A sequence of the transactions committed after `token` (nil: from now on), read page
    /// by page from the store as they commit; it ends when the task is cancelled or the store
    /// closes. Memory stays bounded by one page however far behind the consumer is.
    ///
    /// ```swift
    /// for try await transaction in store.changes(entities: ["Aircraft"]) {
    ///     print(transaction.token, transaction.changes.map(\.objectID))
    /// }
    /// ```
    public func changes(since token: Int64? = nil, entities: Set<String>? = nil) -> HistoryObservation {
        HistoryObservation(store: self, since: token, entities: entities)
    }

    /// The tokens of transactions as they commit in this process (and gaps as they are
    /// recorded), newest only while the consumer is busy: a wake-up to read
    /// ``history(since:entities:limit:)``, not a record. Ends when the store closes.
    public func historyCommits() -> AsyncStream<Int64> {
        historyState.subscribe().tokens
    }

    func readHistory<T>(_ action: String, _ body: (Database) throws -> T) throws(HistoryError) -> T {
        do {
            return try readThroughLanes(body)
        } catch let error as HistoryError {
            throw error
        } catch {
            let storeError = StoreError.from(error, path: path, while: action)
            throw HistoryError(.store, path: path, storeError.reason, storeError: storeError)
        }
    }
}
