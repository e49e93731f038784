import Foundation
import GRDB

/// A scratchpad of objects on one store: insert, fetch, change and delete objects, then
/// ``save()`` them in one transaction or ``rollback()`` (Core Data's `NSManagedObjectContext`).
///
/// A context and its objects belong to one thread or task at a time (they are not
/// `Sendable`); use one context per task. Each save is a single SQLite transaction: it
/// either writes every change or none.
///
/// ```swift
/// let context = ObjectContext(store: store)
/// let aircraft = try context.insert("Aircraft")
/// aircraft["tailNumber"] = "F-GSPT"
/// aircraft["colorScheme.primary"] = "red"
/// try context.save()
///
/// let red = try context.fetch("Aircraft", where: "colorScheme.primary == %@", "red")
/// ```
public final class ObjectContext {
    /// The store this context reads and writes.
    ///
    /// A context handed to a migration stage's handler works on the migration's own
    /// connection and has no `PersistentStore`: reading `store` there is a programming error
    /// (`precondition`).
    public var store: PersistentStore {
        guard let backingStore else { preconditionFailure("a migration stage's context has no PersistentStore; use the context's fetch/insert/delete/save") }
        return backingStore
    }
    let backingStore: PersistentStore?
    /// The model objects are read and written with.
    let model: ObjectModel
    /// How ``model`` maps to tables and columns.
    let storeLayout: StorageLayout
    let storePath: String
    /// Compiled fetches by shape: the store's, or this context's own when bound to a connection.
    let queryCache: FetchQueryCache
    /// When set, reads and writes run on this connection, inside its caller's transaction
    /// (a migration stage); ``detach()`` ends that.
    private var connection: Database?
    private let isConnectionBound: Bool

    /// Saved objects by identity (the identity map: one object per row per context).
    @exclusivity(unchecked) var registered = IdentityMap()
    /// Objects inserted since the last save, in insertion order.
    @exclusivity(unchecked) var inserted: [ManagedObject] = []
    /// Objects with unsaved changes (by identity).
    @exclusivity(unchecked) var updated: [ObjectIdentifier: ManagedObject] = [:]
    /// Objects deleted since the last save, in deletion order.
    @exclusivity(unchecked) var deleted: [ManagedObject] = []
    /// Entity descriptions and row plans (``ContextCaches``): the store's, lent to this
    /// context for its life, or this context's own when bound to a connection.
    let caches: ContextCaches
    /// Where ``caches`` go back when the context ends (nil: a connection-bound context's own).
    private let cachePool: ContextCachePool?
    /// The older model version this context serves (``init(store:serving:)``), nil for the
    /// store's own.
    let bridge: VersionBridge?
    /// The older model version this context serves (``init(store:serving:)``); nil for a
    /// context in the store's own version.
    public var servedBridge: VersionBridge? { bridge }
    private var nextTemporaryKey: Int64 = -1
    /// Objects of an older generation are detached (``reset()``).
    private(set) var generation = 1
    /// The name recorded as the author of this context's saves in the store's change history
    /// (Core Data's `transactionAuthor`): `"importer"`, `"sync"`. Nil records none.
    public var transactionAuthor: String?
    /// The user recorded with this context's saves in the change history: the process's user
    /// by default; the daemon sets its client's peer user.
    package var transactionUser: String? = ObjectContext.processUser
    /// When set, every fetch, count and save of this context stops once it passes, throwing
    /// ``StoreError`` with code ``StoreError/Code/callTimeout`` (see ``CallDeadline``).
    public var deadline: CallDeadline?
    /// The typed context (StrataData's `ModelContext`) built on this one, if any: how a typed
    /// model finds the typed objects of its relationships. Weak: the typed context owns this one.
    package weak var typedOwner: AnyObject?
    /// The model this context reads and writes with (the typed layer checks its classes against it).
    package var objectModel: ObjectModel { model }
    /// The storage layout of ``objectModel``.
    package var storageLayout: StorageLayout { storeLayout }

    /// The shared description of an entity (cached), or nil when the model has no such entity.
    func info(for entityName: String) -> EntityInfo? {
        if let cached = caches.entityInfos[entityName] { return cached }
        guard let entity = model.entity(named: entityName), let layout = storeLayout.entity(entityName) else { return nil }
        let info = EntityInfo(entity: entity, layout: layout, transientAttributes: model.allAttributes(of: entityName).filter(\.isTransient))
        caches.entityInfos[entityName] = info
        return info
    }

