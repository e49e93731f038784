import Foundation
import GRDB

extension ObjectContext {
    /// Validates and writes every change in one transaction.
    ///
    /// Validation (before anything is written): non-optional attributes, composite leaves and
    /// to-one relationships must have values; to-many relationships must respect their
    /// min/max counts. Then, in one transaction: deletes, inserts, updates (each update checks
    /// the row's optimistic-locking version), join-table changes. Uniqueness is enforced by the
    /// store's unique indexes and reported naming the entity and keypaths.
    ///
    /// - Throws: ``ObjectContextError`` (`missingValue`, `countOutOfRange`,
    ///   `uniquenessViolation`, `conflict`, `store`). On error nothing is written and the
    ///   context keeps its changes, so the caller can fix them and save again, or roll back.
    public func save() throws {
        guard hasChanges else { return }
        // In primary-key order (the table's order: neighbouring rows share pages), sorted by
        // the keys alone: comparing objects read two of their properties per comparison.
        let changed = updated.values.compactMap { $0.isDeleted || $0.isInserted || !$0.hasChanges ? nil : ($0.objectID.primaryKey, $0) }
            .sorted { $0.0 < $1.0 }.map(\.1)
        for object in inserted + changed { try validate(object) }
        let toInsert = inserted
        let toDelete = deleted
        var current: ManagedObject?
        // Keys given by a failed transaction must not survive it.
        func forgetPendingKeys() { for object in toInsert { object.pendingKey = nil } }
        do {
            try writeDatabase { db in
                // Statements are looked up once per entity (and update shape) per save, not
                // by SQL text per row.
                var statements = SaveStatements()
                for object in toDelete {
                    current = object
                    var binding = DirectBinding(try statements.delete(for: object.info, db: db))
                    binding.bind(object.objectID.primaryKey.databaseValue)
                    binding.bind(object.version.databaseValue)
                    try binding.execute()
                    if db.changesCount == 0 { throw conflict(object, deleting: true) }
                }
                // Permanent keys: this transaction is the only writer, so max(_pk)+1… is ours.
                var nextKey: [String: Int64] = [:]
                for object in toInsert {
                    let table = object.layout.table
                    if nextKey[table] == nil {
                        nextKey[table] = (try Int64.fetchOne(db, sql: "SELECT coalesce(max(\"_pk\"), 0) FROM \(quoteIdentifier(table))") ?? 0) + 1
                    }
                    object.pendingKey = nextKey[table]!
                    nextKey[table]! += 1
                }
                for object in toInsert {
                    current = object
                    try insertRow(object, statements: &statements, db: db)
                }
                for object in changed {
                    current = object
                    try updateRow(object, statements: &statements, db: db)
                }
                for object in toInsert + changed where !object.changedJoinRelationships.isEmpty {
                    current = object
                    try writeJoinRows(object, db: db)
                }
                current = nil
                try recordHistory(deleted: toDelete, inserted: toInsert, updated: changed, in: db)
            }
        } catch let error as ObjectContextError {
            forgetPendingKeys()
            throw error
        } catch let error as DatabaseError {
            forgetPendingKeys()
            if error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE || error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY,
               let object = current {
                throw uniquenessError(error, object: object)
            }
            throw ObjectContextError(.store, "save failed", storeError: StoreError.from(error, path: storePath, while: "saving"))
        } catch {
            forgetPendingKeys()
            throw error
        }
        // Committed: make the in-memory state match the store.
        for object in toDelete {
            registered[object.objectID] = nil
            object.context = nil
        }
        for object in toInsert {
            object.objectID = ObjectID(entityName: object.entity.name, primaryKey: object.pendingKey!)
            object.pendingKey = nil
            object.isInserted = false
            object.version = 1
            registered[object.objectID] = object
        }
        for object in changed { object.version += 1 }
        for object in toInsert + changed {
            object.savedValues = []
            object.changedSlots.removeAll()
            guard let relations = object.relations else { continue }
            for (name, target) in relations.toOne {
                switch target {
                case .stored(let pk): relations.committedToOne[name] = pk
                case .object(let o): relations.committedToOne[name] = o.map { $0.pendingKey ?? $0.objectID.primaryKey }
                }
            }
            relations.changedKeys.removeAll()
            relations.changedJoinRelationships.removeAll()
        }
        inserted.removeAll()
        deleted.removeAll()
        updated.removeAll()
    }

    // MARK: - Validation

