import GRDB

/// One batch of the merge of an ``IndexSortBuffer``'s sorted runs into the store, in key order.
///
/// Each run is read from its position onwards. Every run still open offers its entry `m`
/// places ahead (`m` = the batch size shared among the open runs); the smallest of these is the
/// batch's **bound**, and the batch takes, from every run, the entries up to the bound (found
/// by a binary search of seeks: runs are sorted and their rowid is the position). Everything
/// taken precedes everything left, so appending each batch in key order builds the index in
/// key order; a batch holds at least `m` and at most `m` × runs entries, and its cost is a few
/// seeks per run plus the entries it appends, whatever the data's shape.
///
/// Runs on the store's writer connection, the buffer attached as ``IndexSortBuffer/attachment``.
/// Its seeks are the same few statements per run, batch after batch: they are prepared once
/// (the connection's statement cache), not compiled again at every seek — at 16M rows a batch
/// makes about 1,500 of them over 245 runs.
struct SortedRunMerge {
    let keys: [IndexSortBuffer.Key]
    /// Each run's length.
    let lengths: [Int64]

    private var columns: [String] { keys.indices.map { "\"k\($0)\"" } + ["\"rid\""] }

    private func run(_ n: Int) -> String { "\(IndexSortBuffer.attachment).\(IndexSortBuffer.runTable(n))" }

    /// An SQL expression true when entry `a` is at or before entry `b` in the index's order
    /// (each a list of SQL expressions, key columns then the rowid; keys are never NULL here).
    private func notAfter(_ a: [String], _ b: [String]) -> String {
        var expression = "\(a.last!) <= \(b.last!)"
        for i in stride(from: keys.count - 1, through: 0, by: -1) {
            let before = keys[i].descending ? ">" : "<"
            expression = "(\(a[i]) \(before) \(b[i]) OR (\(a[i]) = \(b[i]) AND \(expression)))"
        }
        return expression
    }

    private func entry(_ n: Int, at position: Int64, in db: Database) throws -> [DatabaseValue] {
        let statement = try db.cachedStatement(sql: "SELECT \(columns.joined(separator: ", ")) FROM \(run(n)) WHERE rowid = ?")
        guard let row = try Row.fetchOne(statement, arguments: [position]) else {
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "the sort buffer's run \(n) has no entry at position \(position)")
        }
        return (0..<row.count).map { row[$0] as DatabaseValue }
    }

    private func isNotAfter(_ a: [DatabaseValue], _ b: [DatabaseValue], in db: Database) throws -> Bool {
        let n = a.count
        let sql = "SELECT " + notAfter((1...n).map { "?\($0)" }, (1...n).map { "?\(n + $0)" })
        return try Bool.fetchOne(db.cachedStatement(sql: sql), arguments: StatementArguments(a + b)) ?? false
    }

    /// Whether the entry of run `n` at `position` is at or before `bound` (one seek).
    private func runEntry(_ n: Int, at position: Int64, notAfter bound: [DatabaseValue], in db: Database) throws -> Bool {
        let marks = (1...bound.count).map { "?\($0 + 1)" }
        let sql = "SELECT EXISTS (SELECT 1 FROM \(run(n)) WHERE rowid = ?1 AND \(notAfter(columns, marks)))"
        return try Bool.fetchOne(db.cachedStatement(sql: sql), arguments: StatementArguments([position.databaseValue] + bound)) ?? false
    }

    /// The positions after the next batch of about `size` entries, from `positions`.
    func next(after positions: [Int64], size: Int, in db: Database) throws -> [Int64] {
        let open = lengths.indices.filter { positions[$0] < lengths[$0] }
        guard !open.isEmpty else { return positions }
        let m = Int64(max(16, size / open.count))
        // The bound: the smallest of the entries m places ahead (none: every run ends within m).
        var bound: [DatabaseValue]?
        var boundRun = -1
        for n in open where positions[n] + m <= lengths[n] {
            let candidate = try entry(n, at: positions[n] + m, in: db)
            if try bound.map({ try isNotAfter(candidate, $0, in: db) }) ?? true {
                bound = candidate
                boundRun = n
            }
        }
        var next = positions
        for n in open {
            let end = min(positions[n] + m, lengths[n])
            guard let bound, n != boundRun else { next[n] = end; continue }
            // The last position in [positions[n], end] whose entry is at or before the bound.
            var low = positions[n], high = end
            while low < high {
                let middle = (low + high + 1) / 2
                if try runEntry(n, at: middle, notAfter: bound, in: db) { low = middle } else { high = middle - 1 }
            }
            next[n] = low
        }
        return next
    }

    /// `INSERT` of the entries between `from` and `to` (positions per run) into `container`,
    /// in key order, skipping the rowids in `changes` (the triggers keep theirs).
    func appendSQL(from: [Int64], to: [Int64], container: String, changes: String) -> (String, StatementArguments) {
        var parts: [String] = []
        var arguments: [DatabaseValue] = []
        for n in lengths.indices where to[n] > from[n] {
            parts.append("SELECT \(columns.joined(separator: ", ")) FROM \(run(n)) WHERE rowid > ? AND rowid <= ?")
            arguments += [from[n].databaseValue, to[n].databaseValue]
        }
        let names = (keys.indices.map { "\"k\($0)\"" } + ["\"rowid_\""]).joined(separator: ", ")
        let order = (keys.enumerated().map { i, key in "\"k\(i)\"\(key.descending ? " DESC" : "")" } + ["\"rid\""]).joined(separator: ", ")
        guard !parts.isEmpty else { return ("SELECT 0 WHERE 0", []) }
        return ("""
            INSERT INTO main.\(quoteIdentifier(container)) (\(names)) SELECT \(columns.joined(separator: ", ")) FROM (\(parts.joined(separator: " UNION ALL ")))
            WHERE "rid" NOT IN (SELECT "rid" FROM main.\(quoteIdentifier(changes))) ORDER BY \(order) ON CONFLICT DO NOTHING
            """, StatementArguments(arguments))
    }
}
