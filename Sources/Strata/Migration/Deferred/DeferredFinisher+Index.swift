import Foundation
import GRDB

extension DeferredFinisher {
    /// A table's rows mirrored into a side table, by rowid: the columns an index covers, with
    /// the table's declared types (so that values compare and encode exactly alike), and the
    /// table's rowid as its `INTEGER PRIMARY KEY` — under the name of the table's own rowid
    /// alias (`_pk`) when it has one, so that an index naming it reads the same values.
    struct SideTable {
        var name: String
        var table: String
        /// The side table's `INTEGER PRIMARY KEY`: the table's rowid.
        var rowidColumn: String
        /// The covered columns (never the rowid alias).
        var columns: [String]

        init(name: String, table: String, rowidAlias: String?, columns: [String]) {
            self.name = name
            self.table = table
            self.rowidColumn = rowidAlias ?? "_strata_rowid"
            self.columns = columns.filter { $0 != rowidAlias }
        }

        func createSQL(types: [String: String]) -> String {
            let definitions = [quoteIdentifier(rowidColumn) + " INTEGER PRIMARY KEY"]
                + columns.map { "\(quoteIdentifier($0)) \(types[$0] ?? "")".trimmingCharacters(in: .whitespaces) }
            return "CREATE TABLE \(quoteIdentifier(name)) (\(definitions.joined(separator: ", ")))"
        }

        var triggerPrefix: String { "_strata_rw_\(name)_" }

        /// Triggers on the table that keep the side table equal to it (this process or any
        /// other). Only updates of the covered columns or of the rowid alias change it.
        func triggerSQL(rowidAlias: String?) -> [String] {
            let t = quoteIdentifier(table), s = quoteIdentifier(name), rid = quoteIdentifier(rowidColumn)
            let names = ([rowidColumn] + columns).map(quoteIdentifier).joined(separator: ", ")
            let values = (["NEW.rowid"] + columns.map { "NEW.\(quoteIdentifier($0))" }).joined(separator: ", ")
            let updates = columns.map { "\(quoteIdentifier($0)) = excluded.\(quoteIdentifier($0))" }
            let upsert = "INSERT INTO \(s) (\(names)) VALUES (\(values)) ON CONFLICT(\(rid)) " + (updates.isEmpty ? "DO NOTHING" : "DO UPDATE SET \(updates.joined(separator: ", "))") + ";"
            let watched = (columns + (rowidAlias.map { [$0] } ?? [])).map(quoteIdentifier).joined(separator: ", ")
            return [
                "CREATE TRIGGER \(quoteIdentifier(triggerPrefix + "ins")) AFTER INSERT ON \(t) BEGIN \(upsert) END",
                "CREATE TRIGGER \(quoteIdentifier(triggerPrefix + "upd")) AFTER UPDATE OF \(watched) ON \(t) BEGIN DELETE FROM \(s) WHERE \(rid) = OLD.rowid; \(upsert) END",
                "CREATE TRIGGER \(quoteIdentifier(triggerPrefix + "del")) AFTER DELETE ON \(t) BEGIN DELETE FROM \(s) WHERE \(rid) = OLD.rowid; END",
            ]
        }

        /// Copies the table's rows with rowid in (`after`, `upTo`] (nil: to the end).
        func copySQL(upTo: Bool) -> String {
            let names = ([rowidColumn] + columns).map(quoteIdentifier).joined(separator: ", ")
            let values = (["rowid"] + columns.map(quoteIdentifier)).joined(separator: ", ")
            return "INSERT OR IGNORE INTO \(quoteIdentifier(name)) (\(names)) SELECT \(values) FROM \(quoteIdentifier(table)) "
                + "WHERE rowid > ?\(upTo ? " AND rowid <= ?" : "") ORDER BY rowid"
        }
    }

    // MARK: - Index drop

