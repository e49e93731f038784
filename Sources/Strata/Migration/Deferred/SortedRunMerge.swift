import Foundation
import GRDB
import GRDBSQLite

/// The merge of an ``IndexSortBuffer``'s sorted runs into the store, in key order, a batch at
/// a time.
///
/// Each run is read ahead in chunks (sequential rowid ranges: a run's rowid is its position),
/// and the runs' next entries meet in a heap: a batch takes the `size` smallest entries left,
/// so it holds exactly `size` entries whatever the number of runs or the data's shape, and its
/// cost is those entries plus, now and then, one chunk read per run. The batch then appends
/// them with one statement that copies each run's range into the container
/// (``appendSQL(from:to:container:changes:)``): the values written to the store never pass
/// through Swift, so Swift's ordering of keys (``compare(_:_:)``) only decides which entries
/// go together; were it to disagree with SQLite's, the index would still be exact (its
/// container is a `WITHOUT ROWID` b-tree), only appended less neatly.
///
/// The read-ahead is a cache of the runs (read-only while merging), not state: every batch
/// starts from the positions the ledger has (`from`), so a batch that rolls back, a restart
/// or a crash loses nothing but that batch. Before, a batch found its bound with a few seeks
/// in every open run (about 300 statements with 62 runs, each prepared anew in Swift), a cost
/// that did not shrink with the batch: with `batch_budget` at 5 ms, the merge of 4M rows' 62
/// runs took 40–50 entries a batch and about seven minutes.
///
/// Runs on the store's writer connection, the buffer attached as ``IndexSortBuffer/attachment``.
final class SortedRunMerge {
    let keys: [IndexSortBuffer.Key]
    /// Each run's length.
    let lengths: [Int64]
    /// Entries read at a time from a run.
    let chunk: Int

    /// One entry of a run: its key values, as SQLite orders them, and its rowid.
    struct Entry {
        var values: [Key]
        var rid: Int64
    }

    /// A key value, as SQLite compares values of a column with the `BINARY` collation (NULL
    /// first, then numbers by value, text then blobs by their bytes).
    enum Key {
        case null
        case integer(Int64)
        case real(Double)
        case text([UInt8])
        case blob([UInt8])

        fileprivate var rank: Int {
            switch self {
            case .null: 0
            case .integer, .real: 1
            case .text: 2
            case .blob: 3
            }
        }
    }

    /// A run's read-ahead: entries at positions `start + 1 ...`, from `entries[base]` on.
    private struct ReadAhead {
        var start: Int64 = 0
        var entries: [Entry] = []
        var base = 0
        var count: Int { entries.count - base }
    }

    private var readAhead: [ReadAhead]
    /// Chunk reads made so far (the tests count them).
    private(set) var chunkReads = 0

    init(keys: [IndexSortBuffer.Key], lengths: [Int64], chunk: Int = 512) {
        self.keys = keys
        self.lengths = lengths
        self.chunk = max(1, chunk)
        readAhead = Array(repeating: ReadAhead(), count: lengths.count)
    }

    private var columns: [String] { keys.indices.map { "\"k\($0)\"" } + ["\"rid\""] }

    private func run(_ n: Int, in schema: String = IndexSortBuffer.attachment) -> String { "\(schema).\(IndexSortBuffer.runTable(n))" }

    // MARK: - Order

