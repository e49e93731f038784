import Foundation
import GRDB

extension ManagedObject {
    // MARK: - Public relationship access

    /// The target of a to-one relationship, loaded from the store when needed.
    public func object(forRelationship name: String) throws -> ManagedObject? {
        let relationship = try relationshipNamed(name, toMany: false)
        return try resolveToOne(relationship)
    }

    /// The targets of a to-many relationship, in order for ordered relationships.
    public func objects(forRelationship name: String) throws -> [ManagedObject] {
        let relationship = try relationshipNamed(name, toMany: true)
        return try loadToMany(relationship)
    }

    /// Sets a to-one relationship; the inverse is kept consistent on both sides.
    public func setObject(_ target: ManagedObject?, forRelationship name: String) throws {
        let relationship = try relationshipNamed(name, toMany: false)
        try checkMutable()
        if let target { try checkTarget(target, of: relationship) }
        let old = try resolveToOne(relationship)
        if old === target { return }
        primitiveSetToOne(target, for: relationship)
        guard let model = context?.model, let inverse = model.inverse(of: relationship) else { return }
        if inverse.isToMany {
            old?.primitiveRemove(self, from: inverse)
            if let target {
                if inverse.isOrdered { _ = try target.loadToMany(inverse) }
                target.primitiveAppend(self, to: inverse)
            }
        } else {
            if let old, old.currentToOneIdentity(inverse.name) == ObjectIdentifier(self) { old.primitiveSetToOne(nil, for: inverse) }
            if let target {
                if let partner = try target.resolveToOne(inverse), partner !== self { partner.primitiveSetToOne(nil, for: relationship) }
                target.primitiveSetToOne(self, for: inverse)
            }
        }
    }

    /// Replaces the targets of a to-many relationship (in order, for ordered relationships);
    /// inverses are kept consistent.
    public func setObjects(_ targets: [ManagedObject], forRelationship name: String) throws {
        let relationship = try relationshipNamed(name, toMany: true)
        try checkMutable()
        var unique: [ManagedObject] = []
        var seen: Set<ObjectIdentifier> = []
        for target in targets where seen.insert(ObjectIdentifier(target)).inserted {
            try checkTarget(target, of: relationship)
            unique.append(target)
        }
        let current = try loadToMany(relationship)
        let currentIDs = Set(current.map(ObjectIdentifier.init))
        let removed = current.filter { !seen.contains(ObjectIdentifier($0)) }
        let added = unique.filter { !currentIDs.contains(ObjectIdentifier($0)) }
        toMany[relationship.name] = unique
        markToManyChanged(relationship)
        guard let model = context?.model, let inverse = model.inverse(of: relationship) else { return }
        for x in removed {
            if inverse.isToMany { x.primitiveRemove(self, from: inverse) }
            else if x.currentToOneIdentity(inverse.name) == ObjectIdentifier(self) || x.storedToOneKey(inverse.name) == objectID.primaryKey {
                x.primitiveSetToOne(nil, for: inverse)
            }
        }
        for x in added {
            if inverse.isToMany {
                x.primitiveAppend(self, to: inverse)
            } else {
                if let previous = try x.resolveToOne(inverse), previous !== self { previous.primitiveRemove(x, from: relationship) }
                x.primitiveSetToOne(self, for: inverse)
            }
        }
    }

    /// Adds one object to a to-many relationship (at the end when ordered).
    public func addObject(_ target: ManagedObject, toRelationship name: String) throws {
        let current = try objects(forRelationship: name)
        if current.contains(where: { $0 === target }) { return }
        try setObjects(current + [target], forRelationship: name)
    }

    /// Inserts one object into an ordered to-many relationship at `index`.
    public func insertObject(_ target: ManagedObject, at index: Int, intoRelationship name: String) throws {
        var current = try objects(forRelationship: name).filter { $0 !== target }
        precondition(index >= 0 && index <= current.count, "index \(index) out of range 0...\(current.count)")
        current.insert(target, at: index)
        try setObjects(current, forRelationship: name)
    }

