import Foundation
import GRDB
import Testing
@testable import Strata

/// Purging history in bounded batches, the horizon, expired tokens, and observation.
@Suite struct HistoryRetentionTests {
    func historyError(_ body: () throws -> Void) -> HistoryError? {
        do { try body() } catch { return error as? HistoryError }
        return nil
    }

    func fill(_ store: PersistentStore, transactions: Int, objectsEach: Int = 1) throws {
        let context = ObjectContext(store: store)
        var n = 0
        for _ in 0..<transactions {
            for _ in 0..<objectsEach {
                try context.insert("Aircraft")["tailNumber"] = .string("T\(n)-\(UUID().uuidString.prefix(8))")
                n += 1
            }
            try context.save()
        }
    }

    @Test func purgeRunsInBoundedBatchesAndExpiresOlderTokens() throws {
        let temp = TemporaryStore()
        let store = try temp.open(HistoryTests.model)
        defer { try? store.close() }
        try fill(store, transactions: 10, objectsEach: 3)
        var batches: [HistoryPurgeBatch] = []
        repeat { batches.append(try store.purgeHistory(through: 6, batchSize: 5)) } while !batches.last!.isComplete
        // 18 changes in 6 records (each save's 3 inserts are one run), in batches of 5: 5, then
        // 1 and 5 transactions, then the last one.
        #expect(batches.map(\.changes) == [5, 1, 0] && batches.map(\.transactions) == [0, 5, 1])
        #expect(try store.historyPurgedThrough() == 6 && store.oldestHistoryToken() == 7)
        let raw = try temp.rawQueue()
        #expect(try raw.strings("SELECT count(*) FROM _strata_object_changes") == ["4"])
        #expect(try store.history(since: 6).transactions.map(\.changes.count) == [3, 3, 3, 3])
        let error = historyError { _ = try store.history(since: 3) }
        #expect(error?.code == .expired && error?.purgedThrough == 6 && error?.latest == 10)
        #expect(error?.description.contains("refetch what you follow, then continue from token 10") == true)
        #expect(try store.history(since: 6).transactions.map(\.token) == [7, 8, 9, 10])
        // Tokens keep growing after a purge.
        try fill(store, transactions: 1)
        #expect(try store.latestHistoryToken() == 11)
    }

    @Test func theHorizonMovesBeforeAnyRowGoes() throws {
        let temp = TemporaryStore()
        let store = try temp.open(HistoryTests.model)
        defer { try? store.close() }
        try fill(store, transactions: 4, objectsEach: 4)
        let first = try store.purgeHistory(through: 4, batchSize: 2)
        #expect(!first.isComplete)
        // Half purged: a reader never sees transaction 3 without its changes.
        #expect(throws: HistoryError.self) { _ = try store.history(since: 0) }
        #expect(try store.history(since: 4).transactions.isEmpty)
    }

    @Test func purgeTokensByDateAndCount() throws {
        let temp = TemporaryStore()
        let store = try temp.open(HistoryTests.model)
        defer { try? store.close() }
        try fill(store, transactions: 5)
        #expect(try store.historyToken(keepingLast: 2) == 3)
        #expect(try store.historyToken(keepingLast: 9) == 0)
        #expect(try store.historyToken(before: Date().addingTimeInterval(60)) == 5)
        #expect(try store.historyToken(before: Date().addingTimeInterval(-60)) == 0)
    }

    @Test(.timeLimit(.minutes(1))) func observationYieldsWhatFollowsThenEachCommit() async throws {
        let temp = TemporaryStore()
        let store = try temp.open(HistoryTests.model)
        defer { try? store.close() }
        try fill(store, transactions: 2)
        var iterator = store.changes(since: 1, entities: ["Aircraft"]).makeAsyncIterator()
        #expect(try await iterator.next()?.token == 2)
        let writer = Task.detached { try self.fill(store, transactions: 1) }
        try await writer.value
        let next = try await iterator.next()
        #expect(next?.token == 3 && next?.changes.first?.kind == .insert)
        // From now on: a new observer sees only what commits after it starts.
        var fresh = store.changes().makeAsyncIterator()
        try fill(store, transactions: 1)
        #expect(try await fresh.next()?.token == 4)
    }
}