    func validate(_ object: ManagedObject) throws(ObjectContextError) {
        let plan: ValidationPlan
        if let cached = object.info.validationPlan {
            plan = cached
        } else {
            plan = validationPlan(for: object.entity.name)
            object.info.validationPlan = plan
        }
        func isNull(_ keyPath: String) -> Bool { (object.value(forKeyPath: keyPath) ?? .null).isNull }
        for (keyPath, slot) in plan.requiredAttributes where slot.map({ object.values[$0].isNull }) ?? isNull(keyPath) {
            throw ObjectContextError(.missingValue, "a value is required (the attribute is not optional)", entity: object.entity.name, property: keyPath, objectID: object.objectID)
        }
        for (composite, leaves) in plan.requiredCompositeLeaves {
            let all = plan.compositeLeaves[composite] ?? []
            let isSet = !plan.optionalComposites.contains(composite) || all.contains { !isNull($0) }
            guard isSet else { continue }
            if let missing = leaves.first(where: isNull) {
                throw ObjectContextError(.missingValue, "a value is required (element of composite '\(composite)' is not optional)", entity: object.entity.name, property: missing, objectID: object.objectID)
            }
        }
        for relationship in plan.checkedRelationships where !relationship.isToMany || relationship.minCount > 0 || relationship.maxCount > 0 || !relationship.isOptional {
            if !relationship.isToMany {
                if !relationship.isOptional {
                    let hasTarget: Bool
                    switch object.toOne[relationship.name] {
                    case .object(let o)?: hasTarget = o != nil
                    case .stored(let pk)?: hasTarget = pk != nil
                    case nil: hasTarget = false
                    }
                    if !hasTarget {
                        throw ObjectContextError(.missingValue, "a related '\(relationship.destination)' is required (the relationship is not optional)", entity: object.entity.name, property: relationship.name, objectID: object.objectID)
                    }
                }
                continue
            }
            let minimum = max(relationship.minCount, relationship.isOptional ? 0 : 1)
            guard minimum > 0 || relationship.maxCount > 0 else { continue }
            let count: Int
            if let loaded = object.toMany[relationship.name] { count = loaded.count }
            else if object.isInserted { count = 0 }
            else { continue }
            if count < minimum || (relationship.maxCount > 0 && count > relationship.maxCount) {
                let range = relationship.maxCount > 0 ? "\(minimum)...\(relationship.maxCount)" : "at least \(minimum)"
                throw ObjectContextError(.countOutOfRange, "holds \(count) object(s); \(range) required", entity: object.entity.name, property: relationship.name, objectID: object.objectID)
            }
        }
    }

    struct ValidationPlan {
        /// Keypaths of non-optional attributes and their value slot (nil: no slot, read by keypath).
        var requiredAttributes: [(String, Int?)] = []
        /// Relationships with something to check (to-one, or to-many with counts or not optional).
        var checkedRelationships: [Relationship] = []
        var requiredCompositeLeaves: [(String, [String])] = []
        var compositeLeaves: [String: [String]] = [:]
        var optionalComposites: Set<String> = []
    }

    func validationPlan(for entityName: String) -> ValidationPlan {
        var plan = ValidationPlan()
        let slotIndex = storeLayout.entity(entityName)?.slotIndex ?? [:]
        plan.requiredAttributes = model.storedAttributes(of: entityName).filter { !$0.isOptional }.map { ($0.name, slotIndex[$0.name]) }
        plan.checkedRelationships = relationships(of: entityName).filter {
            !$0.isToMany || $0.minCount > 0 || $0.maxCount > 0 || !$0.isOptional
        }
        for composite in model.allComposites(of: entityName) {
            let leaves = composite.leaves.map { ([composite.name] + $0.path).joined(separator: ".") }
            plan.compositeLeaves[composite.name] = leaves
            if composite.isOptional { plan.optionalComposites.insert(composite.name) }
            let required = composite.leaves.filter { !$0.attribute.isOptional }.map { ([composite.name] + $0.path).joined(separator: ".") }
            if !required.isEmpty { plan.requiredCompositeLeaves.append((composite.name, required)) }
        }
        return plan
    }

    // MARK: - Row writes

    private func foreignKeyValue(_ target: ManagedObject.ToOneTarget?) -> DatabaseValue {
        switch target {
        case .stored(let pk)?: return pk?.databaseValue ?? .null
        case .object(let o?)?: return (o.pendingKey ?? o.objectID.primaryKey).databaseValue
        case .object(nil)?, nil: return .null
        }
    }

    private func insertRow(_ object: ManagedObject, statements: inout SaveStatements, db: Database) throws {
        let plan = insertPlan(for: object)
        var binding = DirectBinding(try statements.insert(for: object.info, sql: plan.sql, db: db))
        binding.bind(object.pendingKey!.databaseValue)
        if object.layout.hasEntityColumn { binding.bind(object.entity.name.databaseValue) }
        for value in object.values { binding.bind(value.databaseValue) }
        for name in plan.toOneNames { binding.bind(foreignKeyValue(object.toOne[name])) }
        for column in plan.orderColumns { binding.bind(object.orderValues[column]?.databaseValue ?? .null) }
        try binding.execute()
    }