    /// Drops an index in bounded steps. An index without NULL keys is retired at once
    /// (``IndexRelocation/retire(_:in:)``: it becomes a table deleted in key order, a drop task).
    /// Otherwise its table's covered columns are copied, by rowid and in batches, into a side
    /// table (triggers mirror changes); one short transaction moves the index onto the side
    /// table, whose drop task deletes the rows with NULL keys and then retires the index.
    func runIndexDrop(_ step: TaskStep, name: String, table: String) async throws -> Bool {
        var state = step.entry.progress
        if !state.started {
            if let retirement = try nullFreeRetirement(name: name, table: table), try retireDirectly(retirement, step: step) {
                report(step.entry, rowsDone: 0, state: .done, index: step.index, of: step.total)
                return true
            }
            guard let started = try beginIndexDrop(name: name, table: table, step: step) else {
                report(step.entry, rowsDone: 0, state: .done, index: step.index, of: step.total)
                return true
            }
            state = started
        }
        guard let sideName = state.sideTable else {
            throw DatabaseError(resultCode: .SQLITE_INTERNAL, message: "the ledger's progress of index drop \(name) names no side table")
        }
        let side = try readSideTable(sideName, of: table)
        guard try await copyIntoSideTable(side, state: &state, step: step, faultPrefix: "index") else { return false }
        guard await mayContinue() else { return false }
        try batch(step.session) { db in
            try db.execute(sql: side.copySQL(upTo: false), arguments: [state.lastKey ?? Int64.min])
            try dropTriggers(prefix: side.triggerPrefix, in: db)
            if try IndexRelocation.indexTable(name, in: db) == table {
                let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", arguments: [name]) ?? ""
                let aside = try IndexRelocation.freeName("_strata_old_\(name)", in: db)
                guard let moved = IndexRelocation.renamedIndexSQL(sql, name: aside, table: side.name) else {
                    throw DatabaseError(resultCode: .SQLITE_INTERNAL, message: "cannot read the definition of index \(name): \(sql)")
                }
                try IndexRelocation.relocate(index: name, to: aside, table: side.name, sql: moved, in: db)
                try IndexRelocation.commitSchemaChange(in: db)
            }
            FaultInjection.point("index.finish")
            try DeferredLedger.complete(id: step.id, in: db)
            let summary = "drop table \(side.name) (with index \(name), dropped from \(table))"
            try DeferredLedger.append(MigrationOperation(.dropTable(side.name), deferrable: true, summary: summary),
                                      kind: .dropTable, summary: summary, rowsTotal: state.rowsDone, in: db)
        }
        step.counters.batches += 1
        report(step.entry, rowsDone: state.rowsDone, state: .done, index: step.index, of: step.total)
        return true
    }

