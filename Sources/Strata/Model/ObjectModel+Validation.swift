import Foundation

extension ObjectModel {
    /// Checks the model and returns it unchanged, or throws the first ``ModelError`` found.
    ///
    /// Checks: valid and unique names, known parents and no inheritance cycles, known
    /// relationship destinations, inverses that point back, defaults of the attribute's type,
    /// index and constraint keypaths that exist, no two properties stored in one column.
    @discardableResult
    public func validated() throws(ModelError) -> ObjectModel {
        if let error = validationErrors().first { throw error }
        return self
    }

    /// Every problem with the model, in a stable order (empty when the model is valid).
    public func validationErrors() -> [ModelError] {
        var errors: [ModelError] = []
        func fail(_ code: ModelError.Code, _ reason: String, entity: String? = nil, property: String? = nil) {
            errors.append(ModelError(code, reason, version: version, entity: entity, property: property))
        }
        if entities.isEmpty { fail(.emptyModel, "the model has no entities; declare at least one entity") }

        var entityNames: Set<String> = []
        for entity in entities {
            if !Self.isValidIdentifier(entity.name) {
                fail(.invalidIdentifier, "'\(entity.name)' is not a valid entity name: use letters, digits and '_', starting with a letter", entity: entity.name)
            }
            if !entityNames.insert(entity.name).inserted {
                fail(.duplicateName, "the entity is declared twice; rename or remove one of them", entity: entity.name)
            }
        }

        // Inheritance.
        for entity in entities {
            guard let parent = entity.parent else { continue }
            if self.entity(named: parent) == nil {
                fail(.unknownParent, "parent entity '\(parent)' does not exist; declare it or remove 'parent'", entity: entity.name)
                continue
            }
            var seen: Set<String> = [entity.name]
            var current = self.entity(named: parent)
            while let c = current {
                if !seen.insert(c.name).inserted {
                    fail(.inheritanceCycle, "inheritance cycle \(seen.sorted().joined(separator: " -> ")); an entity cannot inherit from itself", entity: entity.name)
                    break
                }
                current = c.parent.flatMap(self.entity(named:))
            }
        }
        guard errors.isEmpty else { return errors }

        // One layout for every check below (computing it per entity made validation cubic in
        // the number of entities).
        let layout = StorageLayout(model: self)
        for entity in entities { validateProperties(of: entity, layout: layout, into: &errors) }
        guard errors.isEmpty else { return errors }

        // Columns: two properties of one hierarchy must not land in the same column.
        for table in layout.tables.values.sorted(by: { $0.name < $1.name }) {
            var seen: [String: ColumnLayout] = [:]
            for column in table.columns {
                if let first = seen[column.name], first.role != column.role {
                    fail(.columnCollision, "column '\(column.name)' of table '\(table.name)' would store both \(Self.describe(first.role)) and \(Self.describe(column.role)); rename one of them", entity: table.rootEntity, property: column.name)
                }
                seen[column.name] = seen[column.name] ?? column
            }
        }
        // Relationship columns are added once per name (inherited relationships resolve to the
        // same column), so a relationship column whose name is already taken by something else
        // does not appear twice in the layout: look for it explicitly.
        for entity in entities {
            for relationship in entity.relationships {
                if !relationship.isToMany, let table = layout.table(forEntity: entity.name) {
                    let name = "\(relationship.name)_id"
                    if let existing = table.column(named: name) {
                        guard case .foreignKey(entity.name, relationship.name, _) = existing.role else {
                            fail(.columnCollision, "column '\(name)' of table '\(table.name)' would store both \(Self.describe(existing.role)) and relationship '\(entity.name).\(relationship.name)'; rename one of them", entity: table.rootEntity, property: name)
                            continue
                        }
                    }
                } else if relationship.isOrdered, let inverse = inverse(of: relationship), !inverse.isToMany,
                          let table = layout.table(forEntity: relationship.destination) {
                    let name = "\(inverse.name)_order"
                    if let existing = table.column(named: name) {
                        guard case .order(entity.name, relationship.name) = existing.role else {
                            fail(.columnCollision, "column '\(name)' of table '\(table.name)' would store both \(Self.describe(existing.role)) and the order of '\(entity.name).\(relationship.name)'; rename one of them", entity: table.rootEntity, property: name)
                            continue
                        }
                    }
                }
            }
        }
        let tableNames = Set(layout.tables.keys)
        for join in layout.joinTables.keys.sorted() where tableNames.contains(join) {
            fail(.columnCollision, "the join table '\(join)' would have the same name as an entity table; rename the entity or the relationship", entity: join)
        }
        return errors
    }