    /// Removes one object from a to-many relationship.
    public func removeObject(_ target: ManagedObject, fromRelationship name: String) throws {
        let current = try objects(forRelationship: name)
        try setObjects(current.filter { $0 !== target }, forRelationship: name)
    }

    // MARK: - Lookup helpers

    func relationshipNamed(_ name: String, toMany: Bool) throws(ObjectContextError) -> Relationship {
        guard let model = context?.model else {
            throw ObjectContextError(.wrongContext, "the object is not registered in a context", entity: entity.name, objectID: objectID)
        }
        guard let relationship = model.relationship(name, of: entity.name) else {
            throw ObjectContextError(.unknownProperty, "entity '\(entity.name)' has no relationship '\(name)'\(Self.suggestion(name, in: model.allRelationships(of: entity.name).map(\.name)))", entity: entity.name, property: name, objectID: objectID)
        }
        if relationship.isToMany != toMany {
            throw ObjectContextError(.invalidRelationship, "'\(name)' is a \(relationship.isToMany ? "to-many" : "to-one") relationship; use \(relationship.isToMany ? "objects(forRelationship:) / setObjects" : "object(forRelationship:) / setObject")", entity: entity.name, property: name, objectID: objectID)
        }
        return relationship
    }

    func checkTarget(_ target: ManagedObject, of relationship: Relationship) throws(ObjectContextError) {
        guard target.context === context else {
            throw ObjectContextError(.wrongContext, "\(target.objectID) belongs to another context", entity: entity.name, property: relationship.name, objectID: objectID)
        }
        guard let model = context?.model, model.entity(target.entity.name, isKindOf: relationship.destination) else {
            throw ObjectContextError(.invalidRelationship, "\(target.objectID) is not a '\(relationship.destination)'", entity: entity.name, property: relationship.name, objectID: objectID)
        }
        if target.isDeleted {
            throw ObjectContextError(.objectNotFound, "\(target.objectID) was deleted", entity: entity.name, property: relationship.name, objectID: objectID)
        }
    }

    /// All objects a relationship currently holds (to-one or to-many).
    func relatedObjects(_ relationship: Relationship) throws -> [ManagedObject] {
        if relationship.isToMany { return try loadToMany(relationship) }
        return try resolveToOne(relationship).map { [$0] } ?? []
    }

    func currentToOneIdentity(_ name: String) -> ObjectIdentifier? {
        if case .object(let o?)? = toOne[name] { return ObjectIdentifier(o) }
        return nil
    }

    func storedToOneKey(_ name: String) -> Int64? {
        if case .stored(let pk)? = toOne[name] { return pk }
        return nil
    }

    // MARK: - Loading

    func resolveToOne(_ relationship: Relationship) throws -> ManagedObject? {
        switch toOne[relationship.name] {
        case .object(let o)?: return o
        case .stored(nil)?, nil: return nil
        case .stored(let pk?)?:
            guard let context else { return nil }
            let target: ManagedObject?
            do {
                target = try context.object(with: ObjectID(entityName: context.model.rootEntity(of: relationship.destination)!.name, primaryKey: pk))
            } catch let error as ObjectContextError where error.code == .objectNotFound {
                target = nil   // a dangling key (delete rule noAction)
            }
            toOne[relationship.name] = .object(target)
            return target
        }
    }

    func loadToMany(_ relationship: Relationship) throws -> [ManagedObject] {
        if let loaded = toMany[relationship.name] { return loaded }
        guard let context else { return [] }
        var result: [ManagedObject] = []
        if !isInserted {
            result = try context.loadRelated(self, relationship)
        }
        // Apply unsaved changes of one-to-many links held by other objects' to-one side.
        if let inverse = context.model.inverse(of: relationship), !inverse.isToMany {
            result = result.filter { member in
                if case .object(let o)? = member.toOne[inverse.name] { return o === self }
                return true
            }
            let present = Set(result.map(ObjectIdentifier.init))
            let pending = (context.inserted + Array(context.updated.values)).filter { candidate in
                if case .object(let o)? = candidate.toOne[inverse.name], o === self, !present.contains(ObjectIdentifier(candidate)) { return true }
                return false
            }
            result += pending
        }
        result = result.filter { !$0.isDeleted }
        toMany[relationship.name] = result
        return result
    }

