import Foundation
import GRDB
import Synchronization
import Testing
@testable import Strata

/// The read-only connections contexts read through (``ReaderLanes``): reused one thread at a
/// time, at most the pool's reader count open, reads past that through GRDB's pool; a lane
/// sees another connection's schema change; closing the store closes them, a lane still
/// reading when it returns.
@Suite struct ReaderLanesTests {
    static let model = StoreCloseTests.model

    /// A store of `count` notes.
    func store(_ temp: TemporaryStore, notes count: Int) throws -> PersistentStore {
        let store = try temp.open(Self.model)
        let context = ObjectContext(store: store)
        for i in 1...count { _ = try context.insert("Note", values: ["text": "note \(i)"]) }
        try context.save()
        return store
    }

    @Test func contextsReadThroughOneLaneReusedInTurn() throws {
        let temp = TemporaryStore()
        let store = try store(temp, notes: 20)
        defer { try? store.close() }
        #expect(store.readers.openCount == 0)
        for _ in 0..<50 {
            #expect(try ObjectContext(store: store).fetch("Note").count == 20)
        }
        // Fifty reads one after another: one lane, taken and given back each time.
        #expect(store.readers.openCount == 1)
    }

    @Test func readsPastTheMaximumGoThroughThePool() throws {
        let temp = TemporaryStore()
        let store = try store(temp, notes: 20)
        defer { try? store.close() }
        // As many again as lanes may open: the pool has as many readers, so none waits.
        let maximum = store.readers.maximum
        let readers = 2 * maximum
        #expect(maximum == store.database.configuration.maximumReaderCount)
        let pooled = Mutex(0)
        let counts = Mutex([Int]())
        let failures = Mutex([String]())
        // Every reader holds its connection until all have started, so all read at once.
        let started = DispatchGroup()
        let release = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for _ in 0..<readers {
            started.enter()
            done.enter()
            Thread {
                defer { done.leave() }
                do {
                    let count = try store.readers.read({ db -> Int in
                        started.leave()
                        release.wait()
                        return try Int.fetchOne(db, sql: #"SELECT count(*) FROM "Note""#) ?? -1
                    }, pool: { body in
                        pooled.withLock { $0 += 1 }
                        return try store.database.read(body)
                    })
                    counts.withLock { $0.append(count) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }.start()
        }
        #expect(started.wait(timeout: .now() + 30) == .success, "not every reader started")
        #expect(store.readers.openCount == maximum)
        for _ in 0..<readers { release.signal() }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(failures.withLock { $0 } == [])
        #expect(counts.withLock { $0 } == Array(repeating: 20, count: readers))
        #expect(pooled.withLock { $0 } == readers - maximum)
        #expect(store.readers.openCount == maximum)
    }

    @Test func aLaneSeesAnotherConnectionsSchemaChange() throws {
        let temp = TemporaryStore()
        let store = try store(temp, notes: 1)
        defer { try? store.close() }
        let noPool: ((Database) throws -> [String]) throws -> [String] = { _ in
            Issue.record("read through the pool")
            return []
        }
        let columns = { try store.readers.read({ db in try db.columns(in: "Note").map(\.name) }, pool: noPool) }
        let before = try columns()
        #expect(before.contains("text") && !before.contains("added"))
        try store.database.write { db in try db.execute(sql: #"ALTER TABLE "Note" ADD COLUMN "added" TEXT"#) }
        // The same lane, whose GRDB schema cache knew the table without the column.
        #expect(store.readers.openCount == 1)
        #expect(try columns() == before + ["added"])
    }

    @Test func closingClosesIdleLanesAndAReadingOneWhenItReturns() throws {
        let temp = TemporaryStore()
        let store = try store(temp, notes: 5)
        let inRead = DispatchSemaphore(value: 0)
        let finish = DispatchSemaphore(value: 0)
        let result = Mutex<Result<Int, any Error>?>(nil)
        let done = DispatchGroup()
        done.enter()
        Thread {
            defer { done.leave() }
            let outcome = Result<Int, any Error>(catching: {
                try store.readers.read({ db -> Int in
                    inRead.signal()
                    finish.wait()
                    return try Int.fetchOne(db, sql: #"SELECT count(*) FROM "Note""#) ?? -1
                }, pool: { try store.database.read($0) })
            })
            result.withLock { $0 = outcome }
        }.start()
        inRead.wait()
        // A second, idle lane beside the reading one.
        #expect(try ObjectContext(store: store).fetch("Note").count == 5)
        #expect(store.readers.openCount == 2)
        try store.close()
        #expect(store.readers.openCount == 1, "the idle lane stays open after close")
        finish.signal()
        done.wait()
        #expect(try result.withLock { try $0?.get() } == 5)
        #expect(store.readers.openCount == 0, "the lane that was reading stays open")
        // After close, no lane opens: the read goes to the closed pool and fails.
        #expect(throws: (any Error).self) { try ObjectContext(store: store).fetch("Note") }
        #expect(store.readers.openCount == 0)
    }
}