    private func validateProperties(of entity: Entity, layout: StorageLayout, into errors: inout [ModelError]) {
        func fail(_ code: ModelError.Code, _ reason: String, property: String? = nil) {
            errors.append(ModelError(code, reason, version: version, entity: entity.name, property: property))
        }
        var names: Set<String> = Set(ancestry(of: entity.name).dropFirst().flatMap(\.propertyNames))
        for name in entity.propertyNames {
            if !Self.isValidIdentifier(name) {
                fail(.invalidIdentifier, "'\(name)' is not a valid property name: use letters, digits and '_', starting with a letter (names starting with '_' are reserved)", property: name)
            }
            if !names.insert(name).inserted {
                fail(.duplicateName, "the property is declared twice in this entity or its parents; rename one of them", property: name)
            }
        }
        for attribute in entity.attributes { validateDefault(attribute, entity: entity.name, property: attribute.name, into: &errors) }
        for composite in entity.composites { validateComposite(composite, path: composite.name, entity: entity.name, into: &errors) }

        for relationship in entity.relationships {
            guard let destination = self.entity(named: relationship.destination) else {
                fail(.unknownDestination, "destination entity '\(relationship.destination)' does not exist; declare it or fix the name", property: relationship.name)
                continue
            }
            if relationship.minCount < 0 || relationship.maxCount < 0 || (relationship.maxCount > 0 && relationship.minCount > relationship.maxCount) {
                fail(.invalidCount, "minCount \(relationship.minCount) and maxCount \(relationship.maxCount) are inconsistent; use 0 <= minCount <= maxCount (maxCount 0 = unbounded)", property: relationship.name)
            }
            if !relationship.isToMany && relationship.isOrdered {
                fail(.inverseMismatch, "a to-one relationship cannot be ordered; remove 'ordered' or make it to-many", property: relationship.name)
            }
            guard let inverseName = relationship.inverse else { continue }
            guard let inverse = self.relationship(inverseName, of: destination.name) else {
                fail(.inverseMismatch, "inverse '\(inverseName)' does not exist on '\(destination.name)'; declare it there or remove 'inverse'", property: relationship.name)
                continue
            }
            if !self.entity(entity.name, isKindOf: inverse.destination) {
                fail(.inverseMismatch, "inverse '\(destination.name).\(inverseName)' points to '\(inverse.destination)', not back to '\(entity.name)'", property: relationship.name)
            } else if let back = inverse.inverse, back != relationship.name {
                fail(.inverseMismatch, "inverse '\(destination.name).\(inverseName)' names '\(back)' as its inverse, not '\(relationship.name)'; make the two relationships name each other", property: relationship.name)
            }
            if relationship.isOrdered && inverse.isOrdered && !inverse.isToMany {
                fail(.inverseMismatch, "inverse '\(inverseName)' is to-one and cannot be ordered", property: relationship.name)
            }
        }

        guard let entityLayout = layout.entity(entity.name) else { return }
        let transient = Set(allAttributes(of: entity.name).filter(\.isTransient).map(\.name))
        for index in entity.indexes {
            for element in index.elements where transient.contains(element.keyPath) {
                fail(.unknownKeyPath, "index '\(index.name)' names transient attribute '\(element.keyPath)', which is not stored; index a stored attribute or make it non-transient", property: element.keyPath)
            }
            if index.elements.isEmpty { fail(.unknownKeyPath, "index '\(index.name)' has no keypaths", property: index.name) }
            if !Self.isValidIdentifier(index.name) { fail(.invalidIdentifier, "'\(index.name)' is not a valid index name", property: index.name) }
            for element in index.elements where entityLayout.column(forKeyPath: element.keyPath) == nil && !transient.contains(element.keyPath) {
                fail(.unknownKeyPath, "index '\(index.name)' names '\(element.keyPath)', which is not an attribute, composite leaf or to-one relationship of '\(entity.name)'", property: element.keyPath)
            }
        }
        var indexNames: Set<String> = []
        for index in entity.indexes where !indexNames.insert(index.name).inserted {
            fail(.duplicateName, "index '\(index.name)' is declared twice", property: index.name)
        }
        for constraint in entity.uniquenessConstraints {
            if constraint.keyPaths.isEmpty { fail(.unknownKeyPath, "a uniqueness constraint has no keypaths") }
            for keyPath in constraint.keyPaths where transient.contains(keyPath) {
                fail(.unknownKeyPath, "uniqueness constraint names transient attribute '\(keyPath)', which is not stored; constrain stored attributes only", property: keyPath)
            }
            for keyPath in constraint.keyPaths where entityLayout.column(forKeyPath: keyPath) == nil && !transient.contains(keyPath) {
                fail(.unknownKeyPath, "uniqueness constraint names '\(keyPath)', which is not an attribute, composite leaf or to-one relationship of '\(entity.name)'", property: keyPath)
            }
        }
    }

