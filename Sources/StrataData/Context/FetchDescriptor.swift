import Foundation

/// What to fetch: a model class, a `#Predicate`, an order and a window (SwiftData's
/// `FetchDescriptor`).
///
/// ```swift
/// var descriptor = FetchDescriptor<Aircraft>(
///     predicate: #Predicate { $0.colorScheme?.primary == "red" && $0.seats > 100 },
///     sortBy: [SortDescriptor(\.tailNumber)])
/// descriptor.fetchLimit = 20
/// let aircraft = try context.fetch(descriptor)
/// ```
///
/// The predicate and the sort are translated to the same parameterized SQL as the
/// string-keyed API's format predicates (see docs/Predicates.md, "#Predicate"); an operator
/// the translator cannot express is a ``PredicateTranslationError`` thrown before any SQL runs.
public struct FetchDescriptor<T: PersistentModel> {
    /// The filter; nil matches every object.
    public var predicate: Predicate<T>?
    /// The order, most significant first; the primary key breaks ties.
    public var sortBy: [SortDescriptor<T>]
    /// At most this many objects; nil for no limit.
    public var fetchLimit: Int?
    /// Skip this many objects first.
    public var fetchOffset: Int?

    /// A descriptor of `T` objects matching `predicate`, in `sortBy` order.
    public init(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
    }

    /// The string-keyed request this descriptor translates to.
    ///
    /// - Throws: ``PredicateTranslationError`` for a predicate or sort the translator cannot express.
    public func fetchRequest() throws(PredicateTranslationError) -> FetchRequest {
        FetchRequest(entityName: T.schemaMetadata.entityName,
                     predicate: try predicate.map { predicate throws(PredicateTranslationError) in try PredicateTranslator.translate(predicate) },
                     sortDescriptors: try sortBy.map { sort throws(PredicateTranslationError) in try PredicateTranslator.translate(sort) },
                     fetchLimit: fetchLimit, fetchOffset: fetchOffset ?? 0)
    }
}

extension ModelContext {
    // MARK: - Fetching

    /// The saved models matching `descriptor`, one model per row (models already registered
    /// are returned as they are, with their unsaved changes).
    ///
    /// - Throws: ``PredicateTranslationError`` (before any SQL runs), ``ModelSchemaError``
    ///   when the store's model does not store the class, ``FetchPredicateError`` and
    ///   ``ObjectContextError`` from the store.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        try checkClass(T.self)
        let objects = try objectContext.fetch(descriptor.fetchRequest())
        var models: [T] = []
        models.reserveCapacity(objects.count)
        for object in objects { models.append(model(for: object, as: T.self)) }
        return models
    }

    /// How many saved models match `descriptor` (its limit and offset apply), without loading them.
    public func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        try checkClass(T.self)
        return try objectContext.count(descriptor.fetchRequest())
    }

    /// The identities of the saved models matching `descriptor`, without loading them.
    public func fetchIdentifiers<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [ObjectID] {
        try checkClass(T.self)
        let request = try descriptor.fetchRequest()
        return try objectContext.primaryKeys(request).map { ObjectID(entityName: T.schemaMetadata.entityName, primaryKey: $0) }
    }

    /// The model with `id`, from this context or the store.
    ///
    /// - Throws: ``ObjectContextError/Code/objectNotFound`` when no such row exists.
    public func model<T: PersistentModel>(for id: ObjectID, as type: T.Type = T.self) throws -> T {
        try checkClass(T.self)
        return model(for: try objectContext.object(with: id), as: T.self)
    }

    // MARK: - Batch changes

    /// Deletes every saved `T` matching `predicate` (all of them when nil) in one SQL
    /// statement, without loading them (Core Data's `NSBatchDeleteRequest`); returns how many
    /// rows were deleted. Models already in the context are not updated: reset or fetch again.
    ///
    /// - Throws: ``PredicateTranslationError`` before any SQL runs; ``ObjectContextError``
    ///   (`deleteDenied`) when the entity takes part in relationships whose delete rules a
    ///   batch cannot apply — delete those models with ``delete(_:)``.
    @discardableResult
    public func delete<T: PersistentModel>(model: T.Type, where predicate: Predicate<T>? = nil) throws -> Int {
        try checkClass(T.self)
        return try objectContext.batchDelete(FetchDescriptor<T>(predicate: predicate).fetchRequest())
    }

    /// Sets attributes of every saved `T` matching `predicate` in one SQL statement
    /// (Core Data's `NSBatchUpdateRequest`); returns how many rows changed.
    ///
    /// ```swift
    /// try context.update(model: Aircraft.self, where: #Predicate { $0.aircraftType == "A320" },
    ///                    set: [.init(\.aircraftClass, "narrow-body")])
    /// ```
    @discardableResult
    public func update<T: PersistentModel>(model: T.Type, where predicate: Predicate<T>? = nil, set changes: [PropertyUpdate<T>]) throws -> Int {
        try checkClass(T.self)
        var values: [(keyPath: String, value: Value)] = []
        for change in changes {
            guard let property = T.schemaMetadata.property(for: change.keyPath) else {
                throw PredicateTranslationError(.unsupportedKeyPath, "\(change.keyPath) is not a persisted property of '\(T.schemaMetadata.entityName)'", model: T.schemaMetadata.entityName)
            }
            switch property.kind {
            case .attribute: values.append((property.name, change.value))
            case .composite(let metadata, let optional, _):
                let leaves = metadata.compositeAttribute(named: property.name, optional: optional).leaves
                for (leaf, value) in zip(leaves, change.leaves) {
                    values.append((([property.name] + leaf.path).joined(separator: "."), value))
                }
            case .relationship:
                throw PredicateTranslationError(.unsupportedKeyPath, "'\(property.name)' is a relationship; a batch update sets attributes only", model: T.schemaMetadata.entityName)
            }
        }
        return try objectContext.batchUpdate(FetchDescriptor<T>(predicate: predicate).fetchRequest(), values: values)
    }
}

/// One assignment of a batch update: a persisted attribute (or composite) of `T` and its new value.
public struct PropertyUpdate<T: PersistentModel> {
    let keyPath: AnyKeyPath
    let value: Value
    let leaves: [Value]

    /// Sets an attribute.
    public init<V: PersistentAttributeValue>(_ keyPath: KeyPath<T, V>, _ value: V) {
        self.keyPath = keyPath
        self.value = value.strataStored
        self.leaves = []
    }

    /// Sets every leaf of a composite.
    public init<V: CompositeAttributeValue>(_ keyPath: KeyPath<T, V>, _ value: V) {
        var writer = CompositeLeafWriter()
        value.strataWriteLeaves(to: &writer)
        self.keyPath = keyPath
        self.value = .null
        self.leaves = writer.values
    }
}
