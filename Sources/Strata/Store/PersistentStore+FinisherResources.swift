import Foundation
import GRDB

/// The deferred finisher's resources kept between two runs on a store, typed: the store
/// (Store/) only holds them as ``FinisherResource``s, so that Store does not depend on
/// Migration.
extension PersistentStore {
    /// Sort buffers of index builds paused between two runs, by container table.
    var indexBuffers: FinisherSlot<[String: IndexSortBuffer]> {
        FinisherSlot(store: self, read: { resources in
            var buffers: [String: IndexSortBuffer] = [:]
            for (key, value) in resources where key.hasPrefix("index:") { buffers[String(key.dropFirst(6))] = value as? IndexSortBuffer }
            return buffers
        }, write: { resources, buffers in
            for key in resources.keys where key.hasPrefix("index:") { resources[key] = nil }
            for (container, buffer) in buffers { resources["index:" + container] = buffer }
        })
    }

    /// The store's WAL trimmer (created at first use; one per open store, shared by its runs).
    var walTrimmer: WALTrimmer {
        finisherResources.withLock { resources in
            if let trimmer = resources["wal-trimmer"] as? WALTrimmer { return trimmer }
            let trimmer = WALTrimmer(storePath: path)
            resources["wal-trimmer"] = trimmer
            return trimmer
        }
    }
}

extension PersistentStore {
    /// The WAL hook the runs on this store put on its writer in place of the automatic
    /// checkpoint (created at first use; one per open store, shared by its runs).
    var walHook: WALHook {
        finisherResources.withLock { resources in
            if let hook = resources["wal-hook"] as? WALHook { return hook }
            let hook = WALHook()
            resources["wal-hook"] = hook
            return hook
        }
    }
}

/// A typed view of some of a store's ``FinisherResource``s, locked like a `Mutex`.
struct FinisherSlot<Value> {
    let store: PersistentStore
    let read: ([String: any FinisherResource]) -> Value
    let write: (inout [String: any FinisherResource], Value) -> Void

    /// Runs `body` on the value under the store's lock; what it leaves is stored.
    func withLock<Result: Sendable>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try store.finisherResources.withLock { resources in
            var value = read(resources)
            defer { write(&resources, value) }
            return try body(&value)
        }
    }
}

extension WALTrimmer: FinisherResource {
    /// Stops the cutting after a run (the store closes; its last connection removes the WAL).
    func release(on database: DatabasePool) { close() }
}

extension WALHook: FinisherResource {
    /// Nothing to release: the hook goes with the writer connection.
    func release(on database: DatabasePool) {}
}

extension IndexSortBuffer: FinisherResource {
    /// Closes the buffer.
    func release(on database: DatabasePool) { close() }
}
