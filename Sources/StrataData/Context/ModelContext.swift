import Foundation
import Logging

/// A typed scratchpad of models on one store (SwiftData's `ModelContext`): insert, fetch,
/// change and delete `@Model` objects, then ``save()`` or ``rollback()``.
///
/// It is built on the string-keyed ``ObjectContext`` (``objectContext``): one persistence
/// path, the same row storage, validation, identity map, change tracking, history and
/// predicates. A typed model's properties read and write that storage by slot.
///
/// ```swift
/// let context = ModelContext(store: store)
/// let aircraft = Aircraft(tailNumber: "F-GSPT")
/// aircraft.colorScheme = ColorScheme(primary: "red")
/// context.insert(aircraft)
/// try context.save()
///
/// let red = try context.fetch(FetchDescriptor<Aircraft>(predicate: #Predicate { $0.colorScheme?.primary == "red" }))
/// ```
///
/// Like ``ObjectContext``, a context and its models belong to one task at a time.
public final class ModelContext {
    /// The string-keyed context underneath (same objects, same storage).
    public let objectContext: ObjectContext
    /// Typed models by the identity of their row storage: one model per row per context.
    private var registry: [ObjectIdentifier: AnyObject] = [:]
    /// Property plans by model class.
    private var plans: [ObjectIdentifier: ModelPlan] = [:]
    /// Classes checked against the store's model (``checkClass(_:)``).
    private var checkedClasses: Set<ObjectIdentifier> = []
    /// Inserts refused because the store's model has no such entity: reported by ``save()``.
    private var refusedInserts: [(entity: String, error: any Error)] = []
    /// Where relationship faults that fail are logged (a property getter cannot throw).
    let logger = Logger(label: "io.strata.typed")

    /// A context on `store`.
    public convenience init(store: PersistentStore) {
        self.init(objectContext: ObjectContext(store: store))
    }

    /// A typed context over an existing string-keyed one (a migration stage's, for instance).
    public init(objectContext: ObjectContext) {
        self.objectContext = objectContext
        objectContext.typedOwner = self
    }

    /// Whether any model has unsaved changes.
    public var hasChanges: Bool { objectContext.hasChanges || !refusedInserts.isEmpty }

    /// The name recorded as the author of this context's saves in the change history.
    public var author: String? {
        get { objectContext.transactionAuthor }
        set { objectContext.transactionAuthor = newValue }
    }

    // MARK: - Inserting and deleting

    /// Inserts a model (and, through its relationships, related models not yet inserted).
    ///
    /// When the store's model has no entity for the class, nothing is inserted and the next
    /// ``save()`` throws naming the entity and the store's model version.
    public func insert<T: PersistentModel>(_ model: T) {
        _ = bind(model)
    }

    /// Binds `model` to new row storage in this context; nil when refused.
    @discardableResult
    func bind(_ model: any PersistentModel) -> ManagedObject? {
        if let object = model.persistentBackingData.object {
            precondition(object.context == nil || object.context === objectContext,
                         "the model (\(type(of: model))) belongs to another context; insert it in one context only")
            return object
        }
        let type = Swift.type(of: model)
        let object: ManagedObject
        do {
            try checkClass(type)
            object = try objectContext.insert(type.schemaMetadata.entityName)
        } catch {
            refusedInserts.append((type.schemaMetadata.entityName, error))
            return nil
        }
        let plan = self.plan(for: type, object: object)
        let pending = model.persistentBackingData.pending
        model.persistentBackingData = ModelBacking(object: object, plan: plan)
        registry[ObjectIdentifier(object)] = model
        guard let pending else { return object }
        // Attributes and composites first (into the new row's slots), then relationships,
        // whose targets are inserted on the way.
        var hasRelationships = false
        for (ordinal, entry) in pending.values.enumerated() {
            switch entry {
            case nil:
                break
            case .attribute(let value)?:
                try? object.setStoredValue(value, atSlot: plan.slots[ordinal])
            case .composite(let leaves)?:
                for (slot, leaf) in zip(plan.compositeSlots[ordinal], leaves) { try? object.setStoredValue(leaf, atSlot: slot) }
            case .toOne?, .toMany?:
                hasRelationships = true
            }
        }
        guard hasRelationships else { return object }
        for (ordinal, entry) in pending.values.enumerated() {
            switch entry {
            case .toOne(let target)?:
                setRelated(target as? any PersistentModel, of: object, plan.relationshipNames[ordinal])
            case .toMany(let targets)?:
                setRelated(targets.compactMap { $0 as? any PersistentModel }, of: object, plan.relationshipNames[ordinal])
            case .attribute?, .composite?, nil:
                break
            }
        }
        return object
    }

