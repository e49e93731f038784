import GRDB
import Synchronization

/// Read-only connections of a store that its ``ObjectContext``s and its change history read
/// through (``PersistentStore/readThroughLanes(_:)``), taken and given back under one `Mutex`
/// instead of through GRDB's reader pool.
///
/// Why: each `DatabasePool.read` takes a reader through GRDB's `Pool` — a `sync` on a
/// concurrent dispatch queue, a semaphore, a dispatch group, a barrier `sync` on another
/// concurrent queue (with a key path built at run time) to find a free reader, and a second
/// barrier `sync` to give it back. With two threads reading, the barriers contend and wait for
/// each other through futexes: in a profile of a daemon serving `Fetch` by id that was a
/// quarter of its CPU, as much as the fetch itself (docs/Benchmarks.md, "serve: the store
/// ceiling, and reads without GRDB's reader pool").
///
/// A lane is a `DatabaseQueue` opened read-only on the store's file with the pool's own
/// configuration (the same `prepareDatabase`, VFS, busy handling), used by one thread at a
/// time. A read is what `DatabasePool.read` does on a reader: one deferred transaction, the
/// schema cache cleared when `PRAGMA schema_version` moved (another connection changed the
/// schema), the body. When every lane is taken and ``maximum`` are open, the read goes through
/// the pool as before, so lanes never make a reader wait.
///
/// Closing: ``close()`` closes the idle lanes at once (before the pool's writer, as the store
/// closes its readers first), and a lane still reading closes when it is given back.
final class ReaderLanes: Sendable {
    /// A read-only connection and the schema version it last read under.
    private final class Lane: @unchecked Sendable {
        // @unchecked: a lane is used by the one thread that took it (the Mutex hands it over).
        let queue: DatabaseQueue
        var schemaVersion: Int32?

        init(queue: DatabaseQueue) { self.queue = queue }
    }

    private struct State {
        var idle: [Lane] = []
        var open = 0
        var closed = false
    }

    private let state = Mutex(State())
    private let path: String
    private let configuration: Configuration
    /// Most lanes open at once (the pool's `maximumReaderCount`).
    let maximum: Int

    /// Lanes on `path` with `configuration` (made read-only here), at most `maximum` open.
    init(path: String, configuration: Configuration, maximum: Int) {
        var configuration = configuration
        configuration.readonly = true
        // As GRDB's pool readers: a lane never leaves a transaction open between two reads.
        configuration.allowsUnsafeTransactions = false
        // As GRDB's pool readers (its `readonlyBusyMode`, not settable from outside): a read-only
        // connection waits up to 10 s in the rare cases WAL reads meet SQLITE_BUSY (recovery
        // after a crash, the last connection closing).
        configuration.busyMode = .timeout(10)
        self.path = path
        self.configuration = configuration
        self.maximum = maximum
    }

    /// Runs `body` in a read transaction on a free lane; through `pool` (the store's
    /// `DatabasePool.read`) when none is free and no more may open, or the store is closing.
    func read<T>(_ body: (Database) throws -> T, pool: ((Database) throws -> T) throws -> T) throws -> T {
        guard let lane = try take() else {
            return try withoutActuallyEscaping(body) { body in try pool(body) }
        }
        defer { giveBack(lane) }
        return try lane.queue.read { db in
            let version = try db.schemaVersion()
            if version != lane.schemaVersion {
                if lane.schemaVersion != nil { db.clearSchemaCache() }
                lane.schemaVersion = version
            }
            return try body(db)
        }
    }

    /// Closes the idle lanes; lanes still reading close when given back, and no lane opens again.
    func close() {
        let idle = state.withLock { state -> [Lane] in
            state.closed = true
            state.open -= state.idle.count
            defer { state.idle = [] }
            return state.idle
        }
        for lane in idle { Self.close(lane) }
    }

    /// Lanes open now (idle or reading); for tests.
    var openCount: Int { state.withLock { $0.open } }

    private func take() throws -> Lane? {
        enum Taken { case lane(Lane), open, none }
        let taken = state.withLock { state -> Taken in
            guard !state.closed else { return .none }
            if let lane = state.idle.popLast() { return .lane(lane) }
            guard state.open < maximum else { return .none }
            state.open += 1
            return .open
        }
        switch taken {
        case .lane(let lane): return lane
        case .none: return nil
        case .open:
            do {
                return Lane(queue: try DatabaseQueue(path: path, configuration: configuration))
            } catch {
                state.withLock { $0.open -= 1 }
                throw error
            }
        }
    }

    private func giveBack(_ lane: Lane) {
        let kept = state.withLock { state -> Bool in
            guard !state.closed else {
                state.open -= 1
                return false
            }
            state.idle.append(lane)
            return true
        }
        if !kept { Self.close(lane) }
    }

    private static func close(_ lane: Lane) {
        try? lane.queue.close()
    }
}
