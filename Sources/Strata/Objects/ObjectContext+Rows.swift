import Foundation
import GRDB
import GRDBSQLite

extension ObjectContext {
    /// The columns of an entity table in the current model, as a select list. The object layer
    /// never reads `*`: a store with deferred cleanup still has leftover columns.
    func selectList(table: String, alias: String?) -> String {
        let prefix = alias.map { "\($0)." } ?? ""
        return (storeLayout.tables[table]?.columns ?? []).map { prefix + quoteIdentifier($0.name) }.joined(separator: ", ")
    }

    /// Runs a `SELECT` of whole rows of one entity table and returns registered objects.
    func fetchRows(_ fragment: SQLFragment, table: String) throws -> [ManagedObject] {
        let rootEntity = storeLayout.tables[table]?.rootEntity ?? table
        do {
            return try readDatabase { db in
                let statement = try db.cachedStatement(sql: fragment.sql)
                try statement.setArguments(fragment.statementArguments)
                let entry = rowPlan(for: statement, sql: fragment.sql, rootEntity: rootEntity)
                let plan = entry.plan
                var result: [ManagedObject] = []
                result.reserveCapacity(entry.rows.last)
                defer { entry.rows.last = result.count }
                if plan.entity == nil, let decoder = entry.rootDecoder {
                    // One entity per row (no `_entity` column): one decoder, read in place,
                    // stepped by a cursor of primary keys (no `Row` made per fetch or handed
                    // out per row; one busy check per fetch).
                    let sqliteStatement = statement.sqliteStatement
                    let keys = try Int64.fetchCursor(statement, adapter: plan.primaryKey == 0 ? nil : SuffixRowAdapter(fromIndex: plan.primaryKey))
                    try keys.forEach { primaryKey in
                        result.append(registered.object(primaryKey: primaryKey, entityName: rootEntity) {
                            makeObject(ObjectID(entityName: rootEntity, primaryKey: primaryKey), statement: sqliteStatement, plan: plan, decoder: decoder)
                        })
                    }
                    return result
                }
                var decoders = RowDecoders()
                let rows = try Row.fetchCursor(statement)
                while let row = try rows.next() {
                    result.append(object(for: row, plan: plan, rootEntity: rootEntity, statement: statement, decoders: &decoders))
                }
                return result
            }
        } catch let error as DatabaseError {
            if let limit = FetchPredicateError.sqliteLimit(error.message, entity: rootEntity) { throw limit }
            throw ObjectContextError(.store, "fetch failed", storeError: StoreError.from(error, path: storePath, while: "fetching"))
        }
    }

    /// A fetch SQL's row plan and, for rows of one entity, its decoder.
    struct RowPlanEntry {
        let plan: RowPlan
        let rootDecoder: RowDecoder?
        /// How many rows its last fetch returned (the next result's first capacity).
        let rows = RowCount()
    }

    /// A fetch's row count, kept for the next fetch of the same SQL.
    final class RowCount {
        var last = 0
    }

    /// Row plans kept per ``ContextCaches`` before they are worked out afresh.
    static let rowPlanCapacity = 128

    /// The row plan of `statement` (prepared from `sql`, rows of `rootEntity`'s table): worked
    /// out on the first fetch of `sql` with these caches (the store's, lent to one context at a
    /// time), then kept. Its columns are named by the SQL (the object layer never selects `*`),
    /// and the layout is the store's for its whole life.
    func rowPlan(for statement: Statement, sql: String, rootEntity: String) -> RowPlanEntry {
        if let entry = caches.rowPlans[sql] { return entry }
        let plan = RowPlan(columnNames: statement.columnNames)
        let entry = RowPlanEntry(plan: plan, rootDecoder: plan.entity == nil ? rowDecoder(for: rootEntity, plan: plan) : nil)
        if caches.rowPlans.count >= Self.rowPlanCapacity { caches.rowPlans.removeAll(keepingCapacity: true) }
        caches.rowPlans[sql] = entry
        return entry
    }

    /// Column positions of one result set.
    struct RowPlan {
        let index: [String: Int]
        let primaryKey: Int
        let entity: Int?
        let version: Int?
        init(columnNames: [String]) {
            var index: [String: Int] = [:]
            for (i, name) in columnNames.enumerated() where index[name] == nil { index[name] = i }
            self.index = index
            primaryKey = index[StorageLayout.primaryKeyColumn] ?? 0
            entity = index[StorageLayout.entityColumn]
            version = index[StorageLayout.versionColumn]
        }
    }

