import Foundation
import GRDB

/// Copies the rows of a Core Data store (its private copy) into a new Strata store of the same
/// model version, keeping every object's primary key (`Z_PK` becomes `_pk`, so every
/// reference stays valid): entity tables with their attributes, to-one links and orders, then
/// join tables. Runs inside the caller's transaction on the Strata store.
struct CoreDataRowCopier {
    let copy: CoreDataStoreCopy
    let mapping: CoreDataStoreMapping
    let layout: StorageLayout
    let reader: CoreDataValueReader
    let progress: (_ table: String, _ rowsDone: Int64, _ rowsTotal: Int64) -> Void

    /// What was copied.
    struct Counts {
        var objects: [String: Int64] = [:]
        var links: [String: Int64] = [:]
        var rowsDone: Int64 = 0
    }

    var store: String { copy.source.path }

    /// Rows to copy, for progress (entity and join tables).
    func totalRows() throws -> Int64 {
        try copy.database.read { db in
            var total: Int64 = 0
            for table in mapping.tables.values { total += try Int64.fetchOne(db, sql: "SELECT count(*) FROM \(quoteIdentifier(table.name))") ?? 0 }
            for join in mapping.joins { total += try Int64.fetchOne(db, sql: "SELECT count(*) FROM \(quoteIdentifier(join.table))") ?? 0 }
            return total
        }
    }

    func copyAll(into db: Database, total: Int64) throws -> Counts {
        var counts = Counts()
        for root in mapping.tables.keys.sorted() {
            try copyTable(mapping.tables[root]!, into: db, counts: &counts, total: total)
        }
        for join in mapping.joins {
            try copyJoin(join, into: db, counts: &counts, total: total)
        }
        return counts
    }

    // MARK: - Entity tables

    private func copyTable(_ table: CoreDataStoreMapping.Table, into db: Database, counts: inout Counts, total: Int64) throws {
        guard let strataTable = layout.tables[table.root] else { return }
        let columns = try resolvedColumns(table)
        var select: [String] = []
        var insert: [String] = [StorageLayout.primaryKeyColumn, StorageLayout.versionColumn]
        enum Slot { case attribute(entity: String, keyPath: String, attribute: Attribute), integer }
        var slots: [Slot] = []
        let hasEntityColumn = strataTable.column(named: StorageLayout.entityColumn) != nil
        if hasEntityColumn { insert.append(StorageLayout.entityColumn) }
        for column in columns {
            switch column.role {
            case .attribute(let entity, let keyPath, let attribute):
                guard let target = layout.entity(entity)?.attributeColumns[keyPath]?.column else { continue }
                select.append(quoteIdentifier(column.name))
                insert.append(target)
                slots.append(.attribute(entity: entity, keyPath: keyPath, attribute: attribute))
            case .toOne(let entity, let relationship):
                guard case .foreignKey(let target, _)? = layout.entity(entity)?.relationships[relationship] else { continue }
                select.append(quoteIdentifier(column.name))
                insert.append(target)
                slots.append(.integer)
            case .order(let owner, let relationship, let inverse):
                guard case .inverseForeignKey(_, _, let target?)? = layout.entity(owner)?.relationships[relationship],
                      let link = columns.first(where: { if case .toOne(_, inverse) = $0.role { return true }; return false })
                else { continue }
                let group = quoteIdentifier(link.name)
                select.append("CASE WHEN \(group) IS NULL THEN NULL ELSE row_number() OVER (PARTITION BY \(group) ORDER BY \(quoteIdentifier(column.name)), \"Z_PK\") - 1 END")
                insert.append(target)
                slots.append(.integer)
            case .primaryKey, .entityNumber, .optimisticLock, .toOneEntityNumber:
                continue
            }
        }
        let sql = "SELECT \"Z_PK\", \"Z_ENT\", \"Z_OPT\"\(select.map { ", " + $0 }.joined()) FROM \(quoteIdentifier(table.name)) ORDER BY \"Z_PK\""
        let insertSQL = "INSERT INTO \(quoteIdentifier(strataTable.name)) (\(insert.map(quoteIdentifier).joined(separator: ", "))) VALUES (\(insert.map { _ in "?" }.joined(separator: ", ")))"
        let statement = try db.makeStatement(sql: insertSQL)
        let hierarchy = Set(mapping.model.hierarchy(of: table.root).map(\.name))
        try copy.database.read { source in
            let rows = try Row.fetchCursor(source, sql: sql)
            while let row = try rows.next() {
                let pk: Int64 = row[0]
                let number: Int? = row[1]
                guard let number, let entity = mapping.entityNames[number], hierarchy.contains(entity) else {
                    throw CoreDataImportError(.invalidValue, "the row's Z_ENT (\(number.map(String.init) ?? "NULL")) names no entity of table \(table.name) in Z_PRIMARYKEY; the store is inconsistent — open it with the app to repair it", store: store, entity: table.root, objectPrimaryKey: pk)
                }
                var arguments: [DatabaseValue] = [pk.databaseValue, ((row[2] as Int64?) ?? 1).databaseValue]
                if hasEntityColumn { arguments.append(entity.databaseValue) }
                for (i, slot) in slots.enumerated() {
                    let stored: DatabaseValue = row[3 + i]
                    switch slot {
                    case .integer:
                        arguments.append(stored)
                    case .attribute(let declaring, let keyPath, let attribute):
                        arguments.append(try reader.value(stored, attribute: attribute, entity: declaring, keyPath: keyPath, pk: pk).databaseValue)
                    }
                }
                try statement.execute(arguments: StatementArguments(arguments))
                counts.objects[entity, default: 0] += 1
                counts.rowsDone += 1
                if counts.rowsDone % 2000 == 0 { progress(table.name, counts.rowsDone, total) }
            }
        }
        progress(table.name, counts.rowsDone, total)
    }