    /// SQLite's order of two values of a column (`BINARY` collation): negative, 0 or positive.
    static func compare(_ a: Key, _ b: Key) -> Int {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.real(let x), .real(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.integer(let x), .real(let y)): return -compareReal(y, x)
        case (.real(let x), .integer(let y)): return compareReal(x, y)
        case (.text(let x), .text(let y)), (.blob(let x), .blob(let y)): return compareBytes(x, y)
        default: return a.rank - b.rank
        }
    }

    /// A real against an integer, exactly (as `sqlite3IntFloatCompare`).
    private static func compareReal(_ r: Double, _ i: Int64) -> Int {
        if r < -9_223_372_036_854_775_808.0 { return -1 }
        if r >= 9_223_372_036_854_775_808.0 { return 1 }
        let t = Int64(r)   // toward zero; in range here
        if t < i { return -1 }
        if t > i { return 1 }
        let d = r - Double(t)   // the fraction left
        return d < 0 ? -1 : (d > 0 ? 1 : 0)
    }

    private static func compareBytes(_ x: [UInt8], _ y: [UInt8]) -> Int {
        let n = min(x.count, y.count)
        let c = n == 0 ? 0 : x.withUnsafeBufferPointer { a in y.withUnsafeBufferPointer { b in memcmp(a.baseAddress!, b.baseAddress!, n) } }
        if c != 0 { return Int(c) }
        return x.count - y.count
    }

    /// Whether entry `a` comes before entry `b` in the index's order.
    private func precedes(_ a: Entry, _ b: Entry) -> Bool {
        for i in keys.indices {
            let c = Self.compare(a.values[i], b.values[i])
            if c != 0 { return keys[i].descending ? c > 0 : c < 0 }
        }
        return a.rid < b.rid
    }

    // MARK: - Reading ahead

    /// Reads the key of column `index` of `statement`'s current row.
    static func key(_ statement: OpaquePointer, _ index: CInt) -> Key {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            guard let text = sqlite3_column_text(statement, index) else { return .text([]) }
            return .text(Array(UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(statement, index)))))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, index))
            guard count > 0, let bytes = sqlite3_column_blob(statement, index) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default: return .null
        }
    }

    /// Makes run `n`'s read-ahead begin at position `position` (entries consumed before it
    /// are dropped; a read-ahead elsewhere is started afresh).
    private func align(_ n: Int, at position: Int64) {
        var ahead = readAhead[n]
        let skip = position - ahead.start
        if skip < 0 || skip > Int64(ahead.count) {
            ahead = ReadAhead(start: position)
        } else {
            ahead.base += Int(skip)
            ahead.start = position
            if ahead.base > 4 * chunk, ahead.base * 2 > ahead.entries.count {
                ahead.entries.removeFirst(ahead.base)
                ahead.base = 0
            }
        }
        readAhead[n] = ahead
    }

    /// Reads run `n`'s next chunk into its read-ahead (from the buffer attached to the store's
    /// writer as ``IndexSortBuffer/attachment``, or opened as `schema`).
    private func readChunk(_ n: Int, in db: Database, schema: String = IndexSortBuffer.attachment) throws {
        let first = readAhead[n].start + Int64(readAhead[n].count)
        let last = min(lengths[n], first + Int64(chunk))
        guard last > first else { return }
        let statement = try db.cachedStatement(sql: "SELECT \(columns.joined(separator: ", ")) FROM \(run(n, in: schema)) WHERE rowid > ? AND rowid <= ? ORDER BY rowid")
        let sqliteStatement = statement.sqliteStatement
        let cursor = try Row.fetchCursor(statement, arguments: [first, last])
        let width = CInt(keys.count)
        var read: [Entry] = []
        read.reserveCapacity(Int(last - first))
        while try cursor.next() != nil {
            var values: [Key] = []
            values.reserveCapacity(keys.count)
            for i in 0..<width { values.append(Self.key(sqliteStatement, i)) }
            read.append(Entry(values: values, rid: sqlite3_column_int64(sqliteStatement, width)))
        }
        guard read.count == Int(last - first) else {
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "the sort buffer's run \(n) has \(read.count) entries at positions \(first + 1)…\(last), not \(last - first)")
        }
        readAhead[n].entries += read
        chunkReads += 1
    }

    /// Before a batch, outside the store's write lock: reads a chunk into the read-ahead of
    /// every open run that holds less than half of one after `positions`, through `db`, the
    /// buffer's own connection (its runs as `main`). The batch then seldom reads a run while it
    /// holds the lock: the first batch of a merge (or of a restart) read 62 chunks at 4M rows,
    /// a 25 ms hold of the write lock.
    func prefill(after positions: [Int64], in db: Database) throws {
        for n in lowRuns(after: positions) { try readChunk(n, in: db, schema: "main") }
    }

    /// The open runs whose read-ahead after `positions` holds less than half a chunk while the
    /// run has more: the ones ``prefill(after:in:)`` reads.
    private func lowRuns(after positions: [Int64]) -> [Int] {
        lengths.indices.filter { n in
            guard positions[n] < lengths[n] else { return false }
            align(n, at: positions[n])
            return readAhead[n].count < chunk / 2 && readAhead[n].start + Int64(readAhead[n].count) < lengths[n]
        }
    }

    /// Whether ``prefill(after:in:)`` would read anything: an open run holds less than half a
    /// chunk after `positions` and has more entries. When it would not, the caller opens no
    /// read of the buffer: a read there holds the buffer's lock, which a client's commit on the
    /// store's writer (whose write transactions cover the attached buffer) would wait for.
    func needsPrefill(after positions: [Int64]) -> Bool {
        !lowRuns(after: positions).isEmpty
    }

    // MARK: - Batches

    /// The positions after the next batch of `size` entries (fewer only at the end), from
    /// `positions`: the `size` smallest entries left, taken from the runs' heads.
    func next(after positions: [Int64], size: Int, in db: Database) throws -> [Int64] {
        var heads: [Int] = []   // a heap of runs, by their next entry
        var taken = Array(repeating: 0, count: lengths.count)
        for n in lengths.indices where positions[n] < lengths[n] {
            align(n, at: positions[n])
            if readAhead[n].count == 0 { try readChunk(n, in: db) }
            heads.append(n)
        }
        func head(_ n: Int) -> Entry { readAhead[n].entries[readAhead[n].base + taken[n]] }
        func less(_ a: Int, _ b: Int) -> Bool { precedes(head(a), head(b)) }
        func siftDown(_ start: Int) {
            var i = start
            while true {
                let l = 2 * i + 1, r = l + 1
                var smallest = i
                if l < heads.count, less(heads[l], heads[smallest]) { smallest = l }
                if r < heads.count, less(heads[r], heads[smallest]) { smallest = r }
                guard smallest != i else { return }
                heads.swapAt(i, smallest)
                i = smallest
            }
        }
        for i in stride(from: heads.count / 2 - 1, through: 0, by: -1) { siftDown(i) }
        var left = size
        while left > 0, let n = heads.first {
            taken[n] += 1
            left -= 1
            if positions[n] + Int64(taken[n]) == lengths[n] {
                heads.swapAt(0, heads.count - 1)
                heads.removeLast()
            } else if taken[n] == readAhead[n].count {
                try readChunk(n, in: db)
            }
            siftDown(0)
        }
        return zip(positions, taken).map { $0 + Int64($1) }
    }

    /// `INSERT` of the entries between `from` and `to` (positions per run) into `container`,
    /// skipping the rowids in `changes` (the triggers keep theirs). The SQL names every run
    /// still open at `from`, so that it is the same from one batch to the next (a cached
    /// statement) until a run ends.
    ///
    /// The entries go in run by run, each run's in key order, without an `ORDER BY` over the
    /// batch: a batch's entries all fall within the narrow key range that follows the last
    /// batch's, at the container's right edge, where SQLite's page balancing keeps the leaves
    /// as full as appending in order does. An `ORDER BY` (a sort of each run's range, then a
    /// merge) cost 27 % of the merge's time (1M entries over 62 runs in batches of 3,000, the
    /// sqlite3 library: 1.21 s against 0.88 s, leaves 87.6 % against 89.2 % full).
    func appendSQL(from: [Int64], to: [Int64], container: String, changes: String) -> (String, StatementArguments) {
        var parts: [String] = []
        var arguments: [DatabaseValue] = []
        for n in lengths.indices where from[n] < lengths[n] {
            parts.append("SELECT \(columns.joined(separator: ", ")) FROM \(run(n)) WHERE rowid > ? AND rowid <= ?")
            arguments += [from[n].databaseValue, to[n].databaseValue]
        }
        let names = (keys.indices.map { "\"k\($0)\"" } + ["\"rowid_\""]).joined(separator: ", ")
        guard !parts.isEmpty else { return ("SELECT 0 WHERE 0", []) }
        return ("""
            INSERT INTO main.\(quoteIdentifier(container)) (\(names)) SELECT \(columns.joined(separator: ", ")) FROM (\(parts.joined(separator: " UNION ALL ")))
            WHERE "rid" NOT IN (SELECT "rid" FROM main.\(quoteIdentifier(changes))) ON CONFLICT DO NOTHING
            """, StatementArguments(arguments))
    }
}

