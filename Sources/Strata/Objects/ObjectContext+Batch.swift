import Foundation
import GRDB

/// Batch deletes and updates by predicate, each one SQL statement over the store (Core Data's
/// `NSBatchDeleteRequest` / `NSBatchUpdateRequest`), for the typed layer's
/// `ModelContext.delete(model:where:)` and `update(model:where:set:)`.
///
/// Like Core Data's batch requests they bypass the context's objects: objects already
/// registered keep the values they had (fetch again, or reset the context), and no delete
/// rule runs. A batch delete is therefore refused, before anything is written, when a row of
/// the entity may be referenced through storage a delete rule would have to maintain. Each
/// batch records its changes in the change history like a save.
extension ObjectContext {
    /// Deletes every saved object matching `request` (its sort, limit and offset apply) in one
    /// `DELETE … WHERE "_pk" IN (SELECT …)` statement; returns how many rows went.
    ///
    /// - Throws: ``ObjectContextError`` with code `deleteDenied` when the entity takes part in
    ///   a relationship whose storage would keep dangling references (naming it);
    ///   ``FetchPredicateError`` for a bad request; `store` for SQLite errors.
    package func batchDelete(_ request: FetchRequest) throws -> Int {
        guard let layout = storeLayout.entity(request.entityName) else {
            throw ObjectContextError(.unknownEntity, "no entity '\(request.entityName)' in model '\(model.version)'", entity: request.entityName)
        }
        try checkBatchDeletable(request.entityName)
        let keys = try FetchQuery.selectPrimaryKeys(request, layout: storeLayout)
        let sql = "DELETE FROM \(quoteIdentifier(layout.table)) WHERE \"_pk\" IN (\(keys.sql)) RETURNING \"_pk\"\(layout.hasEntityColumn ? ", \"_entity\"" : "")"
        return try runBatch(sql: sql, arguments: keys.arguments, entity: request.entityName, kind: .delete, properties: [])
    }

    /// Sets `values` (keypath → value: attributes and composite leaves) on every saved object
    /// matching `request`, in one `UPDATE … WHERE "_pk" IN (SELECT …)` statement that also
    /// bumps each row's optimistic-locking version; returns how many rows changed.
    ///
    /// - Throws: ``ObjectContextError`` (`unknownProperty`, `typeMismatch`, `missingValue` for
    ///   nil in a non-optional attribute) before anything is written; `store` for SQLite errors.
    package func batchUpdate(_ request: FetchRequest, values: [(keyPath: String, value: Value)]) throws -> Int {
        guard let layout = storeLayout.entity(request.entityName) else {
            throw ObjectContextError(.unknownEntity, "no entity '\(request.entityName)' in model '\(model.version)'", entity: request.entityName)
        }
        guard !values.isEmpty else { return 0 }
        var assignments: [String] = []
        var arguments: [Value] = []
        for (keyPath, value) in values {
            guard let column = layout.attributeColumns[keyPath] else {
                throw ObjectContextError(.unknownProperty, "entity '\(request.entityName)' has no attribute '\(keyPath)' to update\(ManagedObject.suggestion(keyPath, in: Array(layout.attributeColumns.keys)))", entity: request.entityName, property: keyPath)
            }
            guard let coerced = value.coerced(to: column.attribute.type) else {
                throw ObjectContextError(.typeMismatch, "\(value) (\(value.kindName)) is not a valid \(column.attribute.type.rawValue)", entity: request.entityName, property: keyPath)
            }
            if coerced.isNull, !column.attribute.isOptional {
                throw ObjectContextError(.missingValue, "'\(keyPath)' is not optional; a batch update cannot set it to nil", entity: request.entityName, property: keyPath)
            }
            assignments.append("\(quoteIdentifier(column.column)) = ?")
            arguments.append(coerced)
        }
        let keys = try FetchQuery.selectPrimaryKeys(request, layout: storeLayout)
        let sql = "UPDATE \(quoteIdentifier(layout.table)) SET \(assignments.joined(separator: ", ")), \"_version\" = \"_version\" + 1 WHERE \"_pk\" IN (\(keys.sql)) RETURNING \"_pk\"\(layout.hasEntityColumn ? ", \"_entity\"" : "")"
        let properties = Set(values.map { $0.keyPath.split(separator: ".").first.map(String.init) ?? $0.keyPath }).sorted()
        return try runBatch(sql: sql, arguments: arguments + keys.arguments, entity: request.entityName, kind: .update, properties: properties)
    }

    /// Runs one batch statement returning the changed rows' keys, and records them in the history.
    private func runBatch(sql: String, arguments: [Value], entity: String, kind: HistoryChange.Kind, properties: [String]) throws -> Int {
        var count = 0
        do {
            try writeDatabase { db in
                let rows = try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments.map(\.databaseValue)))
                count = rows.count
                guard let store = backingStore, store.options.recordsHistory, !rows.isEmpty else { return }
                let changes = rows.map { row in
                    PendingHistoryChange(entity: row.count > 1 ? (row[1] as String? ?? entity) : entity, primaryKey: row[0], kind: kind, properties: properties)
                }
                try HistoryRecorder.record(changes, user: transactionUser, author: transactionAuthor, store: store, in: db)
            }
        } catch let error as DatabaseError {
            if let limit = FetchPredicateError.sqliteLimit(error.message, entity: entity) { throw limit }
            throw ObjectContextError(.store, "batch \(kind == .delete ? "delete" : "update") failed", entity: entity,
                                     storeError: StoreError.from(error, path: storePath, while: "running a batch \(kind == .delete ? "delete" : "update") of '\(entity)'"))
        }
        return count
    }

    /// Refuses a batch delete of `entityName` when its rows are linked through storage that a
    /// delete would leave dangling (a foreign key or a join table pointing at them), or
    /// through a relationship whose delete rule (cascade, deny) must run: a per-object delete
    /// applies the rules there. Links stored on the deleted rows themselves go with them.
    private func checkBatchDeletable(_ entityName: String) throws(ObjectContextError) {
        let hierarchy = Set(model.hierarchy(of: entityName).map(\.name)).union(model.ancestry(of: entityName).map(\.name))
        let table = storeLayout.entity(entityName)?.table
        for entity in model.entities {
            let ours = hierarchy.contains(entity.name)
            for relationship in entity.relationships where ours || hierarchy.contains(relationship.destination) {
                let storage = storeLayout.entity(entity.name)?.relationships[relationship.name]
                var safe: Bool
                switch storage {
                case .foreignKey?:
                    // On our rows: goes with them. On another entity's rows: would dangle.
                    safe = ours
                case .inverseForeignKey(let onTable, _, _)?:
                    // Another entity's to-many kept by a column on our rows: goes with them.
                    safe = !ours && onTable == table
                case .joinTable?, nil:
                    safe = false
                }
                if ours, relationship.deleteRule == .cascade || relationship.deleteRule == .deny { safe = false }
                guard !safe else { continue }
                throw ObjectContextError(.deleteDenied, "a batch delete of '\(entityName)' cannot apply the relationship '\(entity.name).\(relationship.name)' (\(relationship.isToMany ? "to-many" : "to-one"), delete rule \(relationship.deleteRule.rawValue)); delete the objects one by one with delete(_:) so that the rule runs", entity: entityName, property: relationship.name)
            }
        }
    }
}

extension ObjectContext {
    /// The primary keys of the saved objects matching `request`, in its order, without loading them.
    package func primaryKeys(_ request: FetchRequest) throws -> [Int64] {
        let fragment = try FetchQuery.selectPrimaryKeys(request, layout: storeLayout)
        return try readDatabase { db in try Int64.fetchAll(db, sql: fragment.sql, arguments: fragment.statementArguments) }
    }
}