    private func validateComposite(_ composite: CompositeAttribute, path: String, entity: String, into errors: inout [ModelError]) {
        var names: Set<String> = []
        if composite.elements.isEmpty {
            errors.append(ModelError(.invalidFile, "composite '\(path)' has no elements; add at least one attribute", version: version, entity: entity, property: path))
        }
        for element in composite.elements {
            let elementPath = "\(path).\(element.name)"
            if !Self.isValidIdentifier(element.name) {
                errors.append(ModelError(.invalidIdentifier, "'\(element.name)' is not a valid element name", version: version, entity: entity, property: elementPath))
            }
            if !names.insert(element.name).inserted {
                errors.append(ModelError(.duplicateName, "element '\(element.name)' appears twice in composite '\(path)'", version: version, entity: entity, property: elementPath))
            }
            switch element {
            case .attribute(let a):
                validateDefault(a, entity: entity, property: elementPath, into: &errors)
                if a.isTransient {
                    errors.append(ModelError(.unsupportedFeature, "a composite element cannot be transient; make it a transient attribute of the entity, or store it", version: version, entity: entity, property: elementPath))
                }
            case .composite(let c): validateComposite(c, path: elementPath, entity: entity, into: &errors)
            }
        }
    }

    private func validateDefault(_ attribute: Attribute, entity: String, property: String, into errors: inout [ModelError]) {
        guard let value = attribute.defaultValue, !value.isNull else { return }
        if value.coerced(to: attribute.type) == nil {
            errors.append(ModelError(.invalidDefault, "default value \(value) (\(value.kindName)) is not a valid \(attribute.type.rawValue); give a \(attribute.type.rawValue) default or none", version: version, entity: entity, property: property))
        }
    }

    /// Letters, digits and `_`, starting with a letter.
    public static func isValidIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCIILetter else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCIILetter || ("0"..."9").contains($0) || $0 == "_" }
    }

    private static func describe(_ role: ColumnLayout.Role) -> String {
        switch role {
        case .primaryKey: return "the primary key"
        case .version: return "the version column"
        case .entityName: return "the entity column"
        case .attribute(let entity, let keyPath, _): return "'\(entity).\(keyPath)'"
        case .foreignKey(let entity, let relationship, _): return "relationship '\(entity).\(relationship)'"
        case .order(let entity, let relationship): return "the order of '\(entity).\(relationship)'"
        }
    }
}

extension Unicode.Scalar {
    var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}
