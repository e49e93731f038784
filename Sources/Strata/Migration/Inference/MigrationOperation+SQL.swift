import Foundation
import GRDB

extension MigrationOperation {
    /// The statements that perform this operation in one step.
    ///
    /// Synchronous operations run them inside the migration transaction. For deferrable table
    /// rewrites (``Kind/rewriteTable(_:)``) this is the offline form; the deferral finisher uses
    /// the ``TableRewrite`` payload to copy in batches instead. Operations for which
    /// ``requiresForeignKeysOff`` is true must run with `PRAGMA foreign_keys = OFF`.
    public func sql() -> [String] {
        switch kind {
        case .renameTable(let from, let to):
            return ["ALTER TABLE \(q(from)) RENAME TO \(q(to))"]
        case .renameColumn(let table, let from, let to):
            return ["ALTER TABLE \(q(table)) RENAME COLUMN \(q(from)) TO \(q(to))"]
        case .addColumn(let table, let column, let type, let defaultSQL):
            return ["ALTER TABLE \(q(table)) ADD COLUMN \(q(column)) \(type)" + (defaultSQL.map { " DEFAULT \($0)" } ?? "")]
        case .createTable(_, let sql), .createJoinTable(_, let sql):
            return [sql]
        case .copyRows(let copy):
            return ["INSERT INTO \(q(copy.toTable)) (\(copy.columns.map(q).joined(separator: ", "))) SELECT \(copy.expressions.joined(separator: ", ")) FROM \(q(copy.fromTable))" + (copy.filter.map { " WHERE \($0)" } ?? "")]
        case .deleteRows(let deletion):
            let filter = "\(q(StorageLayout.entityColumn)) IN (\(deletion.entityValues.map(sqlLiteral).joined(separator: ", ")))"
            let nullify = deletion.nullifiedReferences.map {
                "UPDATE \(q($0.table)) SET \(q($0.column)) = NULL WHERE \(q($0.column)) IN (SELECT \"_pk\" FROM \(q(deletion.table)) WHERE \(filter))"
            }
            return nullify + ["DELETE FROM \(q(deletion.table)) WHERE \(filter)"]
        case .populateJoinTable(let population):
            return populationSQL(population)
        case .populateForeignKey(let table, let column, let fromTable, let fromColumn):
            return ["UPDATE \(q(table)) SET \(q(column)) = (SELECT \"_pk\" FROM \(q(fromTable)) AS f WHERE f.\(q(fromColumn)) = \(q(table)).\"_pk\" ORDER BY \"_pk\" LIMIT 1)"]
        case .fillOrder(let table, let order, let group, let sort):
            return [Self.numberingSQL(table: table, orderColumn: order, groupColumn: group, sortColumn: sort, key: "rowid")]
        case .setDefaultWhereNull(let table, let column, let defaultSQL):
            return ["UPDATE \(q(table)) SET \(q(column)) = \(defaultSQL) WHERE \(q(column)) IS NULL"]
        case .renameEntityValues(let table, let from, let to):
            return ["UPDATE \(q(table)) SET \(q(StorageLayout.entityColumn)) = \(sqlLiteral(to)) WHERE \(q(StorageLayout.entityColumn)) = \(sqlLiteral(from))"]
        case .widenColumn:
            return []
        case .createIndex(let index):
            return [index.sql]
        case .dropIndex(let name, _):
            return ["DROP INDEX IF EXISTS \(q(name))"]
        case .rebuildIndex(let oldName, let index):
            return ["DROP INDEX IF EXISTS \(q(oldName))", index.sql]
        case .rewriteTable(let rewrite), .rewriteJoinTable(let rewrite):
            let columns = rewrite.columns.map(q).joined(separator: ", ")
            return [
                "DROP TABLE IF EXISTS \(q(rewrite.shadowTable))",
                rewrite.createShadowSQL,
                "INSERT INTO \(q(rewrite.shadowTable)) (\(columns)) SELECT \(columns) FROM \(q(rewrite.table))",
                "DROP TABLE \(q(rewrite.table))",
                "ALTER TABLE \(q(rewrite.shadowTable)) RENAME TO \(q(rewrite.table))",
                "DROP TABLE IF EXISTS \(q(rewrite.copyCursorTable))",
            ] + rewrite.indexSQL
        case .dropTable(let table):
            return ["DROP TABLE IF EXISTS \(q(table))"]
        case .incrementalVacuum:
            return ["PRAGMA incremental_vacuum"]
        case .backup:
            return []   // not SQL: the sqlite3 backup API (the deferred finisher runs it)
        }
    }

