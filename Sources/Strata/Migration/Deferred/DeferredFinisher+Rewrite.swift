import Foundation
import GRDB

extension DeferredFinisher {
    // MARK: - Online rewrite

    /// Rewrites a table online: shadow table with every final index, capture triggers,
    /// batched key-ordered copy, O(1) swap.
    func runRewrite(_ step: TaskStep, _ rewrite: TableRewrite, keyColumn: String, conflictKey: [String]) async throws -> Bool {
        var state = step.entry.progress
        if !state.started {
            state = try beginRewrite(rewrite, keyColumn: keyColumn, conflictKey: conflictKey, step: step)
        }
        if state.copied != true {
            let copyStart = ContinuousClock.now
            defer {
                if state.copied == true {
                    store.logger.info("copied \(rewrite.table) into its shadow", metadata: ["strata.ms": "\(Self.milliseconds(ContinuousClock.now - copyStart))", "strata.rows": "\(state.rowsDone)"])
                }
            }
            // Ranges by key span while the keys prove dense (see ``copyBatch``).
            var bySpan = keyColumn != "rowid" && conflictKey == [keyColumn]
            // A rewrite begun before the cursor existed keeps its triggers, which mirror every
            // row: its copy has no cursor to move.
            let cursor = try hasCopyCursor(rewrite)
            let copied = try await runBatches(step) { size in
                let before = state.rowsDone
                let done = try copyBatch(rewrite, keyColumn: keyColumn, size: size, bySpan: &bySpan, cursor: cursor, state: &state, step: step)
                return BatchOutcome(rows: state.rowsDone - before, rowsDone: state.rowsDone, done: done)
            }
            guard copied else { return false }
        }
        // The shadow's indexes, once it holds every row: sorted builds, kept current by
        // triggers — except those the live table already holds entry for entry, carried over
        // at the swap (``carriedIndexes``).
        let carried = try carriedIndexes(rewrite, keyColumn: keyColumn, state: state)
        // The check before the swap runs beside the builds, on a thread of its own
        // (``ShadowVerifier``); stopped when they end, or when the run does.
        var beside: ShadowVerifier?
        defer { beside?.stop() }
        for index in store.layout.indexes.filter({ $0.table == rewrite.table }).sorted(by: { $0.name < $1.name })
        where state.shadowIndexes?[index.name] == nil && carried[index.name] == nil {
            guard await mayContinue() else { return false }
            if beside == nil, state.verified != true {
                beside = try verifierBeside(rewrite, keyColumn: keyColumn, conflictKey: conflictKey, state: state, step: step)
            }
            step.counters.batchSize = Counters.initialBatchSize
            let name = try shadowIndexName(index, state: state)
            let source = keyColumn == StorageLayout.primaryKeyColumn ? try liveIndex(matching: index, on: rewrite.table) : nil
            let built = try await buildIndex(index, on: rewrite.shadowTable, as: name, source: source.map { (rewrite.table, $0) },
                                             state: &state, step: step) { progress, _ in
                progress.shadowIndexes = (progress.shadowIndexes ?? [:]).merging([index.name: name]) { $1 }
            }
            guard built else { return false }
        }
        if let outcome = beside?.stop() {
            store.logger.info("checked the shadow of \(rewrite.table) beside its index builds", metadata: [
                "strata.ms": "\(Self.milliseconds(outcome.elapsed))", "strata.rows": "\(outcome.rows)", "strata.ranges": "\(outcome.ranges)",
                "strata.task": "\(step.id)", "strata.complete": "\(outcome.verifiedKey == Int64.max)",
            ])
        }
        guard try await verifyShadow(rewrite, keyColumn: keyColumn, conflictKey: conflictKey, state: &state, step: step) else { return false }
        guard await mayContinue() else { return false }
        try swap(rewrite, keyColumn: keyColumn, state: state, step: step)
        step.counters.batches += 1
        report(step.entry, rowsDone: max(state.rowsDone, step.entry.payload.rowsTotal), state: .done, index: step.index, of: step.total)
        return true
    }