    /// Deletes a model, applying its relationships' delete rules now; the row goes at the
    /// next save. A model never inserted is ignored.
    ///
    /// - Throws: ``ObjectContextError`` (`deleteDenied` for a non-empty `deny` relationship).
    public func delete<T: PersistentModel>(_ model: T) throws {
        guard let object = model.persistentBackingData.object else { return }
        try objectContext.delete(object)
    }

    // MARK: - Saving and discarding

    /// Validates and writes every change in one transaction (see ``ObjectContext/save()``).
    ///
    /// - Throws: ``ObjectContextError``; on error nothing is written and the changes stay.
    public func save() throws {
        if let refused = refusedInserts.first {
            refusedInserts.removeAll()
            throw ObjectContextError(.unknownEntity, "a \(refused.entity) model was inserted but refused: \(refused.error). Nothing was saved.",
                                     entity: refused.entity)
        }
        try objectContext.save()
    }

    /// Discards every unsaved change: inserted models are dropped, changed and deleted ones
    /// get back their saved values.
    public func rollback() {
        refusedInserts.removeAll()
        objectContext.rollback()
    }

    /// Forgets every model (saved or not), like ``ObjectContext/reset()``: models fetched
    /// before must not be used afterwards.
    public func reset() {
        refusedInserts.removeAll()
        registry.removeAll(keepingCapacity: true)
        objectContext.reset()
    }

    // MARK: - Models and rows

    /// Checks once per class that the store's model stores every persisted property of
    /// `type` (a store opened with another model than the class's schema).
    ///
    /// - Throws: ``ModelSchemaError`` naming the entity, the property and the store's version.
    func checkClass(_ type: any PersistentModel.Type) throws(ModelSchemaError) {
        let key = ObjectIdentifier(type)
        if checkedClasses.contains(key) { return }
        let metadata = type.schemaMetadata
        let version = objectContext.objectModel.version
        guard let layout = objectContext.storageLayout.entity(metadata.entityName) else {
            throw ModelSchemaError("the store's model ('\(version)') has no entity '\(metadata.entityName)'; open the store with a schema that lists \(metadata.entityName)",
                                   entity: metadata.entityName)
        }
        for property in metadata.properties {
            switch property.kind {
            case .attribute(let type, _, _):
                guard let column = layout.attributeColumns[property.name], column.attribute.type == type else {
                    throw ModelSchemaError("the store's model ('\(version)') has no \(type.rawValue) attribute '\(property.name)' on '\(metadata.entityName)'; open the store with the schema that declares this class, or migrate it",
                                           entity: metadata.entityName, property: property.name)
                }
            case .composite(let composite, let optional, _):
                for leaf in composite.compositeAttribute(named: property.name, optional: optional).leaves {
                    let path = ([property.name] + leaf.path).joined(separator: ".")
                    guard layout.attributeColumns[path] != nil else {
                        throw ModelSchemaError("the store's model ('\(version)') has no composite leaf '\(path)' on '\(metadata.entityName)'; open the store with the schema that declares this class, or migrate it",
                                               entity: metadata.entityName, property: path)
                    }
                }
            case .relationship:
                guard layout.relationships[property.name] != nil else {
                    throw ModelSchemaError("the store's model ('\(version)') has no relationship '\(property.name)' on '\(metadata.entityName)'; open the store with the schema that declares this class, or migrate it",
                                           entity: metadata.entityName, property: property.name)
                }
            }
        }
        checkedClasses.insert(key)
    }

