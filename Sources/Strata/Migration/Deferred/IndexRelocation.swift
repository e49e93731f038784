import Foundation
import GRDB

/// Renames an index, moves it from one table to another table holding the same rows, turns
/// it into a `WITHOUT ROWID` table or such a table into an index — each in O(1): SQLite has no
/// `ALTER INDEX`, and building or dropping a big index holds the write lock for time
/// proportional to the table. What makes finishing deferred work bounded at any size is that
/// an index's b-tree never has to be built or freed in one statement:
///
/// - an **index build** (an added index, or a rewritten table's shadow indexes after the
///   copy) appends the index's entries, sorted, to a `WITHOUT ROWID` container a batch at a
///   time; the container then becomes the index (``adopt(table:asIndex:on:sql:in:)``);
/// - the **swap** of a table rewrite moves the live table's indexes aside and gives the
///   shadow's their final names (``relocate(index:to:table:sql:in:)``);
/// - an **index drop** turns the index into a `WITHOUT ROWID` table
///   (``retire(_:in:)``), whose rows are then deleted in key order, a batch at a time.
///
/// An index's b-tree holds, for each row, the indexed values followed by the rowid. A
/// `WITHOUT ROWID` table whose primary key is those columns (same declared types, so the same
/// affinities, collations and orders) then the rowid is stored as the same kind of b-tree
/// with the same records, and an index on another table with the same rowids and values has
/// the same entries; so these moves change nothing on disk: only `sqlite_master` rows (type,
/// name, table, SQL; the root page kept). That is the edit SQLite documents for
/// `PRAGMA writable_schema` ("changes that do not affect the on-disk content"), made inside
/// the caller's transaction (so a crash or an error rolls it back with the rest), checked to
/// have found exactly one row, and followed by a `schema_version` increment so that every
/// connection — this one included — reloads the schema before its next statement.
/// `PRAGMA integrity_check` checks each index against its table's rows; the test suite runs
/// it after every change kind and every crash point.
enum IndexRelocation {
    /// Renames the index `name` to `newName`, on `table`, with `sql` as its definition. `sql`
    /// must describe the same b-tree (same columns, order, uniqueness) on `table`, whose rows
    /// must be those the index was built from. Runs inside the caller's transaction; call
    /// ``commitSchemaChange(in:)`` after the last edit.
    static func relocate(index name: String, to newName: String, table: String, sql: String, in db: Database) throws {
        try db.execute(sql: "PRAGMA writable_schema = ON")
        defer { try? db.execute(sql: "PRAGMA writable_schema = OFF") }
        try reenter(type: "index", name: name, asIndex: newName, on: table, sql: sql, in: db,
                    missing: "index \(name) to relocate as \(newName) was not found")
        if try db.tableExists("sqlite_stat1") {
            try db.execute(sql: "DELETE FROM sqlite_stat1 WHERE idx IN (?, ?)", arguments: [name, newName])
        }
    }

    /// Increments the schema cookie after ``relocate(index:to:table:sql:in:)``: every
    /// connection reloads the schema (this one at its next statement, in the same transaction).
    static func commitSchemaChange(in db: Database) throws {
        let version = try Int.fetchOne(db, sql: "PRAGMA schema_version") ?? 0
        try db.execute(sql: "PRAGMA schema_version = \(version + 1)")
        db.clearSchemaCache()
    }

    // MARK: - Retiring an index

    /// How an index can be freed in bounded steps: its key columns and what finds NULL keys.
    struct Retirement {
        var index: String
        var table: String
        /// Key columns in index order: name in the table, declared type, `DESC`, collation.
        var keys: [(name: String, type: String, descending: Bool, collation: String)]
        /// `"a" IS NULL OR "b" IS NULL`: rows whose entry has a NULL key.
        var nullPredicate: String { keys.map { "\(quoteIdentifier($0.name)) IS NULL" }.joined(separator: " OR ") }
    }