    /// Starts the check of the shadow beside its index builds (``ShadowVerifier``), after the
    /// last key checked (by the check before the swap or beside an earlier run's builds);
    /// nil where it does not apply (a join table, a rewrite begun by an earlier Strata).
    private func verifierBeside(_ rewrite: TableRewrite, keyColumn: String, conflictKey: [String], state: DeferredLedger.Progress,
                                step: TaskStep) throws -> ShadowVerifier? {
        let (applies, checked) = try store.database.read { db in
            (try ShadowVerifier.applies(rewrite, keyColumn: keyColumn, conflictKey: conflictKey, in: db), try ShadowVerifier.verifiedKey(rewrite, in: db))
        }
        guard applies else { return nil }
        let stepAside = self.stepAside
        let pacing = ShadowVerifier.Pacing(current: { stepAside.pacing }, shouldContinue: { stepAside.mayGoOn() })
        let after = [state.verifiedKey, checked].compactMap { $0 }.max()
        return ShadowVerifier(store: store, rewrite: rewrite, keyColumn: keyColumn, after: after, synchronous: step.session.synchronous, pacing: pacing)
    }

    /// An index of the live table with exactly the key columns of `index`, all ascending (its
    /// entries, read in order, are the shadow's: same rowids, same values).
    private func liveIndex(matching index: IndexLayout, on table: String) throws -> String? {
        guard index.columns.allSatisfy(\.ascending) else { return nil }
        let wanted = index.columns.map(\.name)
        return try store.database.read { db in
            for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY name", arguments: [table]) {
                let keys = try Row.fetchAll(db, sql: "SELECT name, desc, coll FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno", arguments: [name])
                let partial = try Bool.fetchOne(db, sql: "SELECT partial FROM pragma_index_list(?) WHERE name = ?", arguments: [table, name]) ?? true
                if !partial, keys.map({ $0["name"] as String? ?? "" }) == wanted,
                   keys.allSatisfy({ ($0["desc"] as Int) == 0 && (($0["coll"] as String?) ?? "BINARY").uppercased() == "BINARY" }) {
                    return name
                }
            }
            return nil
        }
    }

    /// Whether the rewrite's copy moves a cursor (``TableRewrite/copyCursorTable``). Not
    /// async: a cancelled run stops between batches, not in this read.
    private func hasCopyCursor(_ rewrite: TableRewrite) throws -> Bool {
        try store.database.read { db in try db.tableExists(rewrite.copyCursorTable) }
    }

    /// The temporary name of a final index on the shadow: the one its build in progress uses,
    /// or a free one.
    private func shadowIndexName(_ index: IndexLayout, state: DeferredLedger.Progress) throws -> String {
        if let build = state.build, build.index == index.name { return build.name }
        return try store.database.read { db in try IndexRelocation.freeName("_strata_ix_\(index.name)", in: db) }
    }

    private func beginRewrite(_ rewrite: TableRewrite, keyColumn: String, conflictKey: [String], step: TaskStep) throws -> DeferredLedger.Progress {
        try batch(step.session) { db in
            var state = DeferredLedger.Progress(lastKey: nil, rowsDone: 0, started: true)
            try startRewrite(rewrite, keyColumn: keyColumn, conflictKey: conflictKey, in: db)
            state.shadowIndexes = [:]
            FaultInjection.point("rewrite.start")
            try DeferredLedger.saveProgress(state, id: step.id, in: db)
            return state
        }
    }

    /// Creates the shadow table without indexes (the copy only appends rows), the copy's
    /// cursor, and the capture triggers.
    ///
    /// The live table keeps its own indexes until the swap, so its queries stay fast and its
    /// unique indexes keep enforcing uniqueness for every write, which the triggers carry to
    /// the shadow. The shadow's indexes are built once it holds every row, in key order
    /// (``buildIndex(_:on:as:state:step:adopted:)``): maintained row by row during the copy,
    /// each batch would rewrite pages all over them.
    ///
    /// The triggers mirror a written row only when its key is at or before the cursor
    /// (``TableRewrite/copyCursorTable``, moved by each copy batch in its own transaction, and
    /// to the end of the keys once the copy is done): a row after it is copied later with its
    /// values of that moment. Mirrored ahead of the copy, as before, each client write put a
    /// row out in the shadow's unwritten key range, and the copy's appends then split pages
    /// around it (the 4M-row copy with 4 clients writing took twice as long as without them).
    /// A delete's removal of the mirror stays unconditional (a row the copy has not reached
    /// has none to remove); an update removes it only when the key moved, and otherwise
    /// updates it in place through the upsert.
    private func startRewrite(_ rewrite: TableRewrite, keyColumn: String, conflictKey: [String], in db: Database) throws {
        let t = quoteIdentifier(rewrite.table), s = quoteIdentifier(rewrite.shadowTable), c = quoteIdentifier(rewrite.copyCursorTable)
        try dropCapture(rewrite, in: db)
        try db.execute(sql: "DROP TABLE IF EXISTS \(s)")
        try db.execute(sql: rewrite.createShadowSQL)
        // `verified`: the last key checked beside the index builds (``ShadowVerifier``).
        try db.execute(sql: "CREATE TABLE \(c) (last INTEGER NOT NULL, \(ShadowVerifier.verifiedColumn) INTEGER)")
        try db.execute(sql: "INSERT INTO \(c) (last) VALUES (?)", arguments: [Int64.min])
        let columns = rewrite.columns
        let names_ = columns.map(quoteIdentifier).joined(separator: ", ")
        let newValues = columns.map { "NEW.\(quoteIdentifier($0))" }.joined(separator: ", ")
        let updates = columns.filter { !conflictKey.contains($0) }.map { "\(quoteIdentifier($0)) = excluded.\(quoteIdentifier($0))" }
        let conflict = "ON CONFLICT(\(conflictKey.map(quoteIdentifier).joined(separator: ", "))) " + (updates.isEmpty ? "DO NOTHING" : "DO UPDATE SET \(updates.joined(separator: ", "))")
        let newKey = keyColumn == "rowid" ? "NEW.rowid" : "NEW.\(quoteIdentifier(keyColumn))"
        // An upsert after a SELECT needs its WHERE (SQLite's parsing rule), which is the gate.
        let upsert = "INSERT INTO \(s) (\(names_)) SELECT \(newValues) WHERE \(newKey) <= (SELECT last FROM \(c)) \(conflict);"
        let matchOld = conflictKey.map { "\(quoteIdentifier($0)) = OLD.\(quoteIdentifier($0))" }.joined(separator: " AND ")
        let keyMoved = conflictKey.map { "OLD.\(quoteIdentifier($0)) IS NOT NEW.\(quoteIdentifier($0))" }.joined(separator: " OR ")
        let prefix = triggerPrefix(rewrite.table)
        try db.execute(sql: "CREATE TRIGGER \(quoteIdentifier(prefix + "ins")) AFTER INSERT ON \(t) BEGIN \(upsert) END")
        // An update that keeps the key updates the mirror in place (the upsert's DO UPDATE): a
        // delete and an insert would fire an index build's triggers on the shadow for every
        // write, whatever it changed (see ``sortedBuildTriggers``).
        try db.execute(sql: "CREATE TRIGGER \(quoteIdentifier(prefix + "upd")) AFTER UPDATE ON \(t) BEGIN DELETE FROM \(s) WHERE \(matchOld) AND (\(keyMoved)); \(upsert) END")
        try db.execute(sql: "CREATE TRIGGER \(quoteIdentifier(prefix + "del")) AFTER DELETE ON \(t) BEGIN DELETE FROM \(s) WHERE \(matchOld); END")
    }

    /// Copies the next batch of rows (by key) into the shadow and records progress; returns
    /// true when no rows were left to copy.
    ///
    /// A batch is the next `size` rows, its last key found by stepping over them (`OFFSET`) —
    /// or, `bySpan` (a table keyed by a unique integer key), the keys from the first one left
    /// to `size - 1` beyond it: at most `size` rows, read once instead of twice (the step over
    /// them cost about 7 % of the copy). A span that holds under half its size turns `bySpan`
    /// off for the rest of the copy: sparse keys would make batches of a few rows.
    ///
    /// The batch moves the copy's cursor (`cursor`: the table exists) in its transaction: to
    /// its last key, or past every key once the copy is done, from when the triggers mirror
    /// every write.
    private func copyBatch(_ rewrite: TableRewrite, keyColumn: String, size: Int, bySpan: inout Bool, cursor: Bool,
                           state: inout DeferredLedger.Progress, step: TaskStep) throws -> Bool {
        let t = quoteIdentifier(rewrite.table), s = quoteIdentifier(rewrite.shadowTable)
        let key = keyColumn == "rowid" ? "rowid" : quoteIdentifier(keyColumn)
        let columns = rewrite.columns.map(quoteIdentifier).joined(separator: ", ")
        var next = state
        let spans = bySpan
        let (finished, sparse): (Bool, Bool) = try batch(step.session, interruptible: true) { db in
            var finished = false, sparse = false
            let last = next.lastKey ?? Int64.min
            if let upper = try Self.rangeEnd(of: t, key: key, after: last, size: size, bySpan: spans, in: db) {
                try db.cachedStatement(sql: "INSERT OR IGNORE INTO \(s) (\(columns)) SELECT \(columns) FROM \(t) WHERE \(key) > ? AND \(key) <= ? ORDER BY \(key)")
                    .execute(arguments: [last, upper])
                next.lastKey = upper
                if spans {
                    // The rows copied (a row the triggers had written already is not counted).
                    let copied = db.changesCount
                    next.rowsDone += Int64(copied)
                    sparse = copied < size / 2
                } else {
                    next.rowsDone += Int64(size)
                }
            } else {
                let remaining = try Int64.fetchOne(db, sql: "SELECT count(*) FROM \(t) WHERE \(key) > ?", arguments: [last]) ?? 0
                try db.execute(sql: "INSERT OR IGNORE INTO \(s) (\(columns)) SELECT \(columns) FROM \(t) WHERE \(key) > ? ORDER BY \(key)", arguments: [last])
                next.rowsDone += remaining
                next.lastKey = try Int64.fetchOne(db, sql: "SELECT max(\(key)) FROM \(t)") ?? next.lastKey
                next.copied = true
                finished = true
            }
            if cursor {
                try db.cachedStatement(sql: "UPDATE \(quoteIdentifier(rewrite.copyCursorTable)) SET last = ?")
                    .execute(arguments: [finished ? Int64.max : next.lastKey ?? Int64.min])
            }
            FaultInjection.point("rewrite.mid-batch")
            try DeferredLedger.saveProgress(next, id: step.id, in: db)
            return (finished, sparse)
        }
        state = next
        if sparse { bySpan = false }
        FaultInjection.point("rewrite.between-batches")
        return finished
    }

    /// Swaps the shadow in, in one short transaction of O(1) schema changes: the live table
    /// is renamed aside (`_strata_old_<table>`) and the shadow takes its name; the live
    /// table's indexes move aside with it (`_strata_old_<index>`) and the shadow's take their
    /// final names (``IndexRelocation``). The old table becomes a batched drop task of its
    /// own, so writers never wait for its pages (or its indexes' pages) to be freed.
    /// `legacy_alter_table` keeps the join tables' `REFERENCES` on the name, and foreign keys
    /// are off so that nothing cascades.
    private func swap(_ rewrite: TableRewrite, keyColumn: String, state: DeferredLedger.Progress, step: TaskStep) throws {
        let t = quoteIdentifier(rewrite.table), s = quoteIdentifier(rewrite.shadowTable)
        let key = keyColumn == "rowid" ? "rowid" : quoteIdentifier(keyColumn)
        let columns = rewrite.columns.map(quoteIdentifier).joined(separator: ", ")
        let shadowIndexes = state.shadowIndexes ?? [:]
        try writer { db in
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            try db.execute(sql: "PRAGMA legacy_alter_table = ON")
            defer {
                try? db.execute(sql: "PRAGMA legacy_alter_table = OFF")
                try? db.execute(sql: "PRAGMA foreign_keys = ON")
            }
            try db.inTransaction {
                try db.execute(sql: "INSERT OR IGNORE INTO \(s) (\(columns)) SELECT \(columns) FROM \(t) WHERE \(key) > ?", arguments: [state.lastKey ?? Int64.min])
                let carried = try carriedIndexes(rewrite, keyColumn: keyColumn, state: state, in: db)
                let unbuilt = store.layout.indexes.filter { $0.table == rewrite.table && shadowIndexes[$0.name] == nil && carried[$0.name] == nil }
                if !unbuilt.isEmpty {
                    // Only a change of the live table's indexes by another process since the builds began leads here.
                    throw DatabaseError(resultCode: .SQLITE_ERROR, message: "the rewrite of \(rewrite.table) has no index \(unbuilt.map(\.name).joined(separator: ", ")) on its shadow and the live table none to carry over; the swap was not made (the live table's indexes changed during the rewrite: run `stratactl migrate` again)")
                }
                try dropCapture(rewrite, in: db)
                let old = try IndexRelocation.freeName("_strata_old_\(rewrite.table)", in: db)
                try db.execute(sql: "ALTER TABLE \(t) RENAME TO \(quoteIdentifier(old))")
                FaultInjection.point("rewrite.swap")
                try db.execute(sql: "ALTER TABLE \(s) RENAME TO \(t)")
                try moveIndexes(shadowIndexes, table: rewrite.table, in: db)
                try carryIndexes(carried, table: rewrite.table, in: db)
                FaultInjection.point("rewrite.swap-indexes")
                try DeferredLedger.complete(id: step.id, in: db)
                let summary = "drop table \(old) (the rows of \(rewrite.table) before its rewrite, with its old indexes)"
                try DeferredLedger.append(MigrationOperation(.dropTable(old), deferrable: true, summary: summary),
                                          kind: .dropTable, summary: summary, rowsTotal: state.rowsDone, in: db)
                return .commit
            }
        }
    }

    /// Gives the shadow's indexes (now on `table`) their final names, moving any index that
    /// holds a final name (on the old table) aside first.
    private func moveIndexes(_ shadowIndexes: [String: String], table: String, in db: Database) throws {
        guard !shadowIndexes.isEmpty else { return }
        let finals = Dictionary(store.layout.indexes.filter { $0.table == table }.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        for (final, temporary) in shadowIndexes.sorted(by: { $0.key < $1.key }) {
            guard let index = finals[final] else { continue }
            if let holder = try IndexRelocation.indexTable(final, in: db) {
                try moveAside(final, holder: holder, in: db)
            }
            try IndexRelocation.relocate(index: temporary, to: final, table: table, sql: store.layout.createIndexSQL(index), in: db)
        }
        try IndexRelocation.commitSchemaChange(in: db)
    }

    func triggerPrefix(_ table: String) -> String { "_strata_rw_\(table)_" }

    /// Drops a rewrite's capture: its triggers, then the copy's cursor they read (and the
    /// progress of the check beside the builds kept there).
    func dropCapture(_ rewrite: TableRewrite, in db: Database) throws {
        try dropTriggers(prefix: triggerPrefix(rewrite.table), in: db)
        try db.execute(sql: "DROP TABLE IF EXISTS \(quoteIdentifier(rewrite.copyCursorTable))")
    }

    func dropTriggers(prefix: String, in db: Database) throws {
        for suffix in ["ins", "upd", "del"] {
            try db.execute(sql: "DROP TRIGGER IF EXISTS \(quoteIdentifier(prefix + suffix))")
        }
    }
}