    private func updateRow(_ object: ManagedObject, statements: inout SaveStatements, db: Database) throws {
        let slots = object.changedSlots.sorted()
        let keys = object.changedKeys.isEmpty ? [] : object.changedKeys.sorted().filter { key in
            if case .foreignKey? = object.layout.relationships[key] { return true }
            return key.hasSuffix("_order")
        }
        // The SQL depends only on which columns changed: build it once per shape, prepare it
        // once per save.
        let shape = UpdateShape(slots: slots, keys: keys)
        var binding = DirectBinding(try statements.update(for: object.info, shape: shape, db: db) { updateSQL(object, shape: shape) })
        for slot in slots { binding.bind(object.values[slot].databaseValue) }
        for key in keys {
            if case .foreignKey? = object.layout.relationships[key] {
                binding.bind(foreignKeyValue(object.toOne[key]))
            } else {
                binding.bind(object.orderValues[key]?.databaseValue ?? .null)
            }
        }
        binding.bind(object.objectID.primaryKey.databaseValue)
        binding.bind(object.version.databaseValue)
        try binding.execute()
        if db.changesCount == 0 { throw conflict(object, deleting: false) }
    }

    /// The `UPDATE` of `shape`'s columns of `object`'s table (cached per shape on the entity).
    private func updateSQL(_ object: ManagedObject, shape: UpdateShape) -> String {
        let slots = shape.slots
        let keys = shape.keys
        let sql: String
        if let cached = object.info.updateSQL[shape] {
            sql = cached
        } else {
            var assignments = slots.map { "\(quoteIdentifier(object.layout.slots[$0].column)) = ?" }
            for key in keys {
                if case .foreignKey(let column, _)? = object.layout.relationships[key] {
                    assignments.append("\(quoteIdentifier(column)) = ?")
                } else {
                    assignments.append("\(quoteIdentifier(key)) = ?")
                }
            }
            assignments.append("\"_version\" = \"_version\" + 1")
            sql = "UPDATE \(quoteIdentifier(object.layout.table)) SET \(assignments.joined(separator: ", ")) WHERE \"_pk\" = ? AND \"_version\" = ?"
            object.info.updateSQL[shape] = sql
        }
        return sql
    }

    private func writeJoinRows(_ object: ManagedObject, db: Database) throws {
        let ownKey = object.pendingKey ?? object.objectID.primaryKey
        for name in object.changedJoinRelationships.sorted() {
            guard case .joinTable(let table, let own, let other, let orderColumn)? = object.layout.relationships[name] else { continue }
            let members = (object.toMany[name] ?? []).filter { !$0.isDeleted }
            let memberKeys = members.map { $0.pendingKey ?? $0.objectID.primaryKey }
            let existing = try Int64.fetchSet(db, sql: "SELECT \(quoteIdentifier(other)) FROM \(quoteIdentifier(table)) WHERE \(quoteIdentifier(own)) = ?", arguments: [ownKey])
            let wanted = Set(memberKeys)
            for key in existing.subtracting(wanted) {
                try db.cachedStatement(sql: "DELETE FROM \(quoteIdentifier(table)) WHERE \(quoteIdentifier(own)) = ? AND \(quoteIdentifier(other)) = ?").execute(arguments: [ownKey, key])
            }
            if let orderColumn {
                let sql = "INSERT INTO \(quoteIdentifier(table)) (\(quoteIdentifier(own)), \(quoteIdentifier(other)), \(quoteIdentifier(orderColumn))) VALUES (?, ?, ?) ON CONFLICT(\"source_id\", \"target_id\") DO UPDATE SET \(quoteIdentifier(orderColumn)) = excluded.\(quoteIdentifier(orderColumn))"
                for (i, key) in memberKeys.enumerated() { try db.cachedStatement(sql: sql).execute(arguments: [ownKey, key, i]) }
            } else {
                let sql = "INSERT OR IGNORE INTO \(quoteIdentifier(table)) (\(quoteIdentifier(own)), \(quoteIdentifier(other))) VALUES (?, ?)"
                for key in memberKeys where !existing.contains(key) { try db.cachedStatement(sql: sql).execute(arguments: [ownKey, key]) }
            }
        }
    }

    // MARK: - Errors

    private func conflict(_ object: ManagedObject, deleting: Bool) -> ObjectContextError {
        ObjectContextError(.conflict, "optimistic locking conflict: the row was changed or deleted by another context since it was fetched (version \(object.version)); \(deleting ? "the delete" : "the update") was not written — refetch the object and retry", entity: object.entity.name, objectID: object.objectID)
    }