    /// The table's columns, with colliding names (`ZTITLE`, `ZTITLE1`) given to the entities
    /// whose rows actually hold values in them.
    private func resolvedColumns(_ table: CoreDataStoreMapping.Table) throws -> [CoreDataStoreMapping.Column] {
        var columns = table.columns
        for group in table.collisionGroups {
            let names = group.map { columns[$0].name }
            func fits(_ assignment: [String]) throws -> Bool {
                for (slot, name) in zip(group, assignment) {
                    guard let entity = columns[slot].role.entity else { continue }
                    let numbers = mapping.model.hierarchy(of: entity).compactMap { mapping.entityNumbers[$0.name] }.map(String.init).joined(separator: ", ")
                    let foreign = try copy.database.read { db in
                        try Int64.fetchOne(db, sql: "SELECT count(*) FROM \(quoteIdentifier(table.name)) WHERE \(quoteIdentifier(name)) IS NOT NULL AND \"Z_ENT\" NOT IN (\(numbers.isEmpty ? "NULL" : numbers))") ?? 0
                    }
                    if foreign > 0 { return false }
                }
                return true
            }
            if try fits(names) { continue }
            guard let assignment = try Self.permutations(names).first(where: fits) else {
                let owners = group.map { CoreDataStoreMapping.describe(columns[$0].role) }.joined(separator: ", ")
                throw CoreDataImportError(.invalidValue, "columns \(names.joined(separator: ", ")) of table \(table.name) hold \(owners), but their values do not follow the entities of the rows; the store does not have this version's layout — name the store's version with --from", store: store, entity: table.root)
            }
            for (slot, name) in zip(group, assignment) { columns[slot].name = name }
        }
        return columns
    }

    static func permutations(_ items: [String]) -> [[String]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { i -> [[String]] in
            var rest = items
            let first = rest.remove(at: i)
            return permutations(rest).map { [first] + $0 }
        }
    }

    // MARK: - Join tables

