import Foundation

extension StorageLayout {
    /// `CREATE TABLE` for an entity table. Columns carry no `NOT NULL` (see ``StorageLayout``).
    public func createTableSQL(_ table: TableLayout, name: String? = nil) -> String {
        let columns = table.columns.map { column -> String in
            switch column.role {
            case .primaryKey: return "\(quoteIdentifier(column.name)) INTEGER PRIMARY KEY"
            case .version: return "\(quoteIdentifier(column.name)) INTEGER DEFAULT 1"
            default: return "\(quoteIdentifier(column.name)) \(column.sqlType)"
            }
        }
        return "CREATE TABLE \(quoteIdentifier(name ?? table.name)) (\(columns.joined(separator: ", ")))"
    }

    /// `CREATE TABLE` for a join table: both ends reference their tables and cascade on delete.
    public func createJoinTableSQL(_ join: JoinTableLayout, name: String? = nil) -> String {
        var columns = [
            "\"source_id\" INTEGER NOT NULL REFERENCES \(quoteIdentifier(join.sourceTable))(\"_pk\") ON DELETE CASCADE",
            "\"target_id\" INTEGER NOT NULL REFERENCES \(quoteIdentifier(join.targetTable))(\"_pk\") ON DELETE CASCADE",
        ]
        if join.sourceOrdered { columns.append("\"source_order\" INTEGER") }
        if join.targetOrdered { columns.append("\"target_order\" INTEGER") }
        columns.append("PRIMARY KEY (\"source_id\", \"target_id\")")
        return "CREATE TABLE \(quoteIdentifier(name ?? join.name)) (\(columns.joined(separator: ", ")))"
    }

    /// `CREATE [UNIQUE] INDEX` of `index` under another name, on another table (a build's
    /// temporary index, a rewrite's shadow).
    func createIndexSQL(_ index: IndexLayout, named name: String, on table: String) -> String {
        var moved = index
        moved.name = name
        moved.table = table
        return createIndexSQL(moved)
    }

    /// `CREATE [UNIQUE] INDEX`.
    public func createIndexSQL(_ index: IndexLayout, ifNotExists: Bool = false) -> String {
        let columns = index.columns.map { quoteIdentifier($0.name) + ($0.ascending ? "" : " DESC") }
        return "CREATE \(index.isUnique ? "UNIQUE " : "")INDEX \(ifNotExists ? "IF NOT EXISTS " : "")\(quoteIdentifier(index.name)) ON \(quoteIdentifier(index.table)) (\(columns.joined(separator: ", ")))"
    }

    /// Every statement that creates this layout in an empty database, tables first.
    public var creationSQL: [String] {
        tables.keys.sorted().map { createTableSQL(tables[$0]!) }
            + joinTables.keys.sorted().map { createJoinTableSQL(joinTables[$0]!) }
            + indexes.map { createIndexSQL($0) }
    }
}