    /// What retiring index `name` takes; nil for an index that cannot be retired (automatic,
    /// or on expressions): it is dropped in one step.
    static func retirement(of name: String, in db: Database) throws -> Retirement? {
        guard let row = try Row.fetchOne(db, sql: "SELECT tbl_name, sql FROM sqlite_master WHERE type = 'index' AND name = ?", arguments: [name]),
              (row["sql"] as String?) != nil else { return nil }
        let table: String = row["tbl_name"]
        let columns = try Row.fetchAll(db, sql: "SELECT cid, name, desc, coll, key FROM pragma_index_xinfo(?) ORDER BY seqno", arguments: [name])
        let keys = columns.filter { ($0["key"] as Int) == 1 }
        let auxiliary = columns.filter { ($0["key"] as Int) == 0 }
        // Plain columns only, and the rowid as the one auxiliary column (a rowid table).
        guard !keys.isEmpty, keys.allSatisfy({ ($0["cid"] as Int) >= 0 }),
              auxiliary.count == 1, (auxiliary[0]["cid"] as Int) == -1 else { return nil }
        let types = Dictionary(try db.columns(in: table).map { ($0.name, $0.type) }, uniquingKeysWith: { a, _ in a })
        return Retirement(index: name, table: table, keys: keys.map { key in
            let column: String = key["name"]
            return (column, types[column] ?? "", (key["desc"] as Int) == 1, (key["coll"] as String?) ?? "BINARY")
        })
    }

    /// Turns an index into a `WITHOUT ROWID` table holding the very same b-tree, in O(1).
    ///
    /// An index entry is its key columns followed by the rowid; so is the record of a
    /// `WITHOUT ROWID` table whose primary key is (the key columns, with the same types,
    /// collations and orders, then the rowid). Once it is a table, its entries can be deleted a
    /// batch at a time in key order — contiguous pages — where deleting its parent's rows would
    /// touch index pages all over, and `DROP INDEX` frees every page in one statement.
    /// Primary-key columns of a `WITHOUT ROWID` table are `NOT NULL`, so the parent's rows with
    /// a NULL key must be gone first (``Retirement/nullPredicate``). Returns the table's name;
    /// call ``commitSchemaChange(in:)`` after the last edit.
    static func retire(_ retirement: Retirement, in db: Database) throws -> String {
        let name = try freeName("_strata_retired_\(retirement.index)", in: db)
        var definitions: [String] = []
        var primaryKey: [String] = []
        for (i, key) in retirement.keys.enumerated() {
            let column = quoteIdentifier("k\(i)")
            definitions.append("\(column) \(key.type)\(key.collation.uppercased() == "BINARY" ? "" : " COLLATE \(key.collation)")")
            primaryKey.append(column + (key.descending ? " DESC" : ""))
        }
        definitions.append("\"rowid_\" INTEGER")
        primaryKey.append("\"rowid_\"")
        let sql = "CREATE TABLE \(quoteIdentifier(name)) (\(definitions.joined(separator: ", ")), PRIMARY KEY (\(primaryKey.joined(separator: ", ")))) WITHOUT ROWID"
        try db.execute(sql: "PRAGMA writable_schema = ON")
        defer { try? db.execute(sql: "PRAGMA writable_schema = OFF") }
        try db.execute(sql: """
            INSERT INTO sqlite_master(type, name, tbl_name, rootpage, sql)
            SELECT 'table', ?, ?, rootpage, ? FROM sqlite_master WHERE type = 'index' AND name = ?
            """, arguments: [name, name, sql, retirement.index])
        guard db.changesCount == 1 else {
            throw DatabaseError(resultCode: .SQLITE_INTERNAL, message: "index \(retirement.index) to retire was not found")
        }
        try db.execute(sql: "DELETE FROM sqlite_master WHERE type = 'index' AND name = ?", arguments: [retirement.index])
        if try db.tableExists("sqlite_stat1") {
            try db.execute(sql: "DELETE FROM sqlite_stat1 WHERE idx = ?", arguments: [retirement.index])
        }
        return name
    }

    /// The reverse of ``retire(_:in:)``: a `WITHOUT ROWID` table whose primary key is (key
    /// columns, rowid) and whose rows are exactly the entries an index on `table` would hold
    /// becomes that index, in O(1). Used by sorted index builds.
    static func adopt(table container: String, asIndex name: String, on table: String, sql: String, in db: Database) throws {
        try db.execute(sql: "PRAGMA writable_schema = ON")
        defer { try? db.execute(sql: "PRAGMA writable_schema = OFF") }
        try reenter(type: "table", name: container, asIndex: name, on: table, sql: sql, in: db,
                    missing: "the sorted entries \(container) of index \(name) were not found")
    }