    /// How to turn rows of one entity in one result set into objects, computed once per fetch.
    struct RowDecoder {
        let info: EntityInfo
        /// The result column of each slot (-1: not selected).
        let positions: [Int]
        /// To-one relationships stored on the row: name and result column.
        let foreignKeys: [(name: String, position: Int)]
    }

    /// How rows of `entityName` in a result set of `plan` become objects (nil: no such entity).
    func rowDecoder(for entityName: String, plan: RowPlan) -> RowDecoder? {
        guard let info = info(for: entityName) else { return nil }
        var foreignKeys: [(name: String, position: Int)] = []
        for (name, storage) in info.layout.relationships.sorted(by: { $0.key < $1.key }) {
            if case .foreignKey(let column, _) = storage, let i = plan.index[column] { foreignKeys.append((name, i)) }
        }
        return RowDecoder(info: info, positions: info.layout.slots.map { plan.index[$0.column] ?? -1 }, foreignKeys: foreignKeys)
    }

    /// A new object from the statement's current row (not registered).
    private func makeObject(_ id: ObjectID, statement sqliteStatement: OpaquePointer, plan: RowPlan, decoder: RowDecoder) -> ManagedObject {
        let types = decoder.info.slotTypes
        let positions = decoder.positions
        // `reserveCapacity` and `append`, not `Array(unsafeUninitializedCapacity:)`: with this
        // Swift (6.3) the latter allocates through an unspecialized path that looks up the
        // storage class's generic metadata on every call (a third of the array's cost).
        var values: [Value] = []
        values.reserveCapacity(positions.count)
        for slot in positions.indices {
            let position = positions[slot]
            values.append(position < 0 ? .null : Value(sqliteStatement: sqliteStatement, index: CInt(position), type: types[slot]))
        }
        var version: Int64 = 1
        if let column = plan.version, sqlite3_column_type(sqliteStatement, CInt(column)) != SQLITE_NULL {
            version = sqlite3_column_int64(sqliteStatement, CInt(column))
        }
        let object = ManagedObject(objectID: id, info: decoder.info, context: self, values: values, version: version)
        for (name, position) in decoder.foreignKeys {
            let key: Int64? = sqlite3_column_type(sqliteStatement, CInt(position)) == SQLITE_NULL
                ? nil : sqlite3_column_int64(sqliteStatement, CInt(position))
            object.toOne[name] = .stored(key)
            object.committedToOne[name] = key
        }
        return object
    }

    /// The decoders of one result set by entity; the last one used is kept at hand, as the
    /// rows of a result set are mostly of one entity.
    struct RowDecoders {
        var last: (entity: String, decoder: RowDecoder)?
        var byEntity: [String: RowDecoder] = [:]

        mutating func decoder(for entity: String) -> RowDecoder? {
            if let last, last.entity == entity { return last.decoder }
            guard let found = byEntity[entity] else { return nil }
            last = (entity, found)
            return found
        }

        mutating func add(_ decoder: RowDecoder, for entity: String) {
            byEntity[entity] = decoder
            last = (entity, decoder)
        }
    }

    private func object(for row: Row, plan: RowPlan, rootEntity: String, statement: Statement, decoders: inout RowDecoders) -> ManagedObject {
        let pk: Int64 = row[plan.primaryKey]
        var tableEntity = rootEntity
        if let i = plan.entity, let name = row[i] as String?, storeLayout.entity(name) != nil {
            tableEntity = name
        }
        let id = ObjectID(entityName: tableEntity, primaryKey: pk)
        if let existing = registered[id] { return existing }
        let decoder: RowDecoder
        if let cached = decoders.decoder(for: tableEntity) {
            decoder = cached
        } else {
            decoder = rowDecoder(for: tableEntity, plan: plan)!
            decoders.add(decoder, for: tableEntity)
        }
        var values: [Value] = []
        values.reserveCapacity(decoder.positions.count)
        let sqliteStatement = statement.sqliteStatement
        let types = decoder.info.slotTypes
        for (slot, position) in decoder.positions.enumerated() {
            guard position >= 0 else { values.append(.null); continue }
            values.append(Value(sqliteStatement: sqliteStatement, index: CInt(position), type: types[slot]))
        }
        let version: Int64 = plan.version.flatMap { row[$0] } ?? 1
        let object = ManagedObject(objectID: id, info: decoder.info, context: self, values: values, version: version)
        for (name, position) in decoder.foreignKeys {
            let key: Int64? = row[position]
            object.toOne[name] = .stored(key)
            object.committedToOne[name] = key
        }
        registered[id] = object
        return object
    }
}
