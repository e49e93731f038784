import Foundation
import GRDB

/// The normalized schema of a database, for comparing a migrated store with a fresh one.
///
/// One entry per table, index and trigger of `sqlite_master`, as `"<type> <name> ON <table>: <sql>"`
/// with runs of whitespace collapsed to one space and no space inside parentheses, sorted.
/// Strata's own metadata tables (`_strata_metadata`, `_strata_history`, `_strata_deferred`, the
/// change history's `_strata_transactions`, `_strata_object_changes`, `_strata_change_names`), a
/// replicator's tables (Litestream's `_litestream_seq` and `_litestream_lock`) and
/// SQLite's internal objects (`sqlite_*`, including automatic indexes, which have no SQL) are
/// left out. Leftovers of unfinished cleanup (`_strata_dropped_*`, `_strata_rewrite_*`, …) are
/// kept, so that a store with pending work never looks identical to a fresh one.
///
/// ```swift
/// let migrated = try dbQueue.read(SchemaSnapshot.of)
/// let fresh = try freshQueue.read(SchemaSnapshot.of)
/// #expect(migrated == fresh)
/// ```
public enum SchemaSnapshot {
    /// The store's schema as sorted, normalized SQL statements (Strata's own tables left out).
    public static func of(_ db: GRDB.Database) throws -> [String] {
        let rows = try Row.fetchAll(db, sql: """
            SELECT type, name, tbl_name, sql FROM sqlite_master
            WHERE type IN ('table', 'index', 'trigger') AND sql IS NOT NULL
              AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
              AND tbl_name NOT IN ('_strata_metadata', '_strata_history', '_strata_deferred',
                                   '_strata_transactions', '_strata_object_changes', '_strata_change_names')
              AND tbl_name NOT LIKE '\\_litestream\\_%' ESCAPE '\\'
            """)
        return rows.map { row -> String in
            let type: String = row["type"]
            let name: String = row["name"]
            let table: String = row["tbl_name"]
            let sql: String = row["sql"]
            return "\(type) \(name) ON \(table): \(normalize(sql))"
        }.sorted()
    }

    /// Collapses whitespace runs to one space and removes spaces next to parentheses and before commas.
    public static func normalize(_ sql: String) -> String {
        var result = ""
        var pendingSpace = false
        for character in sql {
            if character.isWhitespace {
                pendingSpace = true
                continue
            }
            if pendingSpace, let last = result.last, last != "(", character != ")", character != "," {
                result.append(" ")
            }
            pendingSpace = false
            result.append(character)
        }
        return result
    }
}