    private func copyJoin(_ join: CoreDataStoreMapping.Join, into db: Database, counts: inout Counts, total: Int64) throws {
        guard case .joinTable(let name, let own, let other, let order)? = layout.entity(join.owner)?.relationships[join.relationship.name] else { return }
        var inverseOrder: String?
        if let inverse = join.relationship.inverse,
           case .joinTable(name, _, _, let o)? = layout.entity(join.relationship.destination)?.relationships[inverse],
           !(join.owner == join.relationship.destination && inverse == join.relationship.name) {
            inverseOrder = o
        }
        let ownerColumn = quoteIdentifier(join.ownerColumn), destinationColumn = quoteIdentifier(join.destinationColumn)
        var select = [ownerColumn, destinationColumn]
        var insert = [own, other]
        if let order, let fok = join.destinationOrderColumn {
            select.append("row_number() OVER (PARTITION BY \(ownerColumn) ORDER BY \(quoteIdentifier(fok)), \(destinationColumn)) - 1")
            insert.append(order)
        }
        if let inverseOrder, let fok = join.ownerOrderColumn {
            select.append("row_number() OVER (PARTITION BY \(destinationColumn) ORDER BY \(quoteIdentifier(fok)), \(ownerColumn)) - 1")
            insert.append(inverseOrder)
        }
        let sql = "SELECT \(select.joined(separator: ", ")) FROM \(quoteIdentifier(join.table)) WHERE \(ownerColumn) IS NOT NULL AND \(destinationColumn) IS NOT NULL"
        let statement = try db.makeStatement(sql: "INSERT OR IGNORE INTO \(quoteIdentifier(name)) (\(insert.map(quoteIdentifier).joined(separator: ", "))) VALUES (\(insert.map { _ in "?" }.joined(separator: ", ")))")
        let key = "\(join.owner).\(join.relationship.name)"
        try copy.database.read { source in
            let rows = try Row.fetchCursor(source, sql: sql)
            while let row = try rows.next() {
                try statement.execute(arguments: StatementArguments((0..<select.count).map { row[$0] as DatabaseValue }))
                counts.links[key, default: 0] += 1
                counts.rowsDone += 1
                if counts.rowsDone % 2000 == 0 { progress(join.table, counts.rowsDone, total) }
            }
        }
        progress(join.table, counts.rowsDone, total)
    }

    // MARK: - Dangling references

    /// Clears to-one links and deletes join rows that point at objects the store does not
    /// have (Core Data can leave such references behind); returns what was removed.
    func removeDanglingReferences(in db: Database) throws -> [String] {
        var removed: [String] = []
        for table in layout.tables.values.sorted(by: { $0.name < $1.name }) {
            for column in table.columns {
                guard case .foreignKey(let entity, let relationship, let destination) = column.role else { continue }
                try db.execute(sql: "UPDATE \(quoteIdentifier(table.name)) SET \(quoteIdentifier(column.name)) = NULL WHERE \(quoteIdentifier(column.name)) IS NOT NULL AND \(quoteIdentifier(column.name)) NOT IN (SELECT \"_pk\" FROM \(quoteIdentifier(destination)))")
                if db.changesCount > 0 { removed.append("cleared \(db.changesCount) link(s) of \(entity).\(relationship) to objects that are not in the store") }
            }
        }
        for join in layout.joinTables.values.sorted(by: { $0.name < $1.name }) {
            try db.execute(sql: "DELETE FROM \(quoteIdentifier(join.name)) WHERE \"source_id\" NOT IN (SELECT \"_pk\" FROM \(quoteIdentifier(join.sourceTable))) OR \"target_id\" NOT IN (SELECT \"_pk\" FROM \(quoteIdentifier(join.targetTable)))")
            if db.changesCount > 0 { removed.append("dropped \(db.changesCount) link(s) of \(join.sourceEntity).\(join.sourceRelationship) to objects that are not in the store") }
        }
        return removed
    }
}