    // MARK: - Primitive changes (no inverse maintenance)

    func primitiveSetToOne(_ target: ManagedObject?, for relationship: Relationship) {
        toOne[relationship.name] = .object(target)
        changedKeys.insert(relationship.name)
        if target == nil, let orderColumn = orderColumn(forToOne: relationship) {
            orderValues[orderColumn] = nil
            changedKeys.insert(orderColumn)
        }
        context?.noteUpdated(self)
    }

    func primitiveAppend(_ member: ManagedObject, to relationship: Relationship) {
        guard var list = toMany[relationship.name] else {
            // Not loaded: the storage change is written from the other side; a join table pair
            // is written by the side that changed.
            return
        }
        guard !list.contains(where: { $0 === member }) else { return }
        list.append(member)
        toMany[relationship.name] = list
        markToManyChanged(relationship)
    }

    func primitiveRemove(_ member: ManagedObject, from relationship: Relationship) {
        guard var list = toMany[relationship.name] else { return }
        list.removeAll { $0 === member }
        toMany[relationship.name] = list
        markToManyChanged(relationship)
    }

    /// Records that a to-many list changed: join-table lists are rewritten at save; ordered
    /// one-to-many lists renumber their members' order column.
    func markToManyChanged(_ relationship: Relationship) {
        guard let storage = layout.relationships[relationship.name] else { return }
        switch storage {
        case .joinTable:
            changedJoinRelationships.insert(relationship.name)
            context?.noteUpdated(self)
        case .inverseForeignKey(_, _, let orderColumn?):
            for (i, member) in (toMany[relationship.name] ?? []).enumerated() where member.orderValues[orderColumn] != Int64(i) {
                member.orderValues[orderColumn] = Int64(i)
                member.changedKeys.insert(orderColumn)
                context?.noteUpdated(member)
            }
        case .inverseForeignKey, .foreignKey:
            break
        }
    }

    /// The order column on this object's row for a to-one relationship whose inverse is an
    /// ordered to-many.
    func orderColumn(forToOne relationship: Relationship) -> String? {
        guard let model = context?.model, let inverse = model.inverse(of: relationship), inverse.isToMany, inverse.isOrdered else { return nil }
        return "\(relationship.name)_order"
    }
}

extension ObjectContext {
    /// Loads the targets of a to-many relationship from the store.
    func loadRelated(_ object: ManagedObject, _ relationship: Relationship) throws -> [ManagedObject] {
        guard let storage = object.layout.relationships[relationship.name],
              let destination = storeLayout.entity(relationship.destination) else { return [] }
        let pk = Value.int(object.objectID.primaryKey)
        var filter = ""
        var arguments: [Value] = [pk]
        if destination.hasEntityColumn {
            filter = " AND d.\"_entity\" IN (\(destination.entityNames.map { _ in "?" }.joined(separator: ", ")))"
            arguments += destination.entityNames.map(Value.string)
        }
        let table = quoteIdentifier(destination.table)
        switch storage {
        case .foreignKey:
            return []
        case .inverseForeignKey(_, let column, let orderColumn):
            let order = orderColumn.map { "d.\(quoteIdentifier($0)) IS NULL, d.\(quoteIdentifier($0)), " } ?? ""
            return try fetchRows(SQLFragment("SELECT \(selectList(table: destination.table, alias: "d")) FROM \(table) d WHERE d.\(quoteIdentifier(column)) = ?\(filter) ORDER BY \(order)d.\"_pk\"", arguments), table: destination.table)
        case .joinTable(let name, let own, let other, let orderColumn):
            let order = orderColumn.map { "j.\(quoteIdentifier($0)) IS NULL, j.\(quoteIdentifier($0)), " } ?? ""
            return try fetchRows(SQLFragment("SELECT \(selectList(table: destination.table, alias: "d")) FROM \(table) d JOIN \(quoteIdentifier(name)) j ON d.\"_pk\" = j.\(quoteIdentifier(other)) WHERE j.\(quoteIdentifier(own)) = ?\(filter) ORDER BY \(order)d.\"_pk\"", arguments), table: destination.table)
        }
    }
}