    /// Runs this operation on `db` in one step: checks preconditions (duplicates before a unique
    /// index), then executes ``sql()``. Does not open a transaction nor change `foreign_keys`;
    /// see ``MigrationPlan/apply(to:includingDeferrable:)``.
    public func execute(in db: Database) throws {
        if case .createIndex(let index) = kind, let check = index.duplicateCheckSQL,
            let row = try Row.fetchOne(db, sql: check)
        {
            let values = (0..<index.columns.count).map { "\(Value(databaseValue: row[$0] as DatabaseValue))" }
            let count: Int = row[index.columns.count]
            throw MigrationError(
                .uniquenessViolation,
                "\(count) rows share the values (\(values.joined(separator: ", "))) of \(index.keyPaths.joined(separator: ", ")), so the uniqueness constraint cannot be added; remove the duplicates first, or \(MigrationError.stagedAdvice)",
                entity: index.entity, property: index.keyPaths.joined(separator: ","),
                change: "add uniqueness constraint on \(index.keyPaths.joined(separator: ", "))")
        }
        for statement in sql() { try db.execute(sql: statement) }
    }

    // MARK: - Helpers

    private func populationSQL(_ population: JoinPopulation) -> [String] {
        var statements: [String] = []
        let join = q(population.joinTable)
        for source in population.sources {
            var columns = ["source_id", "target_id"]
            var values = source.rowIsSource ? ["\"_pk\"", q(source.column)] : [q(source.column), "\"_pk\""]
            if let order = source.orderColumn {
                columns.append(source.orderIntoSource ? "source_order" : "target_order")
                values.append(q(order))
            }
            statements.append("INSERT OR IGNORE INTO \(join) (\(columns.map(q).joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) FROM \(q(source.table)) WHERE \(q(source.column)) IS NOT NULL AND \(q(source.column)) IN (SELECT \"_pk\" FROM \(q(source.referencedTable)))")
        }
        for order in population.numberedOrderColumns {
            let group = order == "source_order" ? "source_id" : "target_id"
            let sort = order == "source_order" ? "target_id" : "source_id"
            statements.append(Self.numberingSQL(table: population.joinTable, orderColumn: order, groupColumn: group, sortColumn: sort, key: "rowid"))
        }
        return statements
    }

    /// Numbers rows 0, 1, 2… within each group, by `sortColumn`, where the order is NULL.
    static func numberingSQL(table: String, orderColumn: String, groupColumn: String, sortColumn: String, key: String) -> String {
        let t = quoteIdentifier(table)
        return "UPDATE \(t) SET \(quoteIdentifier(orderColumn)) = numbered.position FROM (SELECT \(key) AS k, row_number() OVER (PARTITION BY \(quoteIdentifier(groupColumn)) ORDER BY \(quoteIdentifier(sortColumn))) - 1 AS position FROM \(t) WHERE \(quoteIdentifier(groupColumn)) IS NOT NULL) AS numbered WHERE \(t).\(key) = numbered.k AND \(t).\(quoteIdentifier(orderColumn)) IS NULL"
    }
}

private func q(_ name: String) -> String { quoteIdentifier(name) }

/// A SQL string literal: `'it''s'`.
func sqlLiteral(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }

extension Value {
    /// The value as a SQL literal for `DEFAULT` clauses and `UPDATE … SET`, in the storage form
    /// of ``databaseValue`` (so `DEFAULT` values read back like values the object layer wrote).
    var sqlLiteral: String {
        switch databaseValue.storage {
        case .null: return "NULL"
        case .int64(let i): return String(i)
        case .double(let d):
            if d.isNaN { return "NULL" }
            if d.isInfinite { return d > 0 ? "9e999" : "-9e999" }
            let text = "\(d)"
            return text.contains(".") || text.contains("e") ? text : text + ".0"
        case .string(let s): return Strata.sqlLiteral(s)
        case .blob(let data): return "X'" + data.map { String(format: "%02X", $0) }.joined() + "'"
        }
    }
}