    /// Enters the b-tree of the schema entry `type`/`name` again as index `index` on `table`
    /// with definition `sql`, and removes the old entry; writable_schema must be on.
    ///
    /// A new row rather than an update: SQLite loads the schema in rowid order, and an index
    /// must come after its table.
    private static func reenter(type: String, name: String, asIndex index: String, on table: String, sql: String,
                                in db: Database, missing: @autoclosure () -> String) throws {
        try db.execute(sql: """
            INSERT INTO sqlite_master(type, name, tbl_name, rootpage, sql)
            SELECT 'index', ?, ?, rootpage, ? FROM sqlite_master WHERE type = ? AND name = ?
            """, arguments: [index, table, sql, type, name])
        guard db.changesCount == 1 else { throw DatabaseError(resultCode: .SQLITE_INTERNAL, message: missing()) }
        try db.execute(sql: "DELETE FROM sqlite_master WHERE type = ? AND name = ? AND rowid < (SELECT max(rowid) FROM sqlite_master)",
                       arguments: [type, name])
    }

    /// `base`, or `base_2`, `base_3`… : the first name no table, index or trigger has.
    static func freeName(_ base: String, in db: Database) throws -> String {
        var candidate = base
        var n = 1
        while try Bool.fetchOne(db, sql: "SELECT count(*) > 0 FROM sqlite_master WHERE name = ?", arguments: [candidate]) ?? false {
            n += 1
            candidate = "\(base)_\(n)"
        }
        return candidate
    }

    /// Whether an index named `name` exists, and on which table.
    static func indexTable(_ name: String, in db: Database) throws -> String? {
        try String.fetchOne(db, sql: "SELECT tbl_name FROM sqlite_master WHERE type = 'index' AND name = ?", arguments: [name])
    }

    // MARK: - Index definitions

    /// The `CREATE INDEX` statement of an existing index with its name and table replaced:
    /// `CREATE [UNIQUE] INDEX [IF NOT EXISTS] name ON table <rest>` becomes
    /// `CREATE [UNIQUE] INDEX "newName" ON "newTable" <rest>`. Nil when the statement does not
    /// have that shape (the caller then falls back to a one-step drop).
    static func renamedIndexSQL(_ sql: String, name newName: String, table newTable: String) -> String? {
        var scanner = SQLTokenScanner(sql)
        guard scanner.keyword("CREATE") else { return nil }
        let unique = scanner.keyword("UNIQUE")
        guard scanner.keyword("INDEX") else { return nil }
        if scanner.keyword("IF") {
            guard scanner.keyword("NOT"), scanner.keyword("EXISTS") else { return nil }
        }
        guard scanner.identifier() != nil, scanner.keyword("ON"), scanner.identifier() != nil else { return nil }
        let rest = scanner.remainder
        guard rest.hasPrefix("(") else { return nil }
        return "CREATE \(unique ? "UNIQUE " : "")INDEX \(quoteIdentifier(newName)) ON \(quoteIdentifier(newTable)) \(rest)"
    }
}

/// A minimal scanner over the head of a `CREATE INDEX` statement: keywords and identifiers
/// (bare, `"quoted"`, `` `quoted` `` or `[quoted]`), skipping whitespace.
struct SQLTokenScanner {
    private let characters: [Character]
    private var position = 0

    init(_ text: String) { characters = Array(text) }

    var remainder: String {
        var p = position
        while p < characters.count, characters[p].isWhitespace { p += 1 }
        return String(characters[p...])
    }

    private mutating func skipSpace() {
        while position < characters.count, characters[position].isWhitespace { position += 1 }
    }

    /// Consumes `word` (case-insensitive) when it is the next token.
    mutating func keyword(_ word: String) -> Bool {
        skipSpace()
        let end = position + word.count
        guard end <= characters.count, String(characters[position..<end]).uppercased() == word else { return false }
        if end < characters.count, characters[end].isLetter || characters[end].isNumber || characters[end] == "_" { return false }
        position = end
        return true
    }

    /// Consumes the next identifier; returns it unquoted.
    mutating func identifier() -> String? {
        skipSpace()
        guard position < characters.count else { return nil }
        let first = characters[position]
        let closing: Character? = first == "\"" ? "\"" : first == "`" ? "`" : first == "[" ? "]" : nil
        if let closing {
            var result = ""
            var p = position + 1
            while p < characters.count {
                if characters[p] == closing {
                    if closing != "]", p + 1 < characters.count, characters[p + 1] == closing {
                        result.append(closing)
                        p += 2
                        continue
                    }
                    position = p + 1
                    return result
                }
                result.append(characters[p])
                p += 1
            }
            return nil
        }
        var p = position
        while p < characters.count, characters[p].isLetter || characters[p].isNumber || characters[p] == "_" || characters[p] == "$" { p += 1 }
        guard p > position else { return nil }
        defer { position = p }
        return String(characters[position..<p])
    }
}