extension SortedRunMerge {
    /// The next batch's read-ahead, made on another thread while a batch appends. The append
    /// copies the runs' ranges with SQL and never reads the read-ahead, so the two overlap:
    /// before, each batch first read ahead (0.38 s of a 1M-row merge's 2.5 s with clients
    /// writing), then appended. The merge is used by one thread at a time: ``start(_:)`` hands
    /// it over, ``wait()`` takes it back, before anything else touches it — and before the
    /// batch commits: its write transaction covers the attached buffer (`BEGIN IMMEDIATE`), and
    /// a COMMIT that finds the buffer's own connection holding a read lock fails with
    /// `SQLITE_BUSY`.
    final class Overlap: @unchecked Sendable {
        private static let queue = DispatchQueue(label: "strata.merge.read-ahead")
        private let group = DispatchGroup()
        /// Touched only by the thread that owns the merge.
        private var pending = false

        /// Runs `work` on the read-ahead thread (after any earlier work has ended).
        func start(_ work: @escaping () -> Void) {
            wait()
            nonisolated(unsafe) let work = work
            pending = true
            group.enter()
            Self.queue.async { [group] in
                work()
                group.leave()
            }
        }

        /// Waits for the work started last, if any.
        func wait() {
            guard pending else { return }
            group.wait()
            pending = false
        }

        /// Waits for the work started last, asking `giveWay` every millisecond: when it says
        /// yes (a client arrived, or a stop), `interrupt` ends the work (its read fails and is
        /// dropped: the next batch reads what it needs itself), so that the batch that waits
        /// here commits within about a millisecond instead of after the whole read-ahead.
        func wait(giveWay: () -> Bool, interrupt: () -> Void) {
            guard pending else { return }
            var interrupted = false
            while group.wait(timeout: .now() + .milliseconds(1)) == .timedOut {
                if !interrupted, giveWay() {
                    interrupt()
                    interrupted = true
                }
            }
            pending = false
        }
    }
}
