import Foundation
import GRDB

/// What one purge batch did.
public struct HistoryPurgeBatch: Sendable, Hashable {
    /// Transactions removed.
    public var transactions: Int
    /// Change records removed. A record holds one object change, or a run of up to 1,024
    /// like changes of one transaction (same entity, kind and changed properties).
    public var changes: Int
    /// Whether every transaction up to the purge token is gone.
    public var isComplete: Bool
}

extension PersistentStore {
    /// The token a purge of everything committed before `date` goes up to (0 for nothing).
    public func historyToken(before date: Date) throws(HistoryError) -> Int64 {
        try readHistory("finding the history token before \(date)") { db in
            guard try HistorySchema.exists(in: db) else { return 0 }
            return try Int64.fetchOne(db, sql: "SELECT max(token) FROM \(HistorySchema.transactionsTable) WHERE at < ?",
                                      arguments: [date.timeIntervalSince1970]) ?? 0
        }
    }

    /// The token a purge that keeps only the last `count` transactions goes up to (0 for nothing).
    public func historyToken(keepingLast count: Int) throws(HistoryError) -> Int64 {
        try readHistory("finding the history token keeping \(count) transactions") { db in
            guard try HistorySchema.exists(in: db) else { return 0 }
            return try Int64.fetchOne(db, sql: "SELECT token FROM \(HistorySchema.transactionsTable) ORDER BY token DESC LIMIT 1 OFFSET ?",
                                      arguments: [max(0, count)]) ?? 0
        }
    }

    /// Removes one bounded batch of the history up to and including `token` (Core Data's
    /// `deleteHistory(before:)`): at most `batchSize` change records and `batchSize` transactions in
    /// one short write transaction. Call again until ``HistoryPurgeBatch/isComplete``.
    ///
    /// The first batch moves the history horizon to `token`: from then on, `since` tokens
    /// older than it get ``HistoryError/Code/expired``, so that no reader ever sees a
    /// transaction whose changes were half purged.
    ///
    /// ```swift
    /// let token = try store.historyToken(before: Date().addingTimeInterval(-7 * 86_400))
    /// while !(try store.purgeHistory(through: token).isComplete) {}
    /// ```
    ///
    /// - Throws: ``HistoryError`` `invalidToken` (negative or newer than the latest), `store`.
    @discardableResult
    public func purgeHistory(through token: Int64, batchSize: Int = 1_000) throws(HistoryError) -> HistoryPurgeBatch {
        guard token >= 0 else {
            throw HistoryError(.invalidToken, path: path, "cannot purge through token \(token): tokens are 0 or more", token: token)
        }
        let batch = min(max(batchSize, 1), 100_000)
        do {
            return try database.write { db -> HistoryPurgeBatch in
                guard try HistorySchema.exists(in: db) else { return HistoryPurgeBatch(transactions: 0, changes: 0, isComplete: true) }
                let latest = try HistorySchema.latestToken(in: db)
                guard token <= latest else {
                    throw HistoryError(.invalidToken, path: path, "cannot purge through token \(token): the store's latest token is \(latest)", token: token, latest: latest)
                }
                if try HistorySchema.purgedThrough(in: db) < token {
                    try HistorySchema.setPurgedThrough(token, in: db)
                    // This process's own purge: the writer's gap check keeps its horizon current.
                    let state = historyState
                    db.afterNextTransaction(onCommit: { _ in
                        state.tracking.withLock { $0.purgedThrough = max($0.purgedThrough, token) }
                    })
                }
                try db.execute(sql: """
                    DELETE FROM \(HistorySchema.changesTable) WHERE (token, seq) IN
                      (SELECT token, seq FROM \(HistorySchema.changesTable) WHERE token <= ? ORDER BY token, seq LIMIT ?)
                    """, arguments: [token, batch])
                let changes = db.changesCount
                guard changes < batch else { return HistoryPurgeBatch(transactions: 0, changes: changes, isComplete: false) }
                try db.execute(sql: """
                    DELETE FROM \(HistorySchema.transactionsTable) WHERE token IN
                      (SELECT token FROM \(HistorySchema.transactionsTable) WHERE token <= ? ORDER BY token LIMIT ?)
                    """, arguments: [token, batch])
                let transactions = db.changesCount
                return HistoryPurgeBatch(transactions: transactions, changes: changes, isComplete: transactions < batch)
            }
        } catch let error as HistoryError {
            throw error
        } catch {
            let storeError = StoreError.from(error, path: path, while: "purging history through token \(token)")
            throw HistoryError(.store, path: path, storeError.reason, storeError: storeError)
        }
    }
}

extension PersistentStore {
    /// The oldest token still in the history (nil when it is empty).
    public func oldestHistoryToken() throws(HistoryError) -> Int64? {
        try readHistory("reading the oldest history token") { db in
            guard try HistorySchema.exists(in: db) else { return nil }
            return try Int64.fetchOne(db, sql: "SELECT min(token) FROM \(HistorySchema.transactionsTable)")
        }
    }
}