    /// The retirement of index `name` on `table` when it can be retired at once: retirable, no
    /// NULL key (read on a reader connection).
    private func nullFreeRetirement(name: String, table: String) throws -> IndexRelocation.Retirement? {
        try store.database.read { db in
            guard try IndexRelocation.indexTable(name, in: db) == table, let retirement = try IndexRelocation.retirement(of: name, in: db) else { return nil }
            let hasNulls = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(quoteIdentifier(table)) INDEXED BY \(quoteIdentifier(name)) WHERE \(retirement.nullPredicate))") ?? true
            return hasNulls ? nil : retirement
        }
    }

    /// One short transaction: the index becomes a table, dropped later in key order. False
    /// when a NULL key appeared meanwhile (the side-table way is then taken).
    private func retireDirectly(_ retirement: IndexRelocation.Retirement, step: TaskStep) throws -> Bool {
        let retired = try batch(step.session) { db -> Bool in
            guard try IndexRelocation.indexTable(retirement.index, in: db) == retirement.table else {
                try DeferredLedger.complete(id: step.id, in: db)
                return true
            }
            // A NULL first key written since the check would make the retired table invalid:
            // look again (a seek). A NULL in a later key column written in that window would
            // only make `integrity_check` name the retired table until its batch is deleted.
            let first = quoteIdentifier(retirement.keys[0].name)
            let hasNulls = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(quoteIdentifier(retirement.table)) INDEXED BY \(quoteIdentifier(retirement.index)) WHERE \(first) IS NULL)") ?? true
            guard !hasNulls else { return false }
            let holder = try IndexRelocation.retire(retirement, in: db)
            try IndexRelocation.commitSchemaChange(in: db)
            FaultInjection.point("index.retire")
            try DeferredLedger.complete(id: step.id, in: db)
            let summary = "drop table \(holder) (index \(retirement.index), dropped from \(retirement.table) and retired to be freed in key order)"
            try DeferredLedger.append(MigrationOperation(.dropTable(holder), deferrable: true, summary: summary),
                                      kind: .dropTable, summary: summary, rowsTotal: step.entry.payload.rowsTotal, in: db)
            return true
        }
        step.counters.batches += 1
        return retired
    }

    /// Creates the side table (no index) and the triggers; nil when there is nothing to drop.
    /// An index whose definition cannot be read back (not a plain `CREATE INDEX`) is dropped
    /// in one step.
    private func beginIndexDrop(name: String, table: String, step: TaskStep) throws -> DeferredLedger.Progress? {
        try batch(step.session) { db in
            guard try IndexRelocation.indexTable(name, in: db) == table else {
                try DeferredLedger.complete(id: step.id, in: db)
                return nil
            }
            let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", arguments: [name]) ?? ""
            guard IndexRelocation.renamedIndexSQL(sql, name: "x", table: "y") != nil else {
                try db.execute(sql: "DROP INDEX \(quoteIdentifier(name))")
                try DeferredLedger.complete(id: step.id, in: db)
                return nil
            }
            // The side table covers what the index reads: its key columns, or every column
            // for an expression or partial index.
            let keyColumns = try Row.fetchAll(db, sql: "SELECT cid, name FROM pragma_index_xinfo(?) WHERE key = 1", arguments: [name])
            let isPartial = try Bool.fetchOne(db, sql: "SELECT partial FROM pragma_index_list(?) WHERE name = ?", arguments: [table, name]) ?? false
            let columns: [String]
            if isPartial || keyColumns.contains(where: { ($0["cid"] as Int) < 0 }) {
                columns = try db.columns(in: table).map(\.name)
            } else {
                columns = keyColumns.map { $0["name"] as String }
            }
            let alias = try rowidAlias(table, in: db)
            let side = SideTable(name: try IndexRelocation.freeName("_strata_unindex_\(name)", in: db), table: table, rowidAlias: alias, columns: columns)
            try db.execute(sql: side.createSQL(types: try declaredTypes(table, in: db)))
            for trigger in side.triggerSQL(rowidAlias: alias) { try db.execute(sql: trigger) }
            var state = DeferredLedger.Progress(lastKey: nil, rowsDone: 0, started: true)
            state.sideTable = side.name
            FaultInjection.point("index.start")
            try DeferredLedger.saveProgress(state, id: step.id, in: db)
            return state
        }
    }

    // MARK: - Shared

    /// Copies the table's rows into the side table in rowid order, a batch at a time; returns
    /// false when stopped before the end.
    func copyIntoSideTable(_ side: SideTable, state: inout DeferredLedger.Progress, cursor: WritableKeyPath<DeferredLedger.Progress, Int64?> = \.lastKey,
                           step: TaskStep, faultPrefix: String) async throws -> Bool {
        try await runBatches(step, between: "\(faultPrefix).between-batches") { size in
            var next = state
            let done = try sideCopyBatch(side, next: &next, cursor: cursor, size: size, step: step, faultPrefix: faultPrefix)
            defer { state = next }
            return BatchOutcome(rows: next.rowsDone - state.rowsDone, rowsDone: next.rowsDone, done: done)
        }
    }

    /// One batch of ``copyIntoSideTable(_:state:cursor:step:faultPrefix:)``; true when no row was left.
    private func sideCopyBatch(_ side: SideTable, next: inout DeferredLedger.Progress, cursor: WritableKeyPath<DeferredLedger.Progress, Int64?>,
                               size: Int, step: TaskStep, faultPrefix: String) throws -> Bool {
        let t = quoteIdentifier(side.table)
        var candidate = next
        let done: Bool = try batch(step.session, interruptible: true) { db in
            let last = candidate[keyPath: cursor] ?? Int64.min
            guard let upper = try Int64.fetchOne(db, sql: "SELECT rowid FROM \(t) WHERE rowid > ? ORDER BY rowid LIMIT 1 OFFSET ?", arguments: [last, size - 1]) else {
                return true
            }
            try db.execute(sql: side.copySQL(upTo: true), arguments: [last, upper])
            candidate[keyPath: cursor] = upper
            candidate.rowsDone += Int64(size)
            FaultInjection.point("\(faultPrefix).mid-batch")
            try DeferredLedger.saveProgress(candidate, id: step.id, in: db)
            return false
        }
        next = candidate
        return done
    }

    func readSideTable(_ name: String, of table: String) throws -> SideTable {
        try store.database.read { db in try sideTable(name, of: table, in: db) }
    }

    /// The side table `name` as created for `table` (its first column is the rowid).
    private func sideTable(_ name: String, of table: String, in db: Database) throws -> SideTable {
        let columns = try db.columns(in: name).map(\.name)
        guard let rowid = columns.first else {
            throw DatabaseError(resultCode: .SQLITE_INTERNAL, message: "the side table \(name) of \(table) is missing")
        }
        var side = SideTable(name: name, table: table, rowidAlias: rowid, columns: Array(columns.dropFirst()))
        side.rowidColumn = rowid
        return side
    }

    /// Declared column types of a table, by column name.
    func declaredTypes(_ table: String, in db: Database) throws -> [String: String] {
        Dictionary(try db.columns(in: table).map { ($0.name, $0.type) }, uniquingKeysWith: { a, _ in a })
    }

    /// The table's `INTEGER PRIMARY KEY` column (its rowid alias), if it has one.
    func rowidAlias(_ table: String, in db: Database) throws -> String? {
        let primaryKey = try db.primaryKey(table)
        return primaryKey.rowIDColumn
    }
}