    /// Every relationship of an entity, inherited ones included (cached).
    func relationships(of entityName: String) -> [Relationship] {
        if let cached = caches.relationshipLists[entityName] { return cached }
        let list = model.allRelationships(of: entityName)
        caches.relationshipLists[entityName] = list
        return list
    }

    /// The relationships of `object`'s entity and its ancestors, kept in its entity's
    /// description after the first lookup (no string hashing per object).
    func relationships(of object: ManagedObject) -> [Relationship] {
        if let cached = object.info.allRelationships { return cached }
        let list = relationships(of: object.entity.name)
        object.info.allRelationships = list
        return list
    }

    /// An object's way back to its context. Objects hold the link, not the context: a weak
    /// reference to the context would move its reference count to a side table for good,
    /// and every retain and release of the context — several per fetched row — would take
    /// the slow path. The context clears the link when it goes away (``deinit``); like the
    /// context, its objects are used from one thread at a time.
    final class Link {
        unowned(unsafe) var context: ObjectContext?
        init() {}
    }

    /// This context's link (``Link``).
    let link = Link()

    deinit {
        link.context = nil
        cachePool?.giveBack(caches)
    }

    /// A context on `store`, with no pending changes.
    public init(store: PersistentStore) {
        self.backingStore = store
        self.model = store.model
        self.storeLayout = store.layout
        self.storePath = store.path
        self.queryCache = store.queryCache
        self.caches = store.contextCaches.take()
        self.cachePool = store.contextCaches
        self.bridge = nil
        self.isConnectionBound = false
        link.context = self
    }

    /// A context on `store` that reads and writes in the shape of an older model version —
    /// its entity and property names, its attributes — through `bridge` (``VersionBridge``):
    /// the store's tables under the names a client built against that version knows. Its
    /// saves record the change history under the store's current names. Each transaction
    /// checks that what the bridge uses is still in the store (the deferred cleanup may have
    /// dropped it), and throws ``VersionBridgeError`` when not.
    ///
    /// ```swift
    /// let bridge = try VersionBridge.resolve(store: store, directory: models, version: "Fleet 1")
    /// let context = ObjectContext(store: store, serving: bridge)
    /// let aircraft = try context.insert("Aircraft")
    /// aircraft["registration"] = "F-GSPT"      // Fleet 1's name; Fleet 2 calls it tailNumber
    /// try context.save()
    /// ```
    public init(store: PersistentStore, serving bridge: VersionBridge) {
        self.backingStore = store
        self.model = bridge.servedModel
        self.storeLayout = bridge.layout
        self.storePath = store.path
        self.queryCache = bridge.caches.queries
        self.caches = bridge.caches.contexts.take()
        self.cachePool = bridge.caches.contexts
        self.bridge = bridge
        self.isConnectionBound = false
        link.context = self
    }

    /// A context on an open connection, for `model` (used by migration stages: the handlers'
    /// objects live in the migration's transaction). Saves run in a savepoint of that
    /// transaction; they are committed or rolled back with it.
    init(connection: Database, model: ObjectModel, path: String) {
        self.backingStore = nil
        self.model = model
        self.storeLayout = StorageLayout(model: model)
        self.storePath = path
        self.queryCache = FetchQueryCache()
        self.caches = ContextCaches()
        self.cachePool = nil
        self.bridge = nil
        self.connection = connection
        self.isConnectionBound = true
        link.context = self
    }

    /// Ends a connection-bound context: any later fetch or save throws.
    func detach() { connection = nil }

    /// Runs `body` on a reader: the bound connection, or one of the store's readers.
    func readDatabase<T>(_ body: (Database) throws -> T) throws -> T {
        if isConnectionBound {
            guard let connection else { throw ObjectContextError(.store, "the migration stage this context belonged to is over; use the context passed to the current handler") }
            return try CallDeadline.enforce(deadline, path: storePath) { try body(connection) }
        }
        let gate = store.transactionGate
        let bridge = self.bridge
        return try store.readThroughLanes { db in
            try CallDeadline.enforce(deadline, path: storePath) {
                try gate.run(db)
                try bridge?.check(db)
                return try body(db)
            }
        }
    }