    private func uniquenessError(_ error: DatabaseError, object: ManagedObject) -> ObjectContextError {
        // "UNIQUE constraint failed: Aircraft.tailNumber, Aircraft.x"
        let message = error.message ?? ""
        let columns = message.components(separatedBy: ": ").last?.split(separator: ",").map {
            String($0.trimmingCharacters(in: .whitespaces).split(separator: ".").last ?? "")
        } ?? []
        let keyPaths = columns.map { column in object.layout.slots.first { $0.column == column }?.keyPath ?? column }
        let values = keyPaths.map { "\($0) = \(object.value(forKeyPath: $0) ?? .null)" }.joined(separator: ", ")
        return ObjectContextError(.uniquenessViolation, "another '\(object.entity.name)' already has \(values); the uniqueness constraint on (\(keyPaths.joined(separator: ", "))) forbids duplicates", entity: object.entity.name, property: keyPaths.joined(separator: ","), objectID: object.objectID)
    }
}

/// Which columns an `UPDATE` sets: attribute slots and relationship keys.
struct UpdateShape: Hashable {
    var slots: [Int]
    var keys: [String]
}

/// The cached `INSERT` for one entity: which values go in which order.
struct InsertPlan {
    var sql: String
    var attributeKeyPaths: [String]
    var toOneNames: [String]
    var orderColumns: [String]
    var columnCount: Int
}

extension ObjectContext {
    func insertPlan(for object: ManagedObject) -> InsertPlan {
        if let cached = object.info.insertPlan { return cached }
        let layout = object.layout
        var columns = [StorageLayout.primaryKeyColumn]
        if layout.hasEntityColumn { columns.append(StorageLayout.entityColumn) }
        let keyPaths = layout.slots.map(\.keyPath)
        columns += layout.slots.map(\.column)
        var toOneNames: [String] = []
        var orderColumns: [String] = []
        for relationship in relationships(of: object.entity.name) where !relationship.isToMany {
            guard case .foreignKey(let column, _)? = layout.relationships[relationship.name] else { continue }
            toOneNames.append(relationship.name)
            columns.append(column)
            if let order = object.orderColumn(forToOne: relationship) { orderColumns.append(order) }
        }
        columns += orderColumns
        var values = columns.map { _ in "?" }
        // A layout serving an older model version: what that version does not know, as constants.
        for (column, literal) in layout.insertConstants.sorted(by: { $0.key < $1.key }) {
            columns.append(column)
            values.append(literal)
        }
        let sql = "INSERT INTO \(quoteIdentifier(layout.table)) (\(columns.map(quoteIdentifier).joined(separator: ", "))) VALUES (\(values.joined(separator: ", ")))"
        let plan = InsertPlan(sql: sql, attributeKeyPaths: keyPaths, toOneNames: toOneNames, orderColumns: orderColumns, columnCount: columns.count)
        object.info.insertPlan = plan
        return plan
    }
}

/// The statements of one save, prepared once per entity (and update shape) instead of being
/// looked up by their SQL text for every row.
struct SaveStatements {
    private struct UpdateKey: Hashable {
        var entity: ObjectIdentifier
        var shape: UpdateShape
    }
    private var inserts: [ObjectIdentifier: Statement] = [:]
    private var deletes: [ObjectIdentifier: Statement] = [:]
    private var updates: [UpdateKey: Statement] = [:]

    mutating func insert(for info: EntityInfo, sql: String, db: Database) throws -> Statement {
        if let cached = inserts[ObjectIdentifier(info)] { return cached }
        let statement = try db.cachedStatement(sql: sql)
        inserts[ObjectIdentifier(info)] = statement
        return statement
    }

    mutating func delete(for info: EntityInfo, db: Database) throws -> Statement {
        if let cached = deletes[ObjectIdentifier(info)] { return cached }
        let statement = try db.cachedStatement(sql: "DELETE FROM \(quoteIdentifier(info.layout.table)) WHERE \"_pk\" = ? AND \"_version\" = ?")
        deletes[ObjectIdentifier(info)] = statement
        return statement
    }

    /// The last update statement handed out: a batch of like updates compares shapes instead
    /// of hashing them per row.
    private var lastUpdate: (key: UpdateKey, statement: Statement)?

    mutating func update(for info: EntityInfo, shape: UpdateShape, db: Database, sql: () -> String) throws -> Statement {
        let key = UpdateKey(entity: ObjectIdentifier(info), shape: shape)
        if let lastUpdate, lastUpdate.key == key { return lastUpdate.statement }
        let statement: Statement
        if let cached = updates[key] {
            statement = cached
        } else {
            statement = try db.cachedStatement(sql: sql())
            updates[key] = statement
        }
        lastUpdate = (key, statement)
        return statement
    }
}
