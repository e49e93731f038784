import Foundation

/// Where a model's values live (SwiftData's backing data): in memory until the model is
/// inserted, then in its context's row storage — the ``ManagedObject`` the string-keyed API
/// sees — read and written by slot. Generated accessors call it; do not use it directly.
public struct ModelBacking {
    /// The row storage, once the model is inserted or fetched.
    var object: ManagedObject?
    /// Slots and relationships by property ordinal, for `object`'s entity.
    var plan: ModelPlan?
    /// Values given before the model was inserted.
    var pending: PendingValues?

    /// Empty storage: a model being initialized fills it through its properties' initializers.
    public init() {}

    init(object: ManagedObject, plan: ModelPlan) {
        self.object = object
        self.plan = plan
    }

    // MARK: - Initial values (before insertion)

    private mutating func pendingValues() -> PendingValues {
        if let pending { return pending }
        let created = PendingValues()
        pending = created
        return created
    }

    /// Records an attribute's initial value.
    public mutating func initialize<V: PersistentAttributeValue>(_ ordinal: Int, _ value: V) {
        if object != nil { setValue(ordinal, value); return }
        pendingValues().set(ordinal, .attribute(value.strataStored))
    }

    /// Records a composite's initial value.
    public mutating func initialize<V: CompositeAttributeValue>(_ ordinal: Int, _ value: V) {
        if object != nil { setValue(ordinal, value); return }
        var writer = CompositeLeafWriter()
        value.strataWriteLeaves(to: &writer)
        pendingValues().set(ordinal, .composite(writer.values))
    }

    /// Records a to-one relationship's initial target.
    public mutating func initialize<M: PersistentModel>(_ ordinal: Int, _ value: M?) {
        if object != nil { setValue(ordinal, value); return }
        pendingValues().set(ordinal, .toOne(value))
    }

    /// Records a to-many relationship's initial targets.
    public mutating func initialize<M: PersistentModel>(_ ordinal: Int, _ value: [M]) {
        if object != nil { setValue(ordinal, value); return }
        pendingValues().set(ordinal, .toMany(value))
    }

    // MARK: - Reading

    /// An attribute's value.
    public func getValue<V: PersistentAttributeValue>(_ ordinal: Int) -> V {
        if let object, let plan {
            return V.strataRead(object.storedValue(atSlot: plan.slots[ordinal]))
        }
        guard case .attribute(let value)? = pending?[ordinal] else { return V.strataFallback }
        return V.strataRead(value)
    }

    /// A composite's value.
    public func getValue<V: CompositeAttributeValue>(_ ordinal: Int) -> V {
        let leaves: [Value]
        if let object, let plan {
            leaves = plan.compositeSlots[ordinal].map { object.storedValue(atSlot: $0) }
        } else if case .composite(let values)? = pending?[ordinal] {
            leaves = values
        } else {
            leaves = Array(repeating: .null, count: V.compositeMetadata.leafCount)
        }
        var reader = CompositeLeafReader(values: leaves)
        return V(strataLeaves: &reader)
    }

    /// A to-one relationship's target (faulted from the store on first use).
    public func getValue<M: PersistentModel>(_ ordinal: Int) -> M? {
        if let object, let plan, let context = object.context?.typedOwner as? ModelContext {
            guard let target = context.relatedObject(of: object, plan.relationshipNames[ordinal]) else { return nil }
            return context.model(for: target, as: M.self)
        }
        guard case .toOne(let target)? = pending?[ordinal] else { return nil }
        return target as? M
    }

    /// A non-optional to-one relationship's target.
    public func getValue<M: PersistentModel>(_ ordinal: Int) -> M {
        let optionalTarget: M? = getValue(ordinal)
        guard let target = optionalTarget else {
            preconditionFailure("the non-optional relationship #\(ordinal) of '\(M.self)''s owner has no target in the store; declare it optional to read such rows")
        }
        return target
    }

    /// A to-many relationship's targets (faulted from the store on first use).
    public func getValue<M: PersistentModel>(_ ordinal: Int) -> [M] {
        if let object, let plan, let context = object.context?.typedOwner as? ModelContext {
            return context.relatedObjects(of: object, plan.relationshipNames[ordinal]).map { context.model(for: $0, as: M.self) }
        }
        guard case .toMany(let targets)? = pending?[ordinal] else { return [] }
        return targets.compactMap { $0 as? M }
    }

    // MARK: - Writing

    // Setters do not mutate the backing itself (values go to the row storage, or to the
    // pending values the initializer created): a setter may run while another access to the
    // same model's backing is in progress (inverse relationships).

    /// Sets an attribute.
    public func setValue<V: PersistentAttributeValue>(_ ordinal: Int, _ value: V) {
        guard let object, let plan else {
            pending?.set(ordinal, .attribute(value.strataStored))
            return
        }
        do { try object.setStoredValue(value.strataStored, atSlot: plan.slots[ordinal]) } catch { preconditionFailure("\(error)") }
    }

    /// Sets a composite (every leaf).
    public func setValue<V: CompositeAttributeValue>(_ ordinal: Int, _ value: V) {
        var writer = CompositeLeafWriter()
        value.strataWriteLeaves(to: &writer)
        guard let object, let plan else {
            pending?.set(ordinal, .composite(writer.values))
            return
        }
        do {
            for (slot, leaf) in zip(plan.compositeSlots[ordinal], writer.values) { try object.setStoredValue(leaf, atSlot: slot) }
        } catch { preconditionFailure("\(error)") }
    }

    /// Sets a to-one relationship; a target not yet inserted is inserted into the same context.
    public func setValue<M: PersistentModel>(_ ordinal: Int, _ value: M?) {
        guard let object, let plan, let context = object.context?.typedOwner as? ModelContext else {
            pending?.set(ordinal, .toOne(value))
            return
        }
        context.setRelated(value, of: object, plan.relationshipNames[ordinal])
    }

    /// Sets a non-optional to-one relationship.
    public func setValue<M: PersistentModel>(_ ordinal: Int, _ value: M) {
        setValue(ordinal, Optional(value))
    }

    /// Sets a to-many relationship's members; targets not yet inserted are inserted.
    public func setValue<M: PersistentModel>(_ ordinal: Int, _ value: [M]) {
        guard let object, let plan, let context = object.context?.typedOwner as? ModelContext else {
            pending?.set(ordinal, .toMany(value))
            return
        }
        context.setRelated(value, of: object, plan.relationshipNames[ordinal])
    }
}

/// The values of a model that was never inserted, by property ordinal.
final class PendingValues {
    enum Entry {
        case attribute(Value)
        case composite([Value])
        case toOne(AnyObject?)
        case toMany([AnyObject])
    }

    /// By ordinal (nil: not given).
    private(set) var values: [Entry?] = []

    func set(_ ordinal: Int, _ entry: Entry) {
        if ordinal >= values.count { values.append(contentsOf: repeatElement(nil, count: ordinal + 1 - values.count)) }
        values[ordinal] = entry
    }

    subscript(_ ordinal: Int) -> Entry? { ordinal < values.count ? values[ordinal] : nil }
}

/// Where each property of a model class lives in its entity's row storage: the slot of an
/// attribute, the slots of a composite's leaves, the name of a relationship. Built once per
/// class per context.
final class ModelPlan {
    let slots: [Int]
    let compositeSlots: [[Int]]
    let relationshipNames: [String]

    init(slots: [Int], compositeSlots: [[Int]], relationshipNames: [String]) {
        self.slots = slots
        self.compositeSlots = compositeSlots
        self.relationshipNames = relationshipNames
    }
}
