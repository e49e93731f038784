import Foundation
import GRDB

extension DeferredFinisher {
    // MARK: - Indexes carried over at the swap

    /// The final indexes of a rewritten table that need no build: each maps to an index of
    /// the live table (final name → live name) that is, entry for entry, the index the shadow
    /// needs, so that the swap moves it onto the shadow in O(1) (``IndexRelocation``) instead
    /// of building the shadow's own and freeing the live one afterwards — two writes of every
    /// row fewer per such index.
    ///
    /// An index's entries are its key values followed by the rowid. A table keyed by `_pk`
    /// keeps its rowids in the shadow (`_pk` is the rowid), the copy keeps the values of every
    /// column it does not retype, and the capture triggers plus the swap's last catch-up keep
    /// the shadow's rows equal to the live ones (verified before the swap); so a live index
    /// on the same columns (same order, the same direction, binary collation, not partial, not
    /// on expressions, unique when the final one is, the columns' declared types unchanged)
    /// holds exactly the entries of the final index by the time of the swap. Until then it
    /// keeps serving and constraining the live table. Indexes already built or being built on
    /// the shadow (an earlier run's) are left to their build. Join tables (keyed by rowid)
    /// carry none: their shadow's rowids are new.
    func carriedIndexes(_ rewrite: TableRewrite, keyColumn: String, state: DeferredLedger.Progress, in db: Database) throws -> [String: String] {
        guard keyColumn == StorageLayout.primaryKeyColumn, try rowidAlias(rewrite.table, in: db) == keyColumn,
              try rowidAlias(rewrite.shadowTable, in: db) == keyColumn else { return [:] }
        let liveTypes = try declaredTypes(rewrite.table, in: db)
        let shadowTypes = try declaredTypes(rewrite.shadowTable, in: db)
        var carried: [String: String] = [:]
        var taken = Set<String>()
        let finals = store.layout.indexes.filter { $0.table == rewrite.table }.sorted { $0.name < $1.name }
        // A live index named like a final index is carried to that one or to none: the swap
        // moves it aside when that final index is built on the shadow instead.
        taken.formUnion(finals.map(\.name))
        for index in finals where state.shadowIndexes?[index.name] == nil && state.build?.index != index.name {
            let columns = index.columns.map(\.name)
            guard columns.allSatisfy({ !rewrite.retypedColumns.contains($0) && liveTypes[$0] != nil && liveTypes[$0] == shadowTypes[$0] }) else { continue }
            if let live = try matchingLiveIndex(index, on: rewrite.table, excluding: taken.subtracting([index.name]), in: db) {
                carried[index.name] = live
                taken.insert(live)
            }
        }
        return carried
    }

    /// ``carriedIndexes(_:keyColumn:state:in:)`` on a reader (no lock).
    func carriedIndexes(_ rewrite: TableRewrite, keyColumn: String, state: DeferredLedger.Progress) throws -> [String: String] {
        try store.database.read { db in try carriedIndexes(rewrite, keyColumn: keyColumn, state: state, in: db) }
    }

    /// A live index of `table` with exactly the entries of `index` (see ``carriedIndexes``).
    private func matchingLiveIndex(_ index: IndexLayout, on table: String, excluding taken: Set<String>, in db: Database) throws -> String? {
        let candidates = try Row.fetchAll(db, sql: """
            SELECT l.name, l."unique", l.partial FROM pragma_index_list(?) l JOIN sqlite_master m ON m.type = 'index' AND m.name = l.name
            WHERE m.sql IS NOT NULL ORDER BY l.name = ? DESC, l.name
            """, arguments: [table, index.name])
        for candidate in candidates {
            let name: String = candidate["name"]
            guard !taken.contains(name), (candidate["partial"] as Int) == 0, !index.isUnique || (candidate["unique"] as Int) == 1 else { continue }
            let keys = try Row.fetchAll(db, sql: "SELECT name, desc, coll FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno", arguments: [name])
            guard keys.count == index.columns.count else { continue }
            let same = zip(keys, index.columns).allSatisfy { key, column in
                (key["name"] as String?) == column.name && (key["desc"] as Int == 1) == !column.ascending
                    && ((key["coll"] as String?) ?? "BINARY").uppercased() == "BINARY"
            }
            if same { return name }
        }
        return nil
    }

    /// In the swap's transaction, after the renames: moves each carried live index (now on the
    /// old table) onto `table` under its final name, any other index holding that name first
    /// moved aside (see ``moveIndexes``).
    func carryIndexes(_ carried: [String: String], table: String, in db: Database) throws {
        guard !carried.isEmpty else { return }
        let finals = Dictionary(store.layout.indexes.filter { $0.table == table }.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        for (final, live) in carried.sorted(by: { $0.key < $1.key }) {
            guard let index = finals[final] else { continue }
            if live != final, let holder = try IndexRelocation.indexTable(final, in: db) {
                try moveAside(final, holder: holder, in: db)
            }
            try IndexRelocation.relocate(index: live, to: final, table: table, sql: store.layout.createIndexSQL(index), in: db)
            FaultInjection.point("rewrite.carry-index")
        }
        try IndexRelocation.commitSchemaChange(in: db)
    }

    /// Renames the index `name` (on `holder`) aside to `_strata_old_<name>`, or drops it when
    /// its statement cannot be renamed safely (a user-made index).
    func moveAside(_ name: String, holder: String, in db: Database) throws {
        let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", arguments: [name]) ?? ""
        let aside = try IndexRelocation.freeName("_strata_old_\(name)", in: db)
        if let renamed = IndexRelocation.renamedIndexSQL(sql, name: aside, table: holder) {
            try IndexRelocation.relocate(index: name, to: aside, table: holder, sql: renamed, in: db)
        } else {
            try db.execute(sql: "DROP INDEX \(quoteIdentifier(name))")
        }
    }
}