    /// Runs `body` in one transaction (or, when bound to a connection, in one savepoint).
    func writeDatabase(_ body: (Database) throws -> Void) throws {
        if isConnectionBound {
            guard let connection else { throw ObjectContextError(.store, "the migration stage this context belonged to is over; use the context passed to the current handler") }
            try CallDeadline.enforce(deadline, path: storePath) {
                try connection.inSavepoint {
                    try body(connection)
                    return .commit
                }
            }
            return
        }
        let gate = store.transactionGate
        let bridge = self.bridge
        try store.database.write { db in
            try CallDeadline.enforce(deadline, path: storePath) {
                try gate.run(db)
                try bridge?.check(db)
                try body(db)
            }
        }
    }

    /// Whether any object has unsaved changes.
    public var hasChanges: Bool { !inserted.isEmpty || !deleted.isEmpty || updated.values.contains { $0.hasChanges } }
    /// Objects inserted since the last save.
    public var insertedObjects: [ManagedObject] { inserted }
    /// Saved objects changed since the last save.
    public var updatedObjects: [ManagedObject] { updated.values.filter { !$0.isInserted && !$0.isDeleted && $0.hasChanges } }
    /// Objects deleted since the last save.
    public var deletedObjects: [ManagedObject] { deleted }

    // MARK: - Inserting

    /// Inserts a new object of `entityName`, with its attributes' default values.
    ///
    /// - Throws: ``ObjectContextError`` for an unknown or abstract entity.
    public func insert(_ entityName: String) throws(ObjectContextError) -> ManagedObject {
        guard let info = info(for: entityName) else {
            throw ObjectContextError(.unknownEntity, "no entity '\(entityName)' in model '\(model.version)'\(ManagedObject.suggestion(entityName, in: model.entities.map(\.name)))", entity: entityName)
        }
        if info.entity.isAbstract {
            throw ObjectContextError(.abstractEntity, "entity '\(entityName)' is abstract; insert one of its sub-entities (\(model.subentities(of: entityName).map(\.name).joined(separator: ", ")))", entity: entityName)
        }
        let object = ManagedObject(objectID: ObjectID(entityName: entityName, primaryKey: nextTemporaryKey), info: info,
                                   context: self, values: info.defaults, version: 0)
        nextTemporaryKey -= 1
        object.isInserted = true
        inserted.append(object)
        return object
    }

    /// Inserts an object and sets attributes and composite leaves from `values` (keypath → value).
    public func insert(_ entityName: String, values: [String: any ValueConvertible]) throws(ObjectContextError) -> ManagedObject {
        let object = try insert(entityName)
        for (keyPath, value) in values.sorted(by: { $0.key < $1.key }) { try object.setValue(value, forKeyPath: keyPath) }
        return object
    }

    func noteUpdated(_ object: ManagedObject) {
        guard !object.isInserted else { return }
        updated[ObjectIdentifier(object)] = object
    }

    // MARK: - Deleting

    /// Deletes an object, applying its relationships' delete rules (cascade, nullify, deny,
    /// no action) now; the rows go at the next save.
    ///
    /// - Throws: ``ObjectContextError/Code/deleteDenied`` when a `deny` relationship is not
    ///   empty; nothing is changed then.
    public func delete(_ object: ManagedObject) throws {
        guard object.context === self else {
            throw ObjectContextError(.wrongContext, "the object belongs to another context", entity: object.entity.name, objectID: object.objectID)
        }
        if object.isDeleted { return }
        // Without relationships there is nothing to cascade, deny or nullify.
        if relationships(of: object).isEmpty {
            markDeleted(object)
            return
        }
        // Collect the cascade closure and check deny rules before changing anything.
        var toDelete: [ManagedObject] = []
        var seen: Set<ObjectIdentifier> = []
        func collect(_ o: ManagedObject) throws {
            guard seen.insert(ObjectIdentifier(o)).inserted, !o.isDeleted else { return }
            toDelete.append(o)
            for relationship in relationships(of: o) where relationship.deleteRule == .cascade {
                for target in try o.relatedObjects(relationship) { try collect(target) }
            }
        }
        try collect(object)
        for o in toDelete {
            for relationship in relationships(of: o) where relationship.deleteRule == .deny {
                let blocking = try o.relatedObjects(relationship).filter { !seen.contains(ObjectIdentifier($0)) && !$0.isDeleted }
                if let first = blocking.first {
                    throw ObjectContextError(.deleteDenied, "cannot delete: relationship '\(relationship.name)' has delete rule deny and still holds \(blocking.count) object(s) (first \(first.objectID)); remove them first", entity: o.entity.name, property: relationship.name, objectID: o.objectID)
                }
            }
        }
        for o in toDelete {
            for relationship in relationships(of: o) where relationship.deleteRule == .nullify || relationship.deleteRule == .cascade {
                guard let inverse = model.inverse(of: relationship) else { continue }
                for target in try o.relatedObjects(relationship) where !seen.contains(ObjectIdentifier(target)) {
                    if inverse.isToMany {
                        target.primitiveRemove(o, from: inverse)
                    } else if target.currentToOneIdentity(inverse.name) == ObjectIdentifier(o) || target.storedToOneKey(inverse.name) == o.objectID.primaryKey {
                        target.primitiveSetToOne(nil, for: inverse)
                    }
                }
            }
            markDeleted(o)
        }
    }