    /// The plan of `type` for `object`'s entity (built once per class).
    func plan(for type: any PersistentModel.Type, object: ManagedObject) -> ModelPlan {
        if let plan = plans[ObjectIdentifier(type)] { return plan }
        let properties = type.schemaMetadata.properties
        var slots = Array(repeating: -1, count: properties.count)
        var compositeSlots = Array(repeating: [Int](), count: properties.count)
        var names = Array(repeating: "", count: properties.count)
        for (ordinal, property) in properties.enumerated() {
            names[ordinal] = property.name
            switch property.kind {
            case .attribute:
                slots[ordinal] = object.storageSlot(forKeyPath: property.name) ?? -1
            case .composite(let metadata, let optional, _):
                let composite = metadata.compositeAttribute(named: property.name, optional: optional)
                compositeSlots[ordinal] = composite.leaves.map {
                    object.storageSlot(forKeyPath: ([property.name] + $0.path).joined(separator: ".")) ?? -1
                }
            case .relationship:
                break
            }
        }
        // A property the store's entity lacks (a store opened with another model) would
        // have no slot: the context refuses the class instead of guessing.
        if let missing = properties.indices.first(where: { i in
            if case .attribute = properties[i].kind { return slots[i] < 0 }
            if case .composite = properties[i].kind { return compositeSlots[i].contains(-1) }
            return false
        }) {
            preconditionFailure("the store's entity '\(object.entity.name)' has no attribute '\(properties[missing].name)' of model class \(type); open the store with the schema that declares this class")
        }
        let plan = ModelPlan(slots: slots, compositeSlots: compositeSlots, relationshipNames: names)
        plans[ObjectIdentifier(type)] = plan
        return plan
    }

    /// The typed model of a row storage object: the registered one, or a new one.
    @inline(__always)
    func model<M: PersistentModel>(for object: ManagedObject, as type: M.Type) -> M {
        if let existing = registry[ObjectIdentifier(object)] as? M { return existing }
        let model = M(backingData: ModelBacking(object: object, plan: plan(for: M.self, object: object)))
        registry[ObjectIdentifier(object)] = model
        return model
    }

    /// A to-one target, faulted; nil (and logged) when the store cannot be read.
    func relatedObject(of object: ManagedObject, _ name: String) -> ManagedObject? {
        do { return try object.object(forRelationship: name) } catch {
            logger.error("reading relationship '\(object.entity.name).\(name)' failed: \(error)")
            return nil
        }
    }

    /// To-many targets, faulted; empty (and logged) when the store cannot be read.
    func relatedObjects(of object: ManagedObject, _ name: String) -> [ManagedObject] {
        do { return try object.objects(forRelationship: name) } catch {
            logger.error("reading relationship '\(object.entity.name).\(name)' failed: \(error)")
            return []
        }
    }

    /// Sets a to-one relationship, inserting a target that was never inserted.
    func setRelated(_ target: (any PersistentModel)?, of object: ManagedObject, _ name: String) {
        let targetObject = target.flatMap { bind($0) }
        do { try object.setObject(targetObject, forRelationship: name) } catch { preconditionFailure("\(error)") }
    }

    /// Sets a to-many relationship's members, inserting targets that were never inserted.
    func setRelated(_ targets: [any PersistentModel], of object: ManagedObject, _ name: String) {
        let objects = targets.compactMap { bind($0) }
        do { try object.setObjects(objects, forRelationship: name) } catch { preconditionFailure("\(error)") }
    }
}