    /// Marks `object` deleted: an inserted one is dropped, a saved one goes at the next save.
    private func markDeleted(_ object: ManagedObject) {
        object.isDeleted = true
        if object.isInserted {
            inserted.removeAll { $0 === object }
            object.context = nil
        } else {
            deleted.append(object)
        }
        if !updated.isEmpty { updated[ObjectIdentifier(object)] = nil }
    }

    // MARK: - Finding objects

    /// The object with `id`, from the context or the store.
    ///
    /// - Throws: ``ObjectContextError/Code/objectNotFound`` when no such row exists.
    public func object(with id: ObjectID) throws -> ManagedObject {
        if let object = registered[id] { return object }
        if let object = inserted.first(where: { $0.objectID == id }) { return object }
        if id.isTemporary {
            throw ObjectContextError(.objectNotFound, "no object \(id): a negative key (\(id.primaryKey)) is a temporary identifier, and no object inserted in this context has it; saved objects have positive keys", entity: id.entityName, objectID: id)
        }
        guard let layout = storeLayout.entity(id.entityName) else {
            throw ObjectContextError(.unknownEntity, "no entity '\(id.entityName)' in model '\(model.version)'", entity: id.entityName)
        }
        let objects = try fetchRows(SQLFragment("SELECT \(selectList(table: layout.table, alias: nil)) FROM \(quoteIdentifier(layout.table)) WHERE \"_pk\" = ?", [.int(id.primaryKey)]), table: layout.table)
        guard let object = objects.first, model.entity(object.entity.name, isKindOf: id.entityName) else {
            throw ObjectContextError(.objectNotFound, "no object \(id) in the store (deleted, or never saved)", entity: id.entityName, objectID: id)
        }
        return object
    }

    // MARK: - Discarding changes

    /// Discards every unsaved change: inserted objects are dropped, changed and deleted objects
    /// get back their last saved state.
    public func rollback() {
        for object in inserted { object.context = nil }
        inserted.removeAll()
        for object in Array(updated.values) + deleted {
            object.restoreSavedValues()
            object.changedSlots.removeAll()
            object.isDeleted = false
            guard let relations = object.relations else { continue }
            relations.changedKeys.removeAll()
            relations.changedJoinRelationships.removeAll()
            relations.toOne = relations.committedToOne.mapValues { ManagedObject.ToOneTarget.stored($0) }
            relations.toMany.removeAll()
            relations.orderValues.removeAll()
        }
        // Relationship caches of untouched objects may mention dropped objects: reload lazily.
        for object in registered.values {
            guard let relations = object.relations else { continue }
            relations.toMany.removeAll()
            relations.toOne = relations.toOne.compactMapValues { target in
                if case .object(let o?) = target, o.context == nil { return nil }
                return target
            }
        }
        updated.removeAll()
        deleted.removeAll()
    }

    /// Forgets every object (saved or not). Objects fetched before must not be used afterwards.
    public func reset() {
        // A new generation detaches every object of the old one (``ManagedObject/context``).
        generation += 1
        registered.removeAll()
        inserted.removeAll()
        updated.removeAll()
        deleted.removeAll()
    }
}
